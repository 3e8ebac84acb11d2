"""Where a render's time goes, and what the default profile's render phase should cost.

    python benchmarks/bench_render_cost.py [--scene fixtures/scenes/faithful/bedroom-01.json]

One process, one Cycles thread (``T3D_AUDIT_RENDER_THREADS=1``), one bundled scene built once:

1. c0 (224 px) at 1, 4, 8 and 16 samples: the time is linear in samples (a fixed part plus a
   per-sample part), which is why the default profile renders c0 at 8 samples.
2. Every distinct render configuration of the default profile once, at its own samples:
   mean seconds per render, and the render phase of the main job this predicts for its
   plan (renders × mean / cores, scene builds not included).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DEFAULT_SCENE = REPO / "fixtures" / "scenes" / "faithful" / "bedroom-01.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", type=Path, default=DEFAULT_SCENE)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    from harness.render.settings import THREADS_ENV

    os.environ[THREADS_ENV] = "1"
    from harness.measure.plan import build_plan
    from harness.protocol.profiles import get_profile
    from harness.render.blender import get_renderer
    from harness.render.scene_inputs import load_scene_file
    from harness.scenes.model import scene_identity
    from harness.scenes.scene_source import load_scene_set

    scene, root = load_scene_file(args.scene)
    identity = scene_identity(scene, root)
    profile = get_profile("default")
    renderer = get_renderer("cpu")
    t = time.perf_counter()
    renderer.render(scene, root, identity, replace(profile.c0, resolution_px=64, samples=1))
    print(f"scene build + first render: {time.perf_counter() - t:.2f} s")

    def timed(cfg) -> float:
        renderer.render(scene, root, identity, cfg)  # state change and re-sync excluded
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            renderer.render(scene, root, identity, cfg)
            best = min(best, time.perf_counter() - t0)
        return best

    print("\nc0 at 224 px, one thread:")
    points = []
    for samples in (1, 4, 8, 16):
        s = timed(replace(profile.c0, samples=samples))
        points.append((samples, s))
        print(f"  {samples:2d} samples: {s:.2f} s")
    (x0, y0), (x1, y1) = points[0], points[-1]
    slope = (y1 - y0) / (x1 - x0)
    print(f"  ≈ {y0 - slope * x0:.2f} s + {slope:.3f} s per sample")

    print("\nevery default-profile render config once (first render after each change):")
    times = []
    for cfg in profile.render_configs():
        t0 = time.perf_counter()
        renderer.render(scene, root, identity, cfg)
        times.append(time.perf_counter() - t0)
    mean = statistics.fmean(times)
    scenes = load_scene_set(None).select(profile.prompts, profile.generators)
    n_renders = len(build_plan(scenes, profile).renders)
    cores = os.cpu_count() or 1
    print(f"  {len(times)} configs: mean {mean:.2f} s, min {min(times):.2f}, max {max(times):.2f}")
    print(f"  main job: {n_renders} renders × {mean:.2f} s / {cores} cores ≈ "
          f"{n_renders * mean / cores / 60:.1f} min of rendering (scene builds excluded)")  # fmt: skip


if __name__ == "__main__":
    main()
