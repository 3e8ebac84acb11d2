"""Smoke warm on a local Ray cluster vs the local backend, on the same cores.

Renders the smoke plan (or its first ``--prompts N`` prompts) twice into fresh caches: with
the local backend (``--jobs`` processes) and with the Ray backend (``ray.init(num_cpus=N)``,
``--jobs`` render actors of one CPU each, a ``file://`` store). The machine is shared, so its
load drifts: the plan is cut into ``--rounds`` chunks of whole scenes, and each chunk is
rendered by both backends in alternating order (local first in even rounds, Ray first in odd
ones); each backend's time is the sum over its chunks, worker start-up included on both
sides. Prints both wall times, their ratio (Ray / local; target <= 1.15), Ray's cluster
start-up separately, and whether every render is byte-identical between the two. Then prints the paper estimate
(``t3d-audit plan --profile paper --estimate``, from this machine's cached calibration or a
fresh one).

    python benchmarks/bench_ray.py [--prompts 1] [--jobs 2] [--no-estimate]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path


def _requests(prompts: int | None):
    from harness.protocol.profiles import get_profile
    from harness.render.cache_warmer import resolve_jobs
    from harness.render.job_plan import render_plan
    from harness.render.scene_inputs import apply_probe, load_profile_scenes

    profile = get_profile("smoke")
    if prompts is not None:
        profile = replace(profile, prompts=prompts)
    sset = load_profile_scenes(profile)
    jobs = render_plan(profile, list(sset.scenes))
    requests, failed = resolve_jobs(jobs, list(sset.scenes), sset.root, probe_fn=apply_probe)
    return requests, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=None, help="first N prompts (default: smoke's)")
    parser.add_argument("--jobs", type=int, default=2, help="processes / actors (default 2)")
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds (default 4)")
    parser.add_argument("--no-estimate", action="store_true", help="skip the paper estimate")
    args = parser.parse_args()

    import ray

    from harness.backends.ray.render import warm_ray
    from harness.render.cache import RenderCache
    from harness.render.cache_warmer import scene_groups, warm
    from harness.store import open_store

    requests, failed = _requests(args.prompts)
    print(f"smoke plan: {len(requests)} renders ({len(failed)} probe jobs not applicable), "
          f"{args.jobs} processes/actors", flush=True)  # fmt: skip

    groups = scene_groups(requests)
    rounds = max(1, min(args.rounds, len(groups)))
    chunks = [[r for g in groups[i::rounds] for r in g] for i in range(rounds)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        ray.init(num_cpus=args.jobs, include_dashboard=False, log_to_driver=False)
        start_s = time.perf_counter() - t
        url = (root / "ray").as_uri()
        local_s = ray_s = 0.0
        rendered = {"local": 0, "ray": 0}
        failures = {"local": 0, "ray": 0}
        for i, chunk in enumerate(chunks):
            order = ("local", "ray") if i % 2 == 0 else ("ray", "local")
            for backend in order:
                t = time.perf_counter()
                if backend == "local":
                    res = warm(chunk, root / "local" / "renders", jobs=args.jobs)
                    local_s += time.perf_counter() - t
                else:
                    res = warm_ray(chunk, url, actors=args.jobs)
                    ray_s += time.perf_counter() - t
                rendered[backend] += res.rendered
                failures[backend] += len(res.failures)
            print(f"  round {i + 1}/{rounds}: {len(chunk)} renders, local {local_s:.1f} s, "
                  f"ray {ray_s:.1f} s so far", flush=True)  # fmt: skip
        ray.shutdown()
        print(f"local backend: {local_s:.1f} s ({rendered['local']} rendered, {failures['local']} failed)")
        print(f"ray backend:   {ray_s:.1f} s ({rendered['ray']} rendered, {failures['ray']} failed; "
              f"cluster start-up {start_s:.1f} s not included)")  # fmt: skip
        print(f"ratio ray/local: {ray_s / local_s:.3f} (target <= 1.15); "
              f"with start-up: {(ray_s + start_s) / local_s:.3f}")  # fmt: skip

        cache, store = RenderCache(root / "local" / "renders"), open_store(url)
        same = differ = 0
        for r in requests:
            key = cache.key(r.identity, r.cfg)
            a = (cache.entry_dir(key) / "image.png").read_bytes()
            b = store.read(f"renders/objects/{key[:2]}/{key}/image.png")
            same, differ = (same + 1, differ) if a == b else (same, differ + 1)
        print(f"byte-identical renders: {same} of {same + differ}")

    if not args.no_estimate:
        print("paper estimate:", flush=True)
        subprocess.run([sys.executable, "-m", "harness", "plan", "--profile", "paper", "--estimate"],
                       check=False)  # fmt: skip


if __name__ == "__main__":
    main()
