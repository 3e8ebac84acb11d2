"""Benchmark of evaluator–human agreement with intervals (issue #29).

Run: ``python benchmarks/bench_human_agreement.py [--quick]``.

Synthetic study-sized input: 20 evaluators × 387 configurations = 7,740 score series over 300
scenes (6 generators × 50 prompts), 3 raters on a 1–5 scale, B = 2000 prompt-block draws.
Target: agreement with intervals in ≤ 30 s (issue 39; it was 60 s in issue 29) and ≤ 2 GB peak
RSS. The machine is shared, so CPU seconds (all threads) are printed beside wall seconds.
Printed separately:

1. ``epsilon``: the tie-calibration ε search of every series (pairwise accuracy's own cost);
2. ``pooled``: Pearson, Spearman, Kendall τ-b, τ-c and pairwise accuracy (at that ε) for every
   series, point values and 95% intervals from all B draws (the ε search excluded; it is
   timed once more inside, so ``pooled`` is the command's pooled path minus line 1);
3. ``grouped``: the same statistics within each prompt, averaged, with intervals (its own,
   cheaper, within-prompt ε search included);
4. ``human``: Krippendorff's α (interval, ordinal), ceiling, LORO, split-half, α draws.

``--quick`` uses 20 configurations.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N_EVAL, N_CONF, N_GEN, N_PROMPTS, N_RATERS, B, SEED = 20, 387, 6, 50, 3, 2000, 42


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> int:
    import numpy as np

    from harness.stats import human_corr as hc
    from harness.stats import human_summary as hs

    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n_conf = 20 if args.quick else N_CONF
    rng = np.random.default_rng(0)
    n = N_GEN * N_PROMPTS
    blocks = np.repeat(np.arange(N_PROMPTS), N_GEN)
    true = rng.normal(3, 1, n)
    ratings = np.clip(np.round(true[:, None] + rng.normal(0, 0.8, (n, N_RATERS))), 1, 5)
    human = ratings.mean(axis=1)
    e = N_EVAL * n_conf
    quality = rng.uniform(0.2, 1.5, (e, 1))
    scores = true[None, :] + rng.normal(0, 1, (e, n)) / quality
    weights = hs.draw_weights(N_PROMPTS, B, SEED)
    times: dict[str, float] = {}
    cpu: dict[str, float] = {}
    clock = time.perf_counter
    pclock = time.process_time

    t, c = clock(), pclock()
    hc.tie_calibrated_epsilons(scores, human)
    times["epsilon"], cpu["epsilon"] = clock() - t, pclock() - c

    # the command's path: ε, point values and intervals of every series, 256 series at a time
    t, c = clock(), pclock()
    pooled = hs.series_agreement(scores, human, blocks, N_PROMPTS, weights)
    times["pooled"], cpu["pooled"] = clock() - t, pclock() - c
    times["pooled"] -= times["epsilon"]  # the ε search is counted on its own line
    cpu["pooled"] -= cpu["epsilon"]

    t, c = clock(), pclock()
    grouped = hs.series_agreement(scores, human, blocks, N_PROMPTS, weights, grouped=True)
    times["grouped"], cpu["grouped"] = clock() - t, pclock() - c

    t, c = clock(), pclock()
    summary = hs.reliability_summary(ratings, blocks, N_PROMPTS, weights)
    times["human"], cpu["human"] = clock() - t, pclock() - c

    widths = [p["ci"]["pearson"][1] - p["ci"]["pearson"][0] for p in pooled]
    total = sum(times.values())
    out = {
        "series": e,
        "scenes": n,
        "draws": B,
        "seconds": {k: round(v, 2) for k, v in times.items()},
        "cpu_seconds": {k: round(v, 2) for k, v in cpu.items()},  # all threads; wall > cpu = waiting
        "total_seconds": round(total, 2),
        "total_cpu_seconds": round(sum(cpu.values()), 2),
        "pairwise_accuracy_epsilon_search_seconds": round(times["epsilon"], 2),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "targets": {"seconds": 30, "peak_rss_mb": 2048},
        "check": {
            "alpha_interval": summary["krippendorff_alpha_interval"],
            "noise_ceiling": summary["noise_ceiling"],
            "median_pearson_ci_width": float(np.nanmedian(widths)),
            "median_pairwise_accuracy": float(np.median([p["pairwise_accuracy"] for p in pooled])),
            "grouped_series": len(grouped),
        },
    }
    print(json.dumps(out, indent=2))
    print(f"agreement with intervals: {total:.1f} s wall, {sum(cpu.values()):.1f} s CPU (target 30), "
          f"peak RSS {out['peak_rss_mb']:.0f} MB "
          f"(target 2048); of which pairwise accuracy's epsilon search {times['epsilon']:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
