"""Modules outside the registries derive factor and probe vocabulary from ``harness.vocab``:
the synthetic generator's levels and probes, planted-interaction's settings and defaults."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from harness.evaluators.reference.items import ScoreContext, ScoreItem
from harness.evaluators.reference.planted import INTERACTION_PAIRS, InteractionShift
from harness.protocol.configurations import BASELINE, C0
from harness.protocol.profiles import get_profile
from harness.stats.synthetic import SyntheticSpec, render_levels, synthetic_records
from harness.vocab.factors import FACTORS, PARAPHRASE, TEMPLATE, factor, rendered_factor_names
from harness.vocab.probes import PROBES, ProbeSpec, probe_names, register_probe

SMALL = SyntheticSpec(evaluators=1, prompt_free=0, generators=2, prompts=2, templates=2, seed=5)


def test_synthetic_levels_and_probes_come_from_the_registries():
    assert list(render_levels()) == list(rendered_factor_names())
    df = synthetic_records(SMALL)
    for name in rendered_factor_names():
        assert tuple(df.loc[df["factor"] == name, "level"].unique()) == factor(name).levels
    assert tuple(df.loc[df["factor"] == "probe", "level"].unique()) == probe_names()
    paraphrases = df.loc[df["factor"] == PARAPHRASE, "level"].unique()
    assert tuple(paraphrases) == factor(PARAPHRASE).levels[: SMALL.paraphrases]
    assert df.loc[df["factor"] == TEMPLATE, "level"].iloc[0] == factor(TEMPLATE).resolved()[1]


def test_synthetic_covers_a_registered_probe():
    before = synthetic_records(SMALL)
    register_probe(ProbeSpec("mirrored_t", edit=lambda scene, rng: scene.objects))
    try:
        after = synthetic_records(SMALL)
    finally:
        PROBES.unregister("mirrored_t")
    added = after.iloc[len(before):]
    assert set(added["factor"]) == {"probe"} and set(added["level"]) == {"mirrored_t"}
    # one evaluator: the new probe's rows come last, after the unchanged ones
    pd.testing.assert_frame_equal(after.iloc[: len(before)], before)


def _offset(cfg, generator="gridded") -> float:
    return InteractionShift().offset(ScoreItem(None, None, "", ScoreContext(generator, cfg)))


def test_planted_interaction_reads_settings_and_defaults_from_the_factor_registry():
    assert all(name in FACTORS for pair in INTERACTION_PAIRS for name in pair)
    c0 = get_profile("default").configuration(BASELINE, C0)
    assert _offset(c0) == 0.0
    pitched = replace(c0, render=replace(c0.render, pitch_deg=90.0))
    assert _offset(pitched) == 0.0  # one factor of the pair off its default
    both = replace(pitched, render=replace(pitched.render, lighting="night"))
    assert _offset(both) == 0.5
    assert _offset(both, "faithful") == -0.5
    other = replace(c0, background="0", render=replace(c0.render, focal_length_mm=85.0))
    assert _offset(other) == 0.5
