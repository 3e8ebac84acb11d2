"""Calibration of the prompt-block intervals at the sizes users run: coverage and false confirmations.

    python benchmarks/bench_calibration.py --quick      # about 2 minutes on a 2-core CPU
    python benchmarks/bench_calibration.py              # the full table (see docs/intervals.md)

Part 1, coverage. Under the known-truth study model of ``tests/_calibration.py`` (6 generators
× P prompts × 5 levels of 3 factors, per-prompt random effects; a symmetric and a skewed
variant) each replication draws a sample, computes ρ of factor 0, peak ρ, Kendall's W of
factor 0, the probe's discrimination and the agreement r with the harness's own draw functions
on B prompt-block draws, and reads a 95 % interval four ways:

- ``percentile``: the draws' 2.5 and 97.5 % quantiles (``intervals.interval`` with
  ``method="percentile"``);
- ``expanded``: Hesterberg's expanded percentile over P blocks (``method="expanded percentile"``);
- ``bca``: ``scipy.stats.bootstrap(method="BCa")`` with the prompt index as its data, so its
  resamples and its jackknife are prompt blocks (its own B resamples);
- ``student``: the bootstrap-t, θ̂ − t*·SE with t* = (θ* − θ̂)/SE* from ``--inner`` nested
  resamples of every draw (its own, fewer draws: ``--student-draws``).

It counts the replications whose interval holds the population value (Wilson 95 % interval of
the share), and the shares that miss low and high. Part 2, false confirmations under nulls at
the smoke (2) and default (6) prompt counts: the human best configuration (nothing agrees
better than c0; 12 prompts too: 6 held out), the concordance's disagreements (no preset
reverses any pair; family-wise: a run with any confirmed disagreement counts once) and the
human stability check at its own boundary (every level's true drop exactly 0.1,
``max_human_agreement_drop``; 1, 5 and 20 levels): each under the harness's policy (``study
method``) and under ``IntervalPolicy(study_method="percentile", refuse_below_min_blocks=False)``,
the plain percentile with no minimum (its factor band widened by √(P/(P − 1)))).

``--workers N`` spreads the cells over N processes; every cell has its own seed, so the table
does not depend on N. Runtime on a 2-core CPU: ``--quick`` about 50 s; the full table (1,000
replications, B = 2,000) about 20 minutes with ``--workers 2``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.human import protocol_dependence as hp
from harness.peers.rank_concordance import concordance
from harness.stats.bootstrap import prompt_weights
from harness.stats.intervals import DEFAULT_POLICY, IntervalPolicy, interval, share_interval
from tests._calibration import (
    PLAIN,
    STATISTICS,
    Model,
    Statistic,
    agreement_null,
    concordance_null,
    draw,
    drop_boundary,
    statistics,
    true_values,
)

METHODS = ("percentile", "expanded", "bca", "student")
LEVEL = 0.95


@dataclass(frozen=True)
class Sizes:
    reps: int
    draws: int
    student_draws: int
    inner: int
    null_reps: int
    null_draws: int


QUICK = Sizes(reps=60, draws=500, student_draws=200, inner=20, null_reps=100, null_draws=500)
FULL = Sizes(reps=1000, draws=2000, student_draws=400, inner=20, null_reps=1000, null_draws=2000)


# ------------------------------------------------------------------------ interval methods


def _by_index(stat: Statistic, n_prompts: int):
    """``stat`` as scipy's vectorised statistic of resampled prompt indices (..., n) → (...)."""

    def statistic(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        idx = np.moveaxis(np.asarray(idx), axis, -1)
        flat = idx.reshape(-1, idx.shape[-1])
        counts = (flat[:, :, None] == np.arange(n_prompts)).sum(axis=1)
        return stat(counts).reshape(idx.shape[:-1])

    return statistic


def bca(stat: Statistic, n_prompts: int, draws: int, seed: int) -> tuple[float, float]:
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bootstrap((np.arange(n_prompts),), _by_index(stat, n_prompts), n_resamples=draws, vectorized=True,
                        method="BCa", confidence_level=LEVEL, rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def student(stat: Statistic, point: float, n_prompts: int, draws: int, inner: int, seed: int) -> tuple[float, float]:
    """The bootstrap-t interval: SE* of every outer draw from ``inner`` resamples of that draw."""
    rng = np.random.default_rng(seed)
    outer = prompt_weights(n_prompts, draws, rng)
    theta = stat(outer)
    nested = rng.multinomial(n_prompts, outer / n_prompts, size=(inner, draws))  # (K, B, P)
    inner_theta = stat(nested.reshape(-1, n_prompts)).reshape(inner, draws)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        se_star = np.nanstd(inner_theta, axis=0, ddof=1)
        se = np.nanstd(theta, ddof=1)
        t = (theta - point) / se_star
    t = t[np.isfinite(t)]
    if t.size < 20 or not np.isfinite(se) or se == 0:
        return float("nan"), float("nan")
    lo_t, hi_t = np.quantile(t, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2])
    return float(point - hi_t * se), float(point - lo_t * se)


def intervals_of(stat: Statistic, n_prompts: int, sizes: Sizes, seed: int) -> dict[str, tuple[float, float]]:
    weights = prompt_weights(n_prompts, sizes.draws, seed)
    draws = stat(weights)
    point = float(stat(np.ones((1, n_prompts)))[0])
    return {
        "percentile": interval(draws, method="percentile").as_tuple(),
        "expanded": interval(draws, method="expanded percentile", n_blocks=n_prompts).as_tuple(),
        "bca": bca(stat, n_prompts, sizes.draws, seed + 1),
        "student": student(stat, point, n_prompts, sizes.student_draws, sizes.inner, seed + 2),
    }


# ------------------------------------------------------------------------ part 1: coverage


def coverage(model: Model, n_prompts: int, sizes: Sizes, seed: int) -> dict[tuple[str, str], list[int]]:
    """(statistic, method) → [covered, missed low (interval above the truth), missed high, undefined]."""
    truth = true_values(model)
    out = {(s, m): [0, 0, 0, 0] for s in STATISTICS for m in METHODS}
    rng = np.random.default_rng(seed)
    for r in range(sizes.reps):
        sample = draw(model, n_prompts, rng)
        for i, (name, stat) in enumerate(statistics(sample).items()):
            for method, (lo, hi) in intervals_of(stat, n_prompts, sizes, seed * 100_000 + r * 10 + i).items():
                cell = out[(name, method)]
                if not (np.isfinite(lo) and np.isfinite(hi)):
                    cell[3] += 1
                elif lo > truth[name]:
                    cell[1] += 1
                elif hi < truth[name]:
                    cell[2] += 1
                else:
                    cell[0] += 1
    return out


# ------------------------------------------------------------------------ part 2: false confirmations


def best_configuration_rate(n_prompts: int, sizes: Sizes, policy: IntervalPolicy, skewed: bool, seed: int) -> int:
    rng = np.random.default_rng(seed)
    confs = ["c0", *[f"f={i}" for i in range(5)]]
    hits = 0
    for r in range(sizes.null_reps):
        scores, human, prompts = agreement_null(n_prompts, len(confs), rng, skewed=skewed)
        best = hp.best_configuration(scores, human, prompts, confs, "c0", r, n_draws=sizes.null_draws, policy=policy)
        hits += bool(best and best["confirmed"])
    return hits


def concordance_rate(n_prompts: int, sizes: Sizes, policy: IntervalPolicy, skewed: bool, seed: int) -> int:
    rng = np.random.default_rng(seed)
    hits = 0
    for r in range(sizes.null_reps):
        scores = concordance_null(n_prompts, 3, 6, rng, skewed=skewed)
        found = concordance(scores, ("a", "b", "c"), tuple("ghijkl"), n_draws=sizes.null_draws, seed=r, policy=policy)
        hits += bool(found.disagreements)
    return hits


def stability_rate(n_prompts: int, levels: int, sizes: Sizes, policy: IntervalPolicy, skewed: bool,
                   seed: int) -> int:
    rng = np.random.default_rng(seed)
    confs = ["c0", *[f"f={i}" for i in range(levels)]]
    factor_of = {c: ("f", c[2:]) for c in confs[1:]}
    hits = 0
    for r in range(sizes.null_reps):
        scores, human, blocks = drop_boundary(n_prompts, levels, 0.1, rng, skewed=skewed)
        w = prompt_weights(n_prompts, sizes.null_draws, 10_000 + r)
        draws = hp.configuration_draws(scores, human, blocks, w)
        drops = hp.paired_drop_draws(scores, human, blocks, w, 0)
        f = hp.factor_envelopes(draws, confs, factor_of, "c0", drops=drops, n_blocks=n_prompts, policy=policy)["f"]
        lo = f["max_drop_ci"][0]
        # test_human_agreement_stability fails; below the policy's minimum it is skipped
        hits += f["interval"]["confirmable"] and lo is not None and lo > 0.1
    return hits


# ------------------------------------------------------------------------ output


def _rate(k: int, n: int) -> str:
    lo, hi = share_interval(k, n)
    return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]" if n else "n/a"


def _coverage_cell(task: tuple[bool, int, Sizes, int]) -> dict[tuple[str, str], list[int]]:
    skewed, n, sizes, seed = task
    return coverage(Model(skewed=skewed), n, sizes, seed)


def _null_cell(task: tuple[str, int, int, bool, Sizes, int]) -> tuple[int, int]:
    """(false confirmations under the study method, under the plain percentile policy) of one null row."""
    kind, n, levels, skewed, sizes, seed = task

    def run(policy: IntervalPolicy) -> int:
        if kind == "best":
            return best_configuration_rate(n, sizes, policy, skewed, seed)
        if kind == "concordance":
            return concordance_rate(n, sizes, policy, skewed, seed)
        return stability_rate(n, levels, sizes, policy, skewed, seed)

    return run(DEFAULT_POLICY), run(PLAIN)


NULL_LABELS = {"best": "best configuration (c0 + 5 alike; half held out)",
               "concordance": "concordance (any pair; 3 presets x 6 tied generators)",
               "stability": "stability check at its boundary ({levels} levels)"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer replications and draws (about a minute)")
    ap.add_argument("--prompts", default="2,6,20,50", help="prompt counts of the coverage table")
    ap.add_argument("--only", choices=("coverage", "confirmations"), default=None)
    ap.add_argument("--workers", type=int, default=1, help="processes (cells are seeded alike at any count)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    started = time.perf_counter()
    print(f"# bench_calibration ({'quick' if args.quick else 'full'}): {sizes}; {args.workers} worker(s) on "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; policy {DEFAULT_POLICY}")
    pool = ProcessPoolExecutor(args.workers) if args.workers > 1 else None
    mapper = pool.map if pool is not None else map
    if args.only != "confirmations":
        tasks = [(skewed, n, sizes, args.seed + 7 * n + skewed)
                 for skewed in (False, True) for n in (int(x) for x in args.prompts.split(","))]
        print("\n## Coverage of 95 % intervals (Wilson 95 %), misses low/high, undefined")
        print("| variant | P | statistic | " + " | ".join(METHODS) + " |")
        print("|---|---|---|" + "---|" * len(METHODS))
        for (skewed, n, _s, _seed), cov in zip(tasks, mapper(_coverage_cell, tasks), strict=True):
            for name in STATISTICS:
                cells = []
                for m in METHODS:
                    c, low, high, undefined = cov[(name, m)]
                    cells.append(f"{_rate(c, sizes.reps)} ({low}/{high}/{undefined})")
                print(f"| {'skewed' if skewed else 'symmetric'} | {n} | {name} | " + " | ".join(cells) + " |",
                      flush=True)
    if args.only != "coverage":
        rows = [("best", n, 0) for n in (2, 6, 12)] + [("concordance", n, 0) for n in (2, 6)]
        rows += [("stability", n, lv) for lv in (1, 5, 20) for n in (2, 6)]
        tasks = [(kind, n, lv, skewed, sizes, args.seed + 31 * n + skewed)
                 for kind, n, lv in rows for skewed in (False, True)]
        print(f"\n## False confirmations ({sizes.null_reps} nulls each, Wilson 95 %)")
        print("| confirmation | variant | P | study method | plain percentile, no minimum |")
        print("|---|---|---|---|---|")
        for (kind, n, lv, skewed, _s, _seed), (study, plain) in zip(tasks, mapper(_null_cell, tasks), strict=True):
            print(f"| {NULL_LABELS[kind].format(levels=lv)} | {'skewed' if skewed else 'symmetric'} | {n} | "
                  f"{_rate(study, sizes.null_reps)} | {_rate(plain, sizes.null_reps)} |", flush=True)
    if pool is not None:
        pool.shutdown()
    print(f"\nwall {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
