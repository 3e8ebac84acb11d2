"""The presentation probes inside an audit under a protocol preset.

``audit_tests/test_presentation.py`` asks, per evaluator and probe, for
:func:`presentation_check`: the preset's two presentations (``presentation_probes.PROBES``)
scored over the run's scenes with the run's renderer, score cache, template, bootstrap and seed,
and the *presentation agreement* with its prompt-bootstrap interval. The threshold is the run's
``min_presentation_agreement`` (registry default, ``[tool.t3d-audit.thresholds]`` override).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.core.errors import ProtocolError
from harness.peers.presentation_probes import (
    ProbeResult,
    parse_probes,
    probe_names,
    probe_result,
)

if TYPE_CHECKING:
    from harness.core.progress import Progress
    from harness.protocol.presets import Protocol

PRESET_PREFIX = "preset:"


def applicable_probes(view_policy: str) -> tuple[str, ...]:
    """The probes an audit under ``view_policy`` checks: all of them under ``preset:NAME``,
    none otherwise (the check is then not collected, so other runs' reports do not move)."""
    return probe_names() if str(view_policy).startswith(PRESET_PREFIX) else ()


def presentation_check(inputs: object, evaluator_id: str, probe_name: str, threshold: float | None,
                       announce: Callable[[str], None] | None = None) -> ProbeResult:  # fmt: skip
    """``probe_name``'s agreement for ``evaluator_id`` around the run's preset;
    ``inputs``: the run's inputs (``harness.run.inputs.RunInputs``: options, specs, scenes, renderer).
    An image evaluator's probe renders at the preset's own size, outside the audit's plan
    (and so outside the warm step): ``announce`` gets a line when it starts and plain progress
    lines of its renders (:func:`harness.core.progress.progress`)."""
    from harness.measure.images import measurement_kind
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
    spec = inputs.specs[evaluator_id]
    progress_of = None
    if announce is not None and measurement_kind(spec) == "image":
        announce(probe_line(evaluator_id, probe.name, protocols, len(inputs.scene_set.scenes)))
        progress_of = probe_progress(evaluator_id, announce)
    table = score_protocols(spec, inputs.scene_set, protocols,
                            template=inputs.profile.c0_template, cache_dir=inputs.options.cache_dir,
                            renderer=inputs.renderer, progress_of=progress_of)  # fmt: skip
    names = tuple(q.name for q in protocols)
    scores, _generators, prompts = score_array(table, names)
    draws = int(inputs.bootstrap)
    weights = prompt_weights(len(prompts), draws, inputs.seed) if draws > 0 else None
    return probe_result(probe, scores[0], scores[1], weights, threshold=threshold)


def probe_line(evaluator_id: str, probe_name: str, protocols: tuple[Protocol, Protocol], scenes: int) -> str:
    """The line a presentation probe of an image evaluator starts with: what it renders, at
    what size (the preset's own: not the profile's c0, and not in the warm step's plan)."""
    sizes = sorted({(p.resolution_px, p.samples) for p in protocols})
    size = ", ".join(f"{px} px, {samples} samples" for px, samples in sizes)
    return (f"t3d-audit: presentation probe {probe_name} for {evaluator_id}: {scenes} scenes under "
            f"{' and '.join(p.name for p in protocols)} ({size}; renders missing from the render "
            "cache are rendered now; this can take minutes)")  # fmt: skip


def probe_progress(evaluator_id: str, announce: Callable[[str], None]) -> Callable[[Protocol, int], Progress]:
    """The plain progress lines of each protocol's renders, through ``announce``."""
    from harness.core.progress import progress

    def of(protocol: Protocol, total: int) -> Progress:
        return progress(total, verb="fetched", unit="render", write=announce,
                        label=f"t3d-audit: measuring {evaluator_id} under {protocol.name}")  # fmt: skip

    return of
