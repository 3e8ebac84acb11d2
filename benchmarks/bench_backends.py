"""A slice of the ``paper`` profile through the three ways work runs: inline (this process),
the Slurm backend on submitit's ``local`` executor (2 workers) and the Ray backend (2 actors
on a private ``ray.init``), each into its own fresh ``file://`` store on the same cores.

The slice is the first ``--fraction`` of the paper plan's scenes (whole scene groups, as the
shards cut them; default 1/20: 15 of 300 scenes, 585 renders) with every render's resolution
scaled by ``--resolution / 512`` and ``--samples`` samples (default the study's 512 px and
32 samples: hours on 2 cores; pass smaller values for a run of minutes). Scoring: the slice's
distinct images (each stored render over white) against the slice's captions with
``--evaluator`` (default ``ref-vit-clip``; ``none`` skips it), in process, in 2 Slurm jobs, and
on a Ray scoring actor.

Prints each backend's wall time, seconds per render and its per-render overhead against
inline (``(backend wall - inline wall) / renders``, both on the same cores, worker start-up
included), and whether the three backends' results are identical: every render's PNG bytes
and every score.

    python benchmarks/bench_backends.py [--fraction 0.05] [--resolution 512] [--samples 32]
        [--evaluator ref-vit-clip] [--workers 2]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from dataclasses import replace
from pathlib import Path


def slice_requests(fraction: float, resolution: int, samples: int) -> tuple[list, list[str]]:
    """The slice's render requests (plan order) and its captions."""
    from harness.commands.warm import audit_requests
    from harness.measure.plan import build_plan
    from harness.protocol.profiles import get_profile
    from harness.render.scene_inputs import load_profile_scenes

    profile = get_profile("paper")
    sset = load_profile_scenes(profile)
    profile = profile.for_scene_kind(sset.kind)
    requests, _ = audit_requests(sset, profile, "single")
    plan = build_plan(sset, profile)
    groups = [g for g, _ in plan.groups()]
    keep = set(groups[: max(1, math.ceil(fraction * len(groups)))])
    scale = resolution / profile.c0.resolution_px
    out = []
    for r in requests:
        if r.scene.id.split("~")[0] in keep:
            cfg = replace(r.cfg, resolution_px=max(16, round(r.cfg.resolution_px * scale)), samples=samples)
            out.append(replace(r, cfg=cfg))
    captions = sorted({row.caption for row in plan.rows if row.group in keep and row.image is not None})
    return out, captions


def stored_images(url: str) -> dict[str, bytes]:
    from harness.store import open_store

    store = open_store(url)
    return {k.split("/")[-2]: store.read(k) for k in store.list("renders/objects") if k.endswith("/image.png")}


def rgb_images(pngs: dict[str, bytes]) -> list:
    """The stored renders over white, in key order (what an evaluator sees)."""
    import io

    import numpy as np
    from PIL import Image

    from harness.render.composite import composite

    out = []
    for key in sorted(pngs):
        rgba = np.asarray(Image.open(io.BytesIO(pngs[key])).convert("RGBA"))
        out.append(composite(rgba, (255, 255, 255)))
    return out


class ScoreImages:
    """A Slurm job body: score ``images`` x ``captions`` with evaluator ``evaluator_id``."""

    def __call__(self, evaluator_id: str, images: list, captions: list):
        return score_grid(evaluator_id, images, captions)


def score_grid(evaluator_id: str, images: list, captions: list, evaluator=None):
    import numpy as np

    from harness.run.evaluator_selection import select_evaluators

    if evaluator is None:
        (spec,) = select_evaluators([evaluator_id])
        evaluator = spec.build(device="cpu", batch_size=32)
    return np.asarray(evaluator.score_grid(images, captions), dtype=np.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fraction", type=float, default=0.05, help="share of the paper scenes (default 1/20)")
    parser.add_argument("--resolution", type=int, default=512, help="c0 pixels (default 512; levels scale with it)")
    parser.add_argument("--samples", type=int, default=32, help="Cycles samples (default 32)")
    parser.add_argument("--evaluator", default="ref-vit-clip", help="an embedding evaluator, or none")
    parser.add_argument("--workers", type=int, default=2, help="Slurm jobs / Ray actors at once (default 2)")
    args = parser.parse_args()

    import numpy as np
    import ray

    from harness.backends.ray.render import warm_ray
    from harness.backends.ray.score import ray_evaluator_loader
    from harness.backends.slurm.jobs import run_shards
    from harness.backends.slurm.options import SlurmOptions
    from harness.backends.slurm.render import warm_slurm
    from harness.render.cache_warmer import warm
    from harness.run.evaluator_selection import select_evaluators

    requests, captions = slice_requests(args.fraction, args.resolution, args.samples)
    scenes = len({r.scene.id.split("~")[0] for r in requests})
    print(f"slice: {len(requests)} renders of {scenes} paper scenes (fraction {args.fraction:g}) at "
          f"c0 {args.resolution} px, {args.samples} samples; {args.workers} workers", flush=True)  # fmt: skip
    walls: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        urls = {b: (root / b).as_uri() for b in ("inline", "slurm", "ray")}
        t = time.perf_counter()
        res = warm(requests, urls["inline"], jobs=1)
        walls["inline"] = time.perf_counter() - t
        print(f"  inline: {walls['inline']:.1f} s ({res.rendered} rendered, {len(res.failures)} failed)", flush=True)
        options = SlurmOptions(executor="local", array_parallelism=args.workers, cpus_per_task=1,
                               shard_size=math.ceil(len(requests) / args.workers), folder=str(root / "jobs"))  # fmt: skip
        t = time.perf_counter()
        res = warm_slurm(requests, urls["slurm"], options=options)
        walls["slurm"] = time.perf_counter() - t
        print(f"  slurm (local executor): {walls['slurm']:.1f} s ({res.rendered} rendered, "
              f"{len(res.failures)} failed, {res.shards} shards)", flush=True)  # fmt: skip
        t = time.perf_counter()
        ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
        res = warm_ray(requests, urls["ray"], actors=args.workers)
        walls["ray"] = time.perf_counter() - t
        print(f"  ray: {walls['ray']:.1f} s with its start ({res.rendered} rendered, {len(res.failures)} failed)",
              flush=True)  # fmt: skip
        pngs = {b: stored_images(u) for b, u in urls.items()}
        n = len(pngs["inline"])  # distinct renders (a plan can list one twice)
        print(f"renders: {n} distinct")
        for b in ("inline", "slurm", "ray"):
            over = "" if b == "inline" else f", overhead {(walls[b] - walls['inline']) / n:+.3f} s/render vs inline"
            print(f"  {b:<7} {walls[b]:8.1f} s  {walls[b] / n:.3f} s/render{over}")
        same_renders = pngs["inline"] == pngs["slurm"] == pngs["ray"]
        print(f"renders byte-identical across backends: {same_renders} "
              f"({', '.join(f'{b} {len(p)}' for b, p in pngs.items())} stored)")

        if args.evaluator != "none":
            images = rgb_images(pngs["inline"])
            scores: dict[str, np.ndarray] = {}
            score_walls: dict[str, float] = {}
            t = time.perf_counter()
            scores["inline"] = score_grid(args.evaluator, images, captions)
            score_walls["inline"] = time.perf_counter() - t
            half = math.ceil(len(images) / args.workers)
            parts = {i: (args.evaluator, images[i * half:(i + 1) * half], captions) for i in range(args.workers)}
            t = time.perf_counter()
            run = run_shards(replace(options, shard_size=0), "t3d-bench-score", ScoreImages(), parts)
            score_walls["slurm"] = time.perf_counter() - t
            scores["slurm"] = np.concatenate([run.results[i] for i in sorted(run.results)])
            (spec,) = select_evaluators([args.evaluator])
            t = time.perf_counter()
            proxy = ray_evaluator_loader(ray, device="cpu")(spec)
            scores["ray"] = score_grid(args.evaluator, images, captions, evaluator=proxy)
            proxy.close()
            score_walls["ray"] = time.perf_counter() - t
            pairs = len(images) * len(captions)
            print(f"scores: {len(images)} images x {len(captions)} captions = {pairs} pairs, {args.evaluator}")
            for b in ("inline", "slurm", "ray"):
                print(f"  {b:<7} {score_walls[b]:8.1f} s (model load included)")
            same_scores = all(np.array_equal(scores["inline"], scores[b]) for b in ("slurm", "ray"))
            print(f"scores identical across backends: {same_scores}")
        ray.shutdown()


if __name__ == "__main__":
    main()
