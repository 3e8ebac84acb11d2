"""A render factor with 3 levels, a probe and an evaluator family, each added the documented
way (docs/vocabulary.md), in one project module, and each found where the audit reads it.

The project module is written to a temporary folder outside ``harness/`` and imported by the
fixture, as a project's ``conftest.py`` would import it: it is the one file the additions need
(the second, for a built-in, is the harness file that holds the code the row names). Every test
runs inside its own scope of every registry (``tests/conftest.py``), so the names are gone when
the test ends, on every xdist worker. The names are picked so that no doc mentions them.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap

import pytest

from harness.core.paths import REPO_ROOT

FACTOR = "grain_ev_xt"
LEVELS = ("low", "mid", "high")
PROBE = "swap_pairs_xt"
ADAPTER = "edge_energy_xt"
EVALUATOR = "edge-energy-xt-1"
MODULE = "t3d_extension_points_xt"

PROJECT_MODULE = textwrap.dedent(
    f'''
    """A project's own vocabulary: a render factor, a probe and an evaluator family."""
    from dataclasses import replace

    from harness.evaluators.families import Family, register_family
    from harness.vocab.factors import FactorSpec, on_render, register_factor
    from harness.vocab.probes import ProbeSpec, register_probe

    apply, setting = on_render("{FACTOR}", "mid")
    register_factor(FactorSpec("{FACTOR}", "render", apply, setting, levels={LEVELS!r},
                               default="mid", label="Grain", short="Grain"))


    def swap_pairs(scene, rng):
        """Neighbouring objects swap places (the first with the second, ...)."""
        objs = list(scene.objects)
        moved = list(objs)
        for i in range(0, len(objs) - 1, 2):
            a, b = objs[i], objs[i + 1]
            moved[i] = replace(a, position=b.position)
            moved[i + 1] = replace(b, position=a.position)
        return tuple(moved)


    register_probe(ProbeSpec("{PROBE}", edit="{MODULE}:swap_pairs",
                             threshold="min_scramble_discrimination", multi_object=True,
                             label="Swapped pairs"))


    def specs():
        from harness.evaluators.base import EvaluatorSpec

        return [EvaluatorSpec(id="{EVALUATOR}", family="Edge energy", adapter="{ADAPTER}",
                              model_name="edge energy", checkpoint="v1", preprocessing="none",
                              score_scale="edge energy; [0, 1]", needs_text=False,
                              score_range=(0.0, 1.0))]


    def build(spec, *, device="cpu", batch_size=1):
        raise NotImplementedError("listing and selection never build it")


    register_family(Family("{ADAPTER}", build="{MODULE}:build", role="quality", specs=specs))
    '''
)


@pytest.fixture
def extension(tmp_path, monkeypatch):
    """The project module imported from a folder outside the harness (registering all three);
    the registries are put back by the suite's per-test scope."""
    (tmp_path / f"{MODULE}.py").write_text(PROJECT_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(MODULE, None)
    module = importlib.import_module(MODULE)
    assert "harness" not in module.__file__
    yield module
    sys.modules.pop(MODULE, None)


def test_the_names_are_in_no_doc():
    texts = [p.read_text(encoding="utf-8") for p in (REPO_ROOT / "docs").rglob("*.md")]
    texts.append((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    for name in (FACTOR, PROBE, ADAPTER, EVALUATOR):
        assert not any(name in text for text in texts), name


def test_registration_is_one_module_and_ends_with_the_test(extension):
    from harness.evaluators import registry
    from harness.evaluators.families import FAMILIES
    from harness.vocab.factors import FACTORS
    from harness.vocab.probes import PROBES

    files = {FACTORS.get(FACTOR).apply.__code__.co_filename,  # on_render's closure: the vocabulary
             PROBES.get(PROBE).editor().__code__.co_filename,
             FAMILIES.get(ADAPTER).builder().__code__.co_filename}
    assert extension.__file__ in files and all("harness" not in f or "vocab" in f for f in files)
    assert registry.get(EVALUATOR).adapter == ADAPTER


def test_unregistered_outside_the_fixture():
    from harness.evaluators import registry
    from harness.evaluators.families import FAMILIES
    from harness.vocab.factors import FACTORS
    from harness.vocab.probes import PROBES

    assert FACTOR not in FACTORS and PROBE not in PROBES and ADAPTER not in FAMILIES
    assert EVALUATOR not in {s.id for s in registry.all_specs()}


def test_the_factor_reaches_profile_configurations_and_plan(extension, tmp_path):
    from harness.measure.plan import build_plan
    from harness.protocol import configurations as protocol
    from harness.protocol.levels import check_level
    from harness.protocol.profiles import _parse_profile
    from harness.scenes.sceneset import SceneSet
    from harness.testing import write_tiny_scene_set

    assert FACTOR in protocol.factors() and protocol.record_factors()[-2:] == (FACTOR, "probe")
    check_level(FACTOR, "high")
    with pytest.raises(Exception, match="unknown level"):
        check_level(FACTOR, "max")
    profile = _parse_profile("xt", {"c0": {"resolution_px": 224, "samples": 1}, "prompts": 1,
                                    "levels": {FACTOR: "all"}, "probes": [PROBE]})
    assert profile.levels[FACTOR] == LEVELS
    configs = {c.id: c for c in profile.configurations()}
    base = configs["baseline"].render
    assert configs[f"{FACTOR}=mid"].render == base and base.extras == ()
    assert configs[f"{FACTOR}=high"].render.extra(FACTOR, "mid") == "high"
    assert len({configs[f"{FACTOR}={lv}"].render.key for lv in LEVELS}) == 3
    plan = build_plan(SceneSet.load(write_tiny_scene_set(tmp_path / "scenes")), profile)
    assert {r.level for r in plan.rows if r.factor == FACTOR} == set(LEVELS)
    assert any(r.factor == "probe" and r.level == PROBE for r in plan.rows)


def test_the_probe_edits_a_scene(extension, tmp_path):
    from harness.scenes import probe_edits
    from harness.scenes.sceneset import SceneSet
    from harness.testing import write_tiny_scene_set
    from harness.vocab.probes import probe_names, probe_threshold

    assert probe_names()[-1] == PROBE and probe_threshold(PROBE) == "min_scramble_discrimination"
    scene_set = SceneSet.load(write_tiny_scene_set(tmp_path / "scenes"))
    scene = next(s for s in scene_set.scenes if len(s.objects) > 1)
    edited = probe_edits.apply(scene, PROBE, seed=0)
    first, second = scene.objects[:2]
    assert edited.objects[0].position == second.position and edited.objects[1].position == first.position
    assert edited.objects[0].id == first.id


def test_statistics_and_card_carry_the_factor_and_the_probe(extension):
    from harness.cards import build_card, validate_card
    from harness.stats.audit_stats import compute_audit, summary_with_intervals
    from harness.stats.synthetic import SyntheticSpec, synthetic_records
    from tests._card_inputs import base_inputs

    records = synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, generators=3, prompts=4,
                                              templates=2, paraphrases=2))
    assert set(LEVELS) <= set(records.loc[records["factor"] == FACTOR, "level"])
    assert PROBE in set(records.loc[records["factor"] == "probe", "level"])
    summary = summary_with_intervals(compute_audit(records, bootstrap=20))
    stats = next(iter(summary["evaluators"].values()))
    assert FACTOR in stats["rho"] and FACTOR in stats["kendall_w"]
    assert PROBE in json.dumps(stats)
    inputs = base_inputs()
    inputs["stats"] = stats
    card = build_card(**inputs)
    validate_card(card)
    assert FACTOR in json.dumps(card) and PROBE in json.dumps(card)


def test_the_family_is_listed_and_selectable(extension, capsys):
    from harness.cli import main
    from harness.evaluators.families import has_role

    assert main(["evaluators", "edge-energy-xt-*"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == [EVALUATOR]
    assert main(["evaluators", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    rows = listed if isinstance(listed, list) else listed.get("evaluators", listed)
    assert EVALUATOR in json.dumps(rows)
    from harness.evaluators import registry

    assert has_role(registry.get(EVALUATOR), "quality")


def test_the_compare_goldens_do_not_move(extension):
    from tests._compare_covered import assert_golden_unchanged

    assert_golden_unchanged()

