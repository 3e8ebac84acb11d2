"""The held-out confirmation's false-confirmation rate on a protocol-invariant evaluator.

    python benchmarks/bench_confirm_rate.py --seeds 120 --split 2+10 [--budget 16] [--sigma 0.3]
    python benchmarks/bench_confirm_rate.py --boundary 6 --matrices 1000

The evaluator is the companion plus noise drawn afresh for every scene and configuration
(:class:`harness.evaluators.reference.planted.InvariantNoise`): no configuration changes the
expected scores, so every confirmed worst case is a false one. For each seed it searches the
smoke scenes (objective ``pair:faithful,gridded``) and counts the seeds whose worst point is
confirmed, under the current rule (expanded percentile interval, at least ``MIN_PROMPTS``
held-out prompts) and under the former one (plain 95 % percentile interval over the profile's
bootstrap draws, no minimum), both from the same held-out score matrices. Prints the counts
with 95 % Wilson intervals and the wall time.

``--boundary N`` checks the interval alone on a harder null, at its boundary: N held-out prompts,
c0 with generator a far above b, the point with a and b exchangeable (normal scores), so the
pair reversal is symmetric about 0 and the lower bound's nominal one-sided rate is 2.5 %. It
counts the matrices whose lower bound is above 0 under the plain percentile, the expanded
percentile (2000 draws each) and the t interval on the per-prompt reversals.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.evaluators.reference import planted
from harness.evaluators.reference.planted import InvariantNoise
from harness.evaluators.reference.specs import search_planted_specs
from harness.search import pipeline as search_run
from harness.search.confirm import LEVEL, effect_draws
from harness.search.pipeline import SearchRequest, Split, run_search
from harness.stats.intervals import interval
from harness.stats.intervals import share_interval as wilson

NOISE_ID = "planted-noise"


def noise_spec(sigma: float):
    """The search spec of :class:`InvariantNoise` (registered in ``SEARCH_PLANTED`` for as
    long as the process runs)."""
    planted.SEARCH_PLANTED[NOISE_ID] = lambda: InvariantNoise(sigma)
    return replace(search_planted_specs()[0], id=NOISE_ID, options=(("effect", NOISE_ID), ("sigma", sigma)))


def former_rule(objective, base, moved, *, threshold, bootstrap, seed, **_):
    """The rule before the expanded interval: a plain percentile interval, no minimum."""
    lo = interval(effect_draws(objective, base, moved, bootstrap, seed), level=LEVEL).low
    return lo > threshold


def boundary(n: int, matrices: int) -> dict:
    """``--boundary``: false lower bounds above 0 on ``matrices`` null matrices of ``n`` prompts."""
    import numpy as np
    from scipy import stats

    from harness.search.confirm import MIN_DRAWS
    from harness.search.objectives import parse_objective
    from harness.stats.intervals import expanded_level

    obj = parse_objective("pair:a,b", ("a", "b", "c"))
    rng = np.random.default_rng(1000 + n)
    counts = {"plain": 0, "expanded": 0, "t": 0}
    for i in range(matrices):
        base = np.vstack([3.0 + rng.normal(0, 1, n), rng.normal(0, 1, n), rng.normal(0, 1, n)])
        moved = rng.normal(0, 1, (3, n))
        draws = effect_draws(obj, base, moved, MIN_DRAWS, i)
        counts["plain"] += bool(np.quantile(draws, (1 - LEVEL) / 2) > 0)
        counts["expanded"] += bool(np.quantile(draws, (1 - expanded_level(n)) / 2) > 0)
        per_prompt = moved[1] - moved[0]  # the reversal on each prompt (c0: a above b)
        half = stats.t.ppf(1 - (1 - LEVEL) / 2, n - 1) * per_prompt.std(ddof=1) / np.sqrt(n)
        counts["t"] += bool(per_prompt.mean() - half > 0)
    return {"boundary_prompts": n, "matrices": matrices,
            **{k: {"count": v, "rate": v / matrices, "wilson": wilson(v, matrices)} for k, v in counts.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=60)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--split", default="2+10")
    ap.add_argument("--budget", type=int, default=16)
    ap.add_argument("--sigma", type=float, default=0.3)
    ap.add_argument("--cache-dir", type=Path, default=None, help="default: a fresh temporary directory")
    ap.add_argument("--boundary", type=int, default=None, metavar="N",
                    help="check the interval alone on N-prompt null matrices at the boundary")
    ap.add_argument("--matrices", type=int, default=400)
    args = ap.parse_args(argv)
    if args.boundary is not None:
        print(json.dumps(boundary(args.boundary, args.matrices)))
        return 0
    d, h = (int(x) for x in args.split.split("+"))
    spec = noise_spec(args.sigma)
    former: list[bool] = []
    real_confirm = search_run.confirm

    def spy(*a, **kw):
        former.append(bool(former_rule(*a, **kw)))
        return real_confirm(*a, **kw)

    search_run.confirm = spy
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache_dir or Path(tmp)
        found = [run_search(SearchRequest(NOISE_ID, "smoke", objective="pair:faithful,gridded",
                                          budget=args.budget, seed=s, split=Split(d, h)),
                            cache_dir=cache, spec=spec, log_path=Path(tmp) / f"{s}.jsonl")
                 for s in range(args.first_seed, args.first_seed + args.seeds)]  # fmt: skip
    wall = time.perf_counter() - started
    n = len(found)
    now = sum(r.confirmed for r in found)
    before = sum(former)
    out = {
        "split": args.split, "seeds": n, "budget": args.budget, "sigma": args.sigma,
        "confirmed": now, "rate": now / n, "wilson": wilson(now, n),
        "former_rule_confirmed": before, "former_rate": before / n, "former_wilson": wilson(before, n),
        "not_confirmable": sum(not r.held_out.confirmable for r in found if r.held_out),
        "mean_optimism": sum(r.optimism for r in found) / n, "wall_s": round(wall, 1),
    }  # fmt: skip
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
