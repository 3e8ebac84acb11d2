"""Benchmark of the release gate. Run: ``python benchmarks/bench_compare.py``.

Two study-sized releases of one evaluator (6 generators × 50 prompts, every factor incl.
337 templates and 11 paraphrases, the four probes: 120,600 records each, CSV report
directories) compared end to end with ``t3d-audit compare`` at B = 2000 in a fresh process:
reading and validating both score files, pairing, every metric's paired bootstrap and the
max-t band. The candidate carries a planted generator-dependent pitch effect, so the run
also shows the gate firing (exit 1). Target: ≤ 30 s. ``--quick`` shrinks the data.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

B = 2000
TARGET_S = 30.0


def write_releases(workdir: Path, quick: bool) -> tuple[Path, Path, int]:
    """Baseline and candidate report directories (``scores/<evaluator>.csv``)."""
    import numpy as np

    from harness.protocol.records import write_records
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    spec = SyntheticSpec(evaluators=1, prompt_free=0, prompts=10 if quick else 50,
                         templates=40 if quick else None, paraphrases=11, failure_rate=0.001, seed=7)
    base = synthetic_records(spec)
    cand = base.copy()
    pitch = (cand["factor"] == "pitch").to_numpy()
    gen = cand["generator"].str[3:].astype(int).to_numpy()
    level = np.where(pitch, cand["level"].where(pitch, "0").astype(float), 0.0)
    cand["score"] = cand["score"] + np.where(gen % 2 == 0, 1.0, -1.0) * 4.0 * level / 90
    dirs = []
    for name, frame in (("v1.2", base), ("v1.3", cand)):
        path = workdir / name / "scores" / "eval0.csv"
        write_records(frame, path, validate=False)
        dirs.append(path.parent.parent)
    return dirs[0], dirs[1], len(base)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        base, cand, n = write_releases(Path(tmp), args.quick)
        gen_s = time.perf_counter() - t0
        # the score files: a report directory must carry a verified manifest since compare
        # checks its releases, and these are bare score tables
        cmd = [sys.executable, "-m", "harness", "compare", str(base / "scores" / "eval0.csv"),
               str(cand / "scores" / "eval0.csv"),
               "--bootstrap", str(B), "--seed", "42", "--out", str(Path(tmp) / "out")]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"compare failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    verdicts = next((line for line in proc.stdout.splitlines() if line.startswith("- verdicts")), "")
    print(f"compare: 2 × {n:,} records, B = {B}: {dt:.1f} s end to end, peak RSS {rss:.0f} MB, "
          f"exit {proc.returncode} [{'ok' if dt <= TARGET_S else 'OVER'} vs {TARGET_S:.0f} s]; "
          f"writing the inputs took {gen_s:.1f} s (not timed)")
    print(f"  {verdicts.removeprefix('- ')}")
    print(f"  {proc.stdout.strip().splitlines()[-1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
