"""Benchmarks of the statistics engine. Run: ``python benchmarks/bench_stats.py``.

1. Simultaneous band (Eq. 3) at the study's scale: 19 evaluators × 15 pairs × 387 protocols
   = 110,295 contrasts, 50 prompts, B = 2000. Targets: ≤ 30 s, ≤ 2 GB peak RSS.
2. The same band as a straightforward per-draw loop, timed on the first ``--naive-draws``
   draws of the same family and extrapolated linearly to B = 2000 (its (B × J) draw matrix
   alone would need 1.8 GB); the ratio naive / vectorised is printed.
3. ``t3d-audit report`` end to end on a synthetic study-sized record set (20 evaluators,
   300 scenes, every factor incl. 337 templates and 11 paraphrases, probes). Target ≤ 120 s.

Each part runs in a fresh subprocess so its peak RSS is its own. ``--quick`` shrinks every
part (for a smoke run).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N_EVAL, N_PAIRS, N_PROTO, N_PROMPTS, B = 19, 15, 387, 50, 2000


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _family(quick: bool):
    import numpy as np

    j = N_EVAL * N_PAIRS * N_PROTO // (20 if quick else 1)
    rng = np.random.default_rng(0)
    return rng.normal(size=(N_PROMPTS, j))


def part_band(quick: bool) -> dict:
    from harness.stats.bootstrap import prompt_weights
    from harness.stats.simultaneous import simultaneous_band

    d = _family(quick)
    w = prompt_weights(N_PROMPTS, B, 42)
    t0 = time.perf_counter()
    band = simultaneous_band(d, w)
    dt = time.perf_counter() - t0
    return {"part": "band", "contrasts": d.shape[1], "B": B, "seconds": dt,
            "q95": band.q, "eligible": band.n_eligible, "peak_rss_mb": _peak_rss_mb()}


def part_naive(quick: bool, draws: int) -> dict:
    import numpy as np

    from harness.stats.bootstrap import prompt_weights

    d = _family(quick)
    w = prompt_weights(N_PROMPTS, B, 42)[:draws]
    t0 = time.perf_counter()
    out = np.empty((draws, d.shape[1]))
    for b in range(draws):  # the straightforward loop: resample rows, average
        idx = np.repeat(np.arange(N_PROMPTS), w[b])
        out[b] = d[idx].mean(axis=0)
    dt = time.perf_counter() - t0
    return {"part": "naive", "contrasts": d.shape[1], "draws_timed": draws, "seconds": dt,
            "extrapolated_seconds": dt * B / draws, "peak_rss_mb": _peak_rss_mb()}


def part_report(quick: bool, workdir: Path) -> dict:
    from harness.protocol.records import write_records
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    spec = SyntheticSpec(evaluators=4 if quick else 19, prompt_free=1,
                         prompts=10 if quick else 50, templates=40 if quick else None,
                         paraphrases=11, failure_rate=0.001, seed=7)
    t0 = time.perf_counter()
    df = synthetic_records(spec)
    files = []
    for name, g in df.groupby("evaluator", sort=True):
        files.append(write_records(g.reset_index(drop=True), workdir / f"{name}.parquet",
                                   validate=False))
    gen_s = time.perf_counter() - t0
    cmd = [sys.executable, "-m", "harness", "report", "--scores", *map(str, files),
           "--out", str(workdir / "out"), "--bootstrap", str(B), "--seed", "42"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    if proc.returncode != 0:
        raise SystemExit(f"report failed:\n{proc.stdout}\n{proc.stderr}")
    return {"part": "report", "records": len(df), "evaluators": df["evaluator"].nunique(),
            "scenes": spec.generators * spec.prompts, "generate_seconds": gen_s,
            "seconds": dt, "peak_rss_mb": child, "stdout": proc.stdout.strip()}


def _child(args: list[str]) -> dict:
    proc = subprocess.run([sys.executable, __file__, *args], cwd=ROOT, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--naive-draws", type=int, default=100)
    ap.add_argument("--only", choices=("band", "naive", "report"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.only == "band":
            out = part_band(args.quick)
        elif args.only == "naive":
            out = part_naive(args.quick, args.naive_draws)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                out = part_report(args.quick, Path(tmp))
        print(json.dumps(out))
        return 0
    extra = ["--quick"] if args.quick else []
    parts = [args.only] if args.only else ["band", "naive", "report"]
    res = {p: _child(["--child", "--only", p, "--naive-draws", str(args.naive_draws), *extra])
           for p in parts}
    if "band" in res:
        b = res["band"]
        ok = b["seconds"] <= 30 and b["peak_rss_mb"] <= 2048
        print(f"band: J = {b['contrasts']:,}, B = {b['B']}: {b['seconds']:.1f} s, peak RSS "
              f"{b['peak_rss_mb']:.0f} MB, q95 = {b['q95']:.3f} "
              f"[{'ok' if ok else 'OVER'} vs 30 s / 2048 MB]")
    if "naive" in res:
        n = res["naive"]
        print(f"naive loop: {n['draws_timed']} draws in {n['seconds']:.1f} s -> "
              f"{n['extrapolated_seconds']:.0f} s extrapolated to B = {B} "
              f"(peak RSS {n['peak_rss_mb']:.0f} MB for {n['draws_timed']} draws)")
        if "band" in res:
            print(f"ratio naive / vectorised: {n['extrapolated_seconds'] / res['band']['seconds']:.1f}x")
    if "report" in res:
        r = res["report"]
        print(f"report: {r['records']:,} records, {r['evaluators']} evaluators, {r['scenes']} "
              f"scenes: {r['seconds']:.1f} s end to end (B = {B}), peak RSS "
              f"{r['peak_rss_mb']:.0f} MB [{'ok' if r['seconds'] <= 120 else 'OVER'} vs 120 s]; "
              f"data generation {r['generate_seconds']:.1f} s (not timed)")
        print("  " + r["stdout"].replace("\n", "\n  "))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
