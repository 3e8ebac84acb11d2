"""How much work a profile is, and how long it takes: ``t3d-audit plan --estimate``.

Counts (exact, from the plans): renders (the render plan), distinct images (render x
background), and score pairs per image evaluator (distinct image x caption; one per image
for a prompt-free evaluator). Costs (measured on this machine by a quick calibration, or read
from a costs file written by one, with its provenance):

* seconds per render: two renders of the profile's first scene at its c0 settings in one
  Blender process; the second (scene already built) is the marginal cost, the difference is
  the scene build, amortised over the scene's renders. Other resolutions scale with their
  pixel count (first-order: Cycles time is about proportional to pixels x samples).
* seconds per score pair, per evaluator and device: one realistic scene group (the first
  group's distinct images, as many as the plan has, and its captions) scored the way the
  audit scores it (``score_grid`` over the group's images x captions, else pairwise),
  divided by the group's pairs. Images are the calibration render with per-image noise
  (model cost does not depend on content).

CPU-hours are core-hours: measured wall seconds times the cores the calibration used (Cycles
and torch each use every core of the machine unless told otherwise), for renders (CPU Cycles)
plus scoring on CPU. GPU-hours are device-hours of scoring on a GPU, only when a GPU was
measured (here, or in the costs file): an unmeasured cost is reported as such, never guessed.
An evaluator that cannot be measured here (``not_measured``: e.g. open_clip not installed)
is left out of every hour, and the output names it with the reason.
"""

from __future__ import annotations

import math
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.bounded_input import read_json
from harness.core.errors import AuditError
from harness.core.fileio import json_text

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec

COSTS_FORMAT = "t3d-audit-costs/1"


@dataclass(frozen=True)
class PlanCounts:
    """Exact work counts of a profile over a scene set."""

    profile: str
    scenes: int
    renders: int
    renders_per_scene: float
    render_pixels: float  # sum over renders of (res / c0 res)^2 x samples / c0 samples: renders in c0 units
    distinct_images: int
    text_pairs: int  # distinct (image, caption) pairs
    groups: int
    # the c0 the render units are relative to; a calibration at another size is scaled to it
    c0_px: int | None = None
    c0_samples: int | None = None


def plan_counts(profile: object, scene_set: object, view_policy: str = "single") -> tuple[PlanCounts, object]:
    """The counts and the measurement plan (``harness.measure.plan.Plan``) of the audit under
    ``view_policy`` (a multi-view policy renders every view of every configuration)."""
    from harness.measure.plan import build_plan
    from harness.render.job_plan import render_plan

    profile = profile.for_scene_kind(scene_set.kind)
    jobs = render_plan(profile, list(scene_set.scenes), view_policy=view_policy)
    plan = build_plan(scene_set, profile, view_policy=view_policy)
    base = float(profile.c0.resolution_px) ** 2 * float(profile.c0.samples)
    images = {r.image for r in plan.rows if r.image is not None}
    pairs = {(r.image, r.caption) for r in plan.rows if r.image is not None}
    counts = PlanCounts(
        profile=profile.name,
        scenes=len(scene_set.scenes),
        renders=len(jobs),
        renders_per_scene=len(jobs) / max(1, len(scene_set.scenes)),
        render_pixels=sum(float(j.cfg.resolution_px) ** 2 * float(j.cfg.samples) / base for j in jobs),
        distinct_images=len(images),
        text_pairs=len(pairs),
        groups=sum(1 for _ in plan.groups()),
        c0_px=profile.c0.resolution_px,
        c0_samples=profile.c0.samples,
    )
    return counts, plan


def host() -> dict[str, str]:
    """Where a calibration ran (its provenance)."""
    from harness.render.host import cpu_model
    from harness.render.settings import RENDERER_REVISION, blender_version, render_threads

    cores = render_threads() or os.cpu_count() or 1
    return {"cpu_model": cpu_model(), "machine": platform.machine(), "node": platform.node(),
            "cores": str(cores), "blender": blender_version(),
            "renderer_revision": RENDERER_REVISION}  # fmt: skip


def calibrate_render(profile: object, scene_set: object, cache_dir: object = None) -> dict[str, object]:
    """Seconds per render at the profile's c0 on this machine's CPU (see module docstring).
    Renders straight through Blender (no cache), so the time is real."""
    from dataclasses import replace

    from harness.render.blender import get_renderer

    scene = scene_set.scenes[0]
    identity = scene_set.identity(scene.id)
    renderer = get_renderer("cpu")
    c0 = profile.c0
    times = []
    image = None
    for cfg in (c0, replace(c0, yaw_deg=c0.yaw_deg + 90.0)):
        start = time.perf_counter()
        image = renderer.render(scene, scene_set.root, identity, cfg, timeout_s=3600)
        times.append(time.perf_counter() - start)
    return {"first_s": times[0], "marginal_s": times[1], "resolution_px": c0.resolution_px,
            "samples": c0.samples, "scene": scene.id, "_image": image}  # fmt: skip


def calibrate_scoring(spec: EvaluatorSpec, plan: object, image: object, device: str) -> dict[str, object]:
    """Seconds per score pair of ``spec`` on ``device`` for the plan's first scene group."""
    import numpy as np

    from harness.render.composite import composite

    _, rows = next(iter(plan.groups()))
    keys = sorted({r.image for r in rows if r.image is not None}, key=repr)
    caps = sorted({r.caption for r in rows if r.image is not None}) if spec.needs_text else [""]
    pairs = len({(r.image, r.caption) for r in rows if r.image is not None}) if spec.needs_text else len(keys)
    rgb = composite(image, (255, 255, 255))
    rng = np.random.default_rng(0)
    images = [np.clip(rgb.astype(np.int16) + rng.integers(-3, 4, rgb.shape), 0, 255).astype(np.uint8)
              for _ in keys]  # fmt: skip
    evaluator = spec.build(device=device, batch_size=32)
    try:
        warm_n = min(2, len(images))
        if hasattr(evaluator, "score_grid"):
            evaluator.score_grid(images[:warm_n], caps[:2])  # first call: lazy init, kernels
            start = time.perf_counter()
            evaluator.score_grid(images, caps)
        else:  # one caption per image: pairwise scoring pairs images[i] with captions[i]
            evaluator.score(images[:warm_n], [caps[i % len(caps)] for i in range(warm_n)])
            start = time.perf_counter()
            evaluator.score([images[i % len(images)] for i in range(pairs)],
                            [caps[i % len(caps)] for i in range(pairs)])  # fmt: skip
        elapsed = time.perf_counter() - start
    finally:
        if hasattr(evaluator, "close"):
            evaluator.close()
    return {"per_pair_s": elapsed / max(1, pairs), "group_s": elapsed, "group_pairs": pairs,
            "group_images": len(images), "group_captions": len(caps), "device": device}  # fmt: skip


def calibrate(profile: object, scene_set: object, plan: object, specs: list, devices: list[str]) -> dict[str, object]:
    """Measured costs (JSON-ready) with their provenance. An evaluator that cannot be measured
    here (its package is not installed, its weights are missing, its code raises) is listed
    under ``not_measured`` with the reason, never given a cost."""
    render = calibrate_render(profile, scene_set)
    image = render.pop("_image")
    scoring: dict[str, dict[str, object]] = {}
    not_measured: dict[str, str] = {}
    for spec in specs:
        try:
            scoring[spec.id] = {dev: calibrate_scoring(spec, plan, image, dev) for dev in devices}
        except Exception as exc:  # one evaluator's failure is its own, recorded as such
            not_measured[spec.id] = why_not_measured(spec, exc)
    costs = {"format": COSTS_FORMAT, "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "host": host(), "profile": profile.name, "render": render, "scoring": scoring}  # fmt: skip
    if not_measured:
        costs["not_measured"] = not_measured
    return costs


def why_not_measured(spec: EvaluatorSpec, exc: Exception) -> str:
    """One line: why ``spec`` could not be calibrated, and what to do."""
    if isinstance(exc, ImportError):
        from harness.evaluators.families import find_family

        family = find_family(getattr(spec, "adapter", ""))
        extra = family.extra if family is not None else "models"
        return (f"{exc.name or 'a package it needs'} is not installed "
                f"(pip install 't3d-audit[{extra}]', then --recalibrate)")  # fmt: skip
    if isinstance(exc, AuditError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def estimate(counts: PlanCounts, costs: dict[str, object], specs: list) -> dict[str, object]:
    """Hours of work from ``counts`` and measured ``costs`` (see module docstring)."""
    render = costs["render"]
    cores = int(costs.get("host", {}).get("cores", 1))
    build_s = max(0.0, render["first_s"] - render["marginal_s"])
    render_s = counts.render_pixels * render["marginal_s"] * c0_scale(counts, render) + counts.scenes * build_s
    scoring: dict[str, dict[str, float]] = {}
    cpu_score_s, gpu_score_s, gpu_missing, unmeasured = 0.0, 0.0, [], []
    for spec in specs:
        n = counts.text_pairs if spec.needs_text else counts.distinct_images
        measured = costs.get("scoring", {}).get(spec.id, {})
        row = {"pairs": n}
        for dev, m in measured.items():
            gpu_dev = dev.startswith("cuda")
            row[f"{'gpu' if gpu_dev else 'cpu'}_hours"] = n * m["per_pair_s"] * (1 if gpu_dev else cores) / 3600
        gpu = next((m for d, m in measured.items() if d.startswith("cuda")), None)
        cpu = measured.get("cpu")
        if not measured:
            unmeasured.append(spec.id)
        elif gpu is not None:
            gpu_score_s += n * gpu["per_pair_s"]
        else:
            gpu_missing.append(spec.id)
            if cpu is not None:
                cpu_score_s += n * cpu["per_pair_s"]
        scoring[spec.id] = row
    return {
        "renders": counts.renders,
        "distinct_images": counts.distinct_images,
        "score_pairs": sum(r["pairs"] for r in scoring.values()),
        "cores": cores,
        "render_cpu_hours": render_s * cores / 3600,
        "scoring": scoring,
        "cpu_hours": (render_s + cpu_score_s) * cores / 3600,
        "wall_hours_here": (render_s + cpu_score_s) / 3600,
        "gpu_hours": gpu_score_s / 3600 if not gpu_missing else None,
        "gpu_not_measured": gpu_missing,
        # no cost on any device: left out of every hour above (the caller says why)
        "not_measured": unmeasured,
    }


def c0_scale(counts: PlanCounts, render: dict[str, float]) -> float:
    """A c0 render's cost relative to the calibrated one: (c0 px / calibrated px)^2 x (c0
    samples / calibrated samples), first order; 1 when the counts do not say their c0 or the
    calibration was made at it (a calibration on this machine measures the profile's c0)."""
    if counts.c0_px is None or counts.c0_samples is None or not render["resolution_px"] or not render["samples"]:
        return 1.0
    return (counts.c0_px / float(render["resolution_px"])) ** 2 * (counts.c0_samples / float(render["samples"]))


def read_costs(path: str | Path) -> dict[str, object]:
    """A costs file (``--calibrate-out``'s output), checked field by field: a
    :class:`~harness.core.errors.AuditError` naming the file and the field, never a KeyError later."""
    path = Path(path)
    hint = "pass a file written by 't3d-audit plan --estimate --calibrate-out FILE'"
    try:
        costs = read_json(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise AuditError(f"cannot read a costs file: {exc}", where=path, hint=hint) from None

    def fail(field: str, what: str) -> AuditError:
        return AuditError(f"{field}: {what}", where=path, hint=hint)

    def number(value: object, field: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                or value < 0:  # fmt: skip
            raise fail(field, f"must be a non-negative number, got {value!r}")

    if not isinstance(costs, dict):
        raise fail("/", f"must be a JSON object, got {type(costs).__name__}")
    if costs.get("format") != COSTS_FORMAT:
        raise fail("format", f"must be {COSTS_FORMAT!r}, got {costs.get('format')!r}")
    render = costs.get("render")
    if not isinstance(render, dict):
        raise fail("render", "must be an object with first_s, marginal_s, resolution_px, samples")
    for key in ("first_s", "marginal_s", "resolution_px", "samples"):
        number(render.get(key), f"render.{key}")
    host_ = costs.get("host", {})
    if not isinstance(host_, dict):
        raise fail("host", "must be an object")
    if "cores" in host_:
        cores = host_["cores"]
        if not (isinstance(cores, int | str) and str(cores).isdigit() and int(cores) >= 1):
            raise fail("host.cores", f"must be a positive integer, got {cores!r}")
    scoring = costs.get("scoring", {})
    if not isinstance(scoring, dict):
        raise fail("scoring", "must be an object {evaluator: {device: {per_pair_s: ...}}}")
    for evaluator, devices in scoring.items():
        if not isinstance(devices, dict):
            raise fail(f"scoring.{evaluator}", "must be an object {device: {per_pair_s: ...}}")
        for dev, measured in devices.items():
            if not isinstance(measured, dict):
                raise fail(f"scoring.{evaluator}.{dev}", "must be an object with per_pair_s")
            number(measured.get("per_pair_s"), f"scoring.{evaluator}.{dev}.per_pair_s")
    not_measured = costs.get("not_measured", {})
    if not isinstance(not_measured, dict) or not all(
        isinstance(v, str) for v in not_measured.values()
    ):
        raise fail("not_measured", "must be an object {evaluator: reason}")
    return costs


def public(costs: dict[str, object]) -> str:
    """A costs record as the JSON text of a costs file."""
    return json_text(costs)
