"""The presentation probes inside an audit under a protocol preset.

``audit_tests/test_presentation.py`` asks, per evaluator and probe, for
:func:`presentation_check`: the preset's two presentations (``presentation_probes.PROBES``)
scored over the run's scenes with the run's renderer, score cache, template, bootstrap and seed,
and the *presentation agreement* with its prompt-bootstrap interval. The threshold is the run's
``min_presentation_agreement`` (registry default, ``[tool.t3d-audit.thresholds]`` override).
"""

from __future__ import annotations

from harness.core.errors import ProtocolError
from harness.peers.presentation_probes import (
    ProbeResult,
    parse_probes,
    probe_names,
    probe_result,
)

PRESET_PREFIX = "preset:"


def applicable_probes(view_policy: str) -> tuple[str, ...]:
    """The probes an audit under ``view_policy`` checks: all of them under ``preset:NAME``,
    none otherwise (the check is then not collected, so other runs' reports do not move)."""
    return probe_names() if str(view_policy).startswith(PRESET_PREFIX) else ()


def presentation_check(inputs: object, evaluator_id: str, probe_name: str, threshold: float | None) -> ProbeResult:
    """``probe_name``'s agreement for ``evaluator_id`` around the run's preset;
    ``inputs``: the run's inputs (``harness.run.inputs.RunInputs``: options, specs, scenes, renderer)."""
    from harness.peers.measure import score_protocols
    from harness.peers.rank_concordance import score_array
    from harness.protocol.presets import get_preset
    from harness.stats.bootstrap import prompt_weights

    policy = str(inputs.options.view_policy)
    if not policy.startswith(PRESET_PREFIX):
        raise ProtocolError(f"presentation probes need an audit under a preset, got view policy {policy!r}",
                            hint="run with --audit-view-policy=preset:NAME")  # fmt: skip
    (probe,) = parse_probes(probe_name)
    protocols = probe.protocols(get_preset(policy.removeprefix(PRESET_PREFIX)))
    table = score_protocols(inputs.specs[evaluator_id], inputs.scene_set, protocols,
                            template=inputs.profile.c0_template, cache_dir=inputs.options.cache_dir,
                            renderer=inputs.renderer)  # fmt: skip
    names = tuple(q.name for q in protocols)
    scores, _generators, prompts = score_array(table, names)
    draws = int(inputs.bootstrap)
    weights = prompt_weights(len(prompts), draws, inputs.seed) if draws > 0 else None
    return probe_result(probe, scores[0], scores[1], weights, threshold=threshold)
