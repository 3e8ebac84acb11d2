"""Benchmark of evaluator–human agreement with intervals at study scale, and its reference check.

Run: ``python benchmarks/bench_human_agreement.py [--quick] [--check-study]``.

Synthetic study-sized input: 20 evaluators × 387 configurations = 7,740 score series over 300
scenes (6 generators × 50 prompts), 3 raters on a 1–5 scale, B = 2000 prompt-block draws; the
smaller scale has 20 configurations (400 series). Each scale runs in its own process, so each
peak RSS is its own. Target at study scale: ≤ 30 s wall and ≤ 2 GB peak RSS. The machine may be
shared, so CPU seconds (all threads) are printed beside wall seconds, with the load average.
Per scale:

1. ``pooled``: ``series_agreement`` as the command runs it: the tie-calibration ε search,
   Pearson, Spearman, Kendall τ-b, τ-c and pairwise accuracy of every series, point values and
   95% intervals from all B draws;
2. ``grouped``: the same statistics within each prompt, averaged, with intervals;
3. ``human``: Krippendorff's α (interval, ordinal), ceiling, LORO, split-half, α draws;
4. ``epsilon_search`` (already inside ``pooled``, shown alone): the pooled ε search.

Reference check: the outputs of 1 and 2 are compared, as JSON text (every printed digit), with
the frozen plain reference implementation (``tests/_human_reference.py``), timed the same way:
at the smaller scale always, at study scale with ``--check-study`` (about a minute more).
``--quick`` runs the smaller scale only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N_EVAL, N_GEN, N_PROMPTS, N_RATERS, B, SEED = 20, 6, 50, 3, 2000, 42
SCALES = {"small": 20, "study": 387}  # configurations per evaluator


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _inputs(n_conf: int):
    import numpy as np

    from harness.human import agreement_table as hs

    rng = np.random.default_rng(0)
    n = N_GEN * N_PROMPTS
    blocks = np.repeat(np.arange(N_PROMPTS), N_GEN)
    true = rng.normal(3, 1, n)
    ratings = np.clip(np.round(true[:, None] + rng.normal(0, 0.8, (n, N_RATERS))), 1, 5)
    quality = rng.uniform(0.2, 1.5, (N_EVAL * n_conf, 1))
    scores = true[None, :] + rng.normal(0, 1, (N_EVAL * n_conf, n)) / quality
    return scores, ratings, blocks, hs.draw_weights(N_PROMPTS, B, SEED)


def _timed(fn, *args, **kwargs):
    t, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, round(time.perf_counter() - t, 2), round(time.process_time() - c, 2)


def run_scale(scale: str, check: bool) -> dict:
    """Time one scale in this process; with ``check`` also the reference, after the peak RSS."""
    import numpy as np

    from harness.human import agreement_table as hs
    from harness.human import item_agreement as hc

    scores, ratings, blocks, weights = _inputs(SCALES[scale])
    human = ratings.mean(axis=1)
    wall, cpu, out = {}, {}, {}
    out["pooled"], wall["pooled"], cpu["pooled"] = _timed(hs.series_agreement, scores, human, blocks, N_PROMPTS, weights)
    out["grouped"], wall["grouped"], cpu["grouped"] = _timed(
        hs.series_agreement, scores, human, blocks, N_PROMPTS, weights, grouped=True)
    summary, wall["human"], cpu["human"] = _timed(hs.reliability_summary, ratings, blocks, N_PROMPTS, weights)
    _, eps_wall, eps_cpu = _timed(hc.tie_calibrated_epsilons, scores, human)
    result = {
        "scale": scale,
        "series": int(scores.shape[0]),
        "scenes": int(scores.shape[1]),
        "draws": B,
        "wall_seconds": {**wall, "total": round(sum(wall.values()), 2)},
        "cpu_seconds": {**cpu, "total": round(sum(cpu.values()), 2)},  # all threads
        "epsilon_search_within_pooled": {"wall": eps_wall, "cpu": eps_cpu},
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "load_average": [round(v, 2) for v in os.getloadavg()],
        "check": {
            "alpha_interval": summary["krippendorff_alpha_interval"],
            "noise_ceiling": summary["noise_ceiling"],
            "median_pearson_ci_width": float(np.nanmedian(
                [p["ci"]["pearson"][1] - p["ci"]["pearson"][0] for p in out["pooled"]])),
            "median_pairwise_accuracy": float(np.median([p["pairwise_accuracy"] for p in out["pooled"]])),
        },
    }
    if check:
        from harness.stats.intervals import DEFAULT_POLICY
        from tests import _human_reference as ref

        same, ref_wall, ref_cpu = {}, {}, {}
        for kind in ("pooled", "grouped"):  # the reference reads plain percentiles at the policy's level
            want, ref_wall[kind], ref_cpu[kind] = _timed(
                ref.series_agreement, scores, human, blocks, N_PROMPTS, weights, grouped=kind == "grouped",
                level=DEFAULT_POLICY.read_level(N_PROMPTS))
            same[kind] = json.dumps(want) == json.dumps(out[kind])
        result["reference"] = {"outputs_match": same, "wall_seconds": ref_wall, "cpu_seconds": ref_cpu}
    return result


def _child(scale: str, check: bool) -> dict:
    cmd = [sys.executable, __file__, "--child", scale] + (["--check"] if check else [])
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"the {scale} scale failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout)


def _line(r: dict) -> str:
    w, c = r["wall_seconds"], r["cpu_seconds"]
    text = (f"{r['scale']:>5} ({r['series']} series): {w['total']:.1f} s wall, {c['total']:.1f} s CPU "
            f"(pooled {c['pooled']:.1f}, grouped {c['grouped']:.1f}, human {c['human']:.1f} CPU s), "
            f"peak RSS {r['peak_rss_mb']:.0f} MB, load {r['load_average'][0]:.1f}")
    if "reference" in r:
        match = all(r["reference"]["outputs_match"].values())
        ref_cpu = sum(r["reference"]["cpu_seconds"].values())
        text += f"; outputs match the reference: {'yes' if match else 'NO'} (reference {ref_cpu:.1f} s CPU)"
    return text


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="the smaller scale only")
    parser.add_argument("--check-study", action="store_true", help="also compare with the reference at study scale")
    parser.add_argument("--child", choices=sorted(SCALES), help=argparse.SUPPRESS)
    parser.add_argument("--check", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_scale(args.child, args.check)))
        return 0
    results = [_child("small", True)]
    if not args.quick:
        results.append(_child("study", args.check_study))
    print(json.dumps(results, indent=2))
    for r in results:
        print(_line(r))
    study = results[-1]
    if study["scale"] == "study":
        met = study["wall_seconds"]["total"] <= 30 and study["peak_rss_mb"] <= 2048
        print(f"target at study scale (30 s wall, 2048 MB peak RSS): {'met' if met else 'NOT met'}")
    ok = all(all(r["reference"]["outputs_match"].values()) for r in results if "reference" in r)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
