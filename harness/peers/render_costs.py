"""The renders of protocol presets and presentation probes, and what they cost.

An audit under ``preset:NAME`` runs the four presentation probes around the preset
(:func:`harness.peers.audit_probes.presentation_check`): each scores the scenes under two
presentations at the preset's own resolution and sample count, outside the audit's plan and so
outside the warm step. ``concordance`` and ``reproduce`` (``plan --presets``) render every named
preset, and ``--probes`` the probes around the first. :func:`protocol_batches` counts those
renders exactly (one row per scene and protocol, :func:`harness.peers.measure.preset_plan`; a
render an earlier batch or the audit's plan already has is not counted again) and
:func:`batch_seconds` prices them from a calibration: seconds per render at the calibration's
size, scaled by pixels x samples (first order: Cycles' time is about proportional to both).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.protocol.configurations import RenderConfig
    from harness.protocol.presets import Protocol
    from harness.scenes.sceneset import SceneSet


@dataclass(frozen=True)
class RenderBatch:
    """The new renders of one protocol over a scene set (``renders`` of ``listed`` planned:
    the rest an earlier batch or the audit's plan already has)."""

    label: str  # e.g. "preset 3dcodebench", "probe untextured"
    protocol: str  # the protocol's name, e.g. "3dcodebench~untextured=changed"
    renders: int
    listed: int
    resolution_px: int
    samples: int
    keys: tuple[tuple[str, RenderConfig], ...] = ()  # the new renders: (scene id, render config)


def protocol_batches(
    scene_set: SceneSet,
    protocols: Sequence[tuple[str, Protocol]],
    seen: Iterable[tuple[str, RenderConfig]] = (),
) -> list[RenderBatch]:
    """One batch per ``(label, protocol)``, in order, over every scene of ``scene_set``; a
    (scene, render config) pair in ``seen`` (e.g. the audit plan's ``renders``) or in an
    earlier batch is not counted again."""
    from harness.peers.measure import preset_plan

    known = set(seen)
    batches = []
    for label, protocol in protocols:
        plan = preset_plan(scene_set, protocol, None)
        keys = [(v.scene, v.render) for row in plan.rows if row.image is not None for v in row.image.view_keys()]
        listed = dict.fromkeys(keys)  # plan order, each once
        new = tuple(k for k in listed if k not in known)
        known |= set(listed)
        batches.append(RenderBatch(label, protocol.name, len(new), len(listed), protocol.resolution_px,
                                   protocol.samples, new))  # fmt: skip
    return batches


def audit_probe_protocols(view_policy: str) -> list[tuple[str, Protocol]]:
    """The protocols the presentation probes of an audit under ``view_policy`` score (none
    unless it is ``preset:NAME``), labelled ``probe NAME``."""
    from harness.peers.audit_probes import PRESET_PREFIX, applicable_probes
    from harness.peers.presentation_probes import parse_probes
    from harness.protocol.presets import get_preset

    names = applicable_probes(view_policy)
    if not names:
        return []
    preset = get_preset(view_policy.removeprefix(PRESET_PREFIX))
    return [(f"probe {probe.name}", q) for probe in parse_probes(",".join(names)) for q in probe.protocols(preset)]


def study_protocols(presets: Sequence[Protocol], probes: str | None) -> list[tuple[str, Protocol]]:
    """What ``concordance --presets ... [--probes ...]`` scores: each preset, then the probes'
    protocols around the first."""
    from harness.peers.presentation_probes import parse_probes

    out: list[tuple[str, Protocol]] = [("preset", p) for p in presets]
    if probes is not None and presets:
        out += [(f"probe {probe.name}", q) for probe in parse_probes(probes) for q in probe.protocols(presets[0])]
    return out


def batch_seconds(batch: RenderBatch, render_costs: dict[str, float]) -> float:
    """Estimated seconds of ``batch`` on the calibrated machine: its renders x the marginal
    seconds per render (``render_costs``: a costs file's ``render`` object) scaled by
    (resolution / calibrated resolution)^2 x (samples / calibrated samples)."""
    px = float(render_costs["resolution_px"]) or 1.0
    samples = float(render_costs["samples"]) or 1.0
    scale = (batch.resolution_px / px) ** 2 * (batch.samples / samples)
    return batch.renders * float(render_costs["marginal_s"]) * scale
