"""The render plan: the distinct (scene, render config) pairs a profile needs.

Background levels are composited onto the c0 render, caption levels reuse it, and levels
equal to the default (e.g. ``resolution=512`` in the paper profile) render nothing new;
``yaw=0`` (swept at 45° pitch) is the same render as ``pitch=45``. Probe scenes are rendered
at c0. For the paper profile that is 39 renders per scene: 1 c0 + 8 resolution + 6 focal
length + 7 lighting + 6 pitch + 7 yaw + 4 probes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.protocol.configurations import RenderConfig
from harness.protocol.profiles import Profile
from harness.protocol.view_policies import DEFAULT_VIEW_POLICY
from harness.scenes.model import Scene

ProbeFn = Callable[[Scene, str], "Scene | None"]


@dataclass(frozen=True)
class RenderJob:
    """One render: scene ``scene_id`` (edited by ``probe`` when set) under ``cfg``."""

    scene_id: str
    cfg: RenderConfig
    probe: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"scene_id": self.scene_id, "probe": self.probe, "render": self.cfg.to_dict()}


def render_plan(
    profile: Profile,
    scenes: Sequence[Scene],
    probe_fn: ProbeFn | None = None,
    view_policy: str = DEFAULT_VIEW_POLICY,
) -> list[RenderJob]:
    """Distinct render jobs of ``profile`` over ``scenes``, grouped by scene, c0 first.

    ``probe_fn(scene, probe)`` (optional) returns the probe-edited scene, or ``None`` when the
    probe does not apply to that scene (its job is then left out); without it every probe of
    the profile is planned. Errors raised by ``probe_fn`` propagate. ``view_policy``
    (``harness.protocol.view_policies.VIEW_POLICIES``): a multi-view policy plans every view of every
    configuration and probe (``harness.protocol.view_policies.policy_views``), each distinct render once.
    """
    configs = profile.render_configs(view_policy)  # c0 first; equal RenderConfigs merged
    jobs: list[RenderJob] = []
    seen: set[RenderJob] = set()
    for scene in scenes:
        planned = [RenderJob(scene.id, cfg) for cfg in configs]
        for probe in profile.probes:
            if probe_fn is None or probe_fn(scene, probe) is not None:
                planned.extend(
                    RenderJob(scene.id, view, probe) for view in profile.probe_renders(view_policy)
                )
        for job in planned:
            if job not in seen:
                seen.add(job)
                jobs.append(job)
    return jobs


def per_scene_counts(jobs: Sequence[RenderJob]) -> dict[str, int]:
    """Number of planned renders per scene id, in plan order."""
    return dict(Counter(j.scene_id for j in jobs))


def plan_summary(
    profile: Profile, jobs: Sequence[RenderJob], view_policy: str = DEFAULT_VIEW_POLICY
) -> dict[str, object]:
    """JSON-ready summary: profile, totals and the per-scene counts (plus the view policy
    when it is not ``single``)."""
    counts = per_scene_counts(jobs)
    out = {
        "profile": profile.name,
        "scenes": len(counts),
        "renders": len(jobs),
        "per_scene": counts,
        "configs_per_scene": len(profile.render_configs(view_policy)),
        "probes": list(profile.probes),
    }
    if view_policy != DEFAULT_VIEW_POLICY:
        out["view_policy"] = view_policy
    return out
