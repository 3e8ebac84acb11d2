"""Wall time of ``t3d-audit claim`` end to end, cold and warm.

Runs the claim "faithful beats gridded under ref-vit-clip" (the bundled tiny CLIP; real Blender
renders) on the default profile (6 prompts) with the command's defaults (every preset scaled to
at most 4 views, a search of 16 configurations, 32 flip-region points, local render
processes), first on an empty cache (cold: every render and score made), then again on the same
cache (warm: every render and score read back, the search's trial log replayed), and prints both
wall times and the verdict.

    python benchmarks/bench_claim.py [--quick] [--evaluator ID] [--a A] [--b B] [--cache-dir DIR]

``--quick``: the smoke profile (2 prompts), a search of 4 configurations and 8 flip points: a
check that the benchmark runs, in seconds once rendered.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_once(argv: list[str], cache: Path) -> tuple[float, str]:
    """One ``t3d-audit claim`` in a fresh process on ``cache``: (wall seconds, its verdict line)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "harness", "claim", *argv, "--cache-dir", str(cache)],
                          capture_output=True, text=True, env=env, check=False)  # fmt: skip
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"claim failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    line = next((x for x in done.stdout.splitlines() if x.startswith("verdict:")), "")
    return seconds, line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke profile, tiny search")
    parser.add_argument("--evaluator", default="ref-vit-clip")
    parser.add_argument("--a", default="faithful")
    parser.add_argument("--b", default="gridded")
    parser.add_argument("--cache-dir", type=Path, default=None, help="cache to use (default: a fresh temporary one)")
    args = parser.parse_args()
    argv = ["--evaluator", args.evaluator, "--a", args.a, "--b", args.b]
    argv += (["--profile", "smoke", "--search-budget", "4", "--flip-points", "8"] if args.quick
             else ["--profile", "default"])  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-claim-") as scratch:
        cache = args.cache_dir or Path(scratch) / "cache"
        cold, verdict = run_once(argv, cache)
        warm, again = run_once(argv, cache)
    print(f"claim {' '.join(argv)} on {os.cpu_count()} CPUs")
    print(f"cold: {cold:.1f} s")
    print(f"warm: {warm:.1f} s")
    print(verdict)
    if again != verdict:
        raise SystemExit(f"the warm run's verdict differs: {again}")


if __name__ == "__main__":
    main()
