"""Cross-protocol concordance: do the presets crown the same generators?

Input: per-scene scores of one evaluator under several presets (``measure.py``), as a
``(K presets, G generators, P prompts)`` array. Per preset, the generator ranking by mean over
prompts; per preset pair, Kendall's τ-b between the two rankings (``scipy.stats.kendalltau``)
with a prompt-bootstrap interval (the interval policy's, over the P prompts; the same prompt
draws for every preset, so the presets stay paired); and the generator pairs whose order
depends on the preset, called so only when the study's simultaneous band
(:func:`harness.stats.simultaneous.simultaneous_band`, over every (preset, generator pair)
contrast at once) puts the pair's gap above zero under one preset and below zero under the
other. The band covers every contrast jointly, so the disagreements reported are confirmed
family-wise: with no preset reversing anything, a run reports any at most about 5 % of the
time at 6 prompts (benchmarks/bench_calibration.py). With fewer prompts than the interval
policy's minimum none is confirmed (``reason``: "not confirmable: 2 prompts (needs 6)").
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from scipy.stats import kendalltau

from harness.core.numbers import finite_or_none
from harness.stats.bootstrap import generator_mean_draws, prompt_weights
from harness.stats.intervals import DEFAULT_POLICY, IntervalPolicy, interval
from harness.stats.simultaneous import simultaneous_band


@dataclass(frozen=True)
class PresetRanking:
    preset: str
    means: dict[str, float]  # generator → mean score over prompts
    order: tuple[str, ...]  # best first (ties broken by name)


@dataclass(frozen=True)
class TauPair:
    a: str
    b: str
    tau: float
    lo: float
    hi: float


@dataclass(frozen=True)
class Disagreement:
    """Generators ``first`` above ``second`` under preset ``a`` and below under ``b``, both
    confirmed by the band (intervals of the gap ``first − second``)."""

    first: str
    second: str
    a: str
    b: str
    gap_a: tuple[float, float, float]  # mean, lower, upper
    gap_b: tuple[float, float, float]


@dataclass(frozen=True)
class Concordance:
    presets: tuple[str, ...]
    generators: tuple[str, ...]
    n_prompts: int
    rankings: tuple[PresetRanking, ...]
    taus: tuple[TauPair, ...]
    disagreements: tuple[Disagreement, ...]
    band_q: float
    level: float
    n_draws: int
    reason: str = ""  # why no disagreement could be confirmed ("not confirmable: ..."), "" otherwise

    def to_dict(self) -> dict:
        return {
            "presets": list(self.presets),
            "generators": list(self.generators),
            "prompts": self.n_prompts,
            "bootstrap": self.n_draws,
            "level": self.level,
            "band_q": finite_or_none(self.band_q),
            "rankings": {r.preset: {"order": list(r.order), "means": {g: finite_or_none(v) for g, v in r.means.items()}}
                         for r in self.rankings},
            "kendall_tau": [{"a": t.a, "b": t.b, "tau": finite_or_none(t.tau), "lo": finite_or_none(t.lo), "hi": finite_or_none(t.hi)}
                            for t in self.taus],
            "disagreements": [
                {"first": d.first, "second": d.second, "above_under": d.a, "below_under": d.b,
                 "gap_a": [finite_or_none(x) for x in d.gap_a], "gap_b": [finite_or_none(x) for x in d.gap_b]}
                for d in self.disagreements
            ],
            "confirmable": not self.reason,
            "reason": self.reason,
        }



#: Colour-blind-safe line colours, one per generator (Okabe & Ito).
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")


def ranking(preset: str, generators: tuple[str, ...], means: np.ndarray) -> PresetRanking:
    order = tuple(g for _, g in sorted(zip(-np.nan_to_num(means, nan=-np.inf), generators, strict=True)))
    return PresetRanking(preset, {g: float(m) for g, m in zip(generators, means, strict=True)}, order)


def tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b of two score vectors (NaN entries dropped; NaN when < 2 remain)."""
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2:
        return float("nan")
    return float(kendalltau(x[ok], y[ok]).statistic)


def tau_draws(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`tau` of every row pair: ``x``, ``y`` (B, G) → (B,). Rows without a NaN are computed
    at once (τ-b from the signs of every generator pair, ties counted as scipy counts them);
    a row with a NaN takes :func:`tau`."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    out = np.full(x.shape[0], np.nan)
    whole = np.isfinite(x).all(axis=1) & np.isfinite(y).all(axis=1)
    if x.shape[1] >= 2 and whole.any():
        i, j = np.triu_indices(x.shape[1], k=1)
        sx = np.sign(x[whole][:, i] - x[whole][:, j])
        sy = np.sign(y[whole][:, i] - y[whole][:, j])
        den = np.sqrt((sx != 0).sum(axis=1) * (sy != 0).sum(axis=1).astype(np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[whole] = np.where(den > 0, (sx * sy).sum(axis=1) / den, np.nan)
    for b in np.flatnonzero(~whole):
        out[b] = tau(x[b], y[b])
    return out


def concordance(
    scores: np.ndarray,
    presets: tuple[str, ...],
    generators: tuple[str, ...],
    *,
    n_draws: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    policy: IntervalPolicy = DEFAULT_POLICY,
) -> Concordance:
    """Concordance of ``scores`` ``(K, G, P)`` (NaN: a failed scene) across presets: τ-b
    intervals and the band read by ``policy`` over the P prompts; disagreements only from
    ``policy.min_blocks()`` prompts on."""
    s = np.asarray(scores, dtype=np.float64)
    k, g, p = s.shape
    if k != len(presets) or g != len(generators) or k < 2 or g < 2 or p < 1:
        raise ValueError(f"scores shape {s.shape} does not fit {k} presets x {g} generators (need 2 x 2)")
    weights = prompt_weights(p, n_draws, seed)
    means = np.array([np.nanmean(np.where(np.isfinite(s[i]), s[i], np.nan), axis=1) for i in range(k)])
    draws = np.stack([generator_mean_draws(s[i], weights) for i in range(k)])  # (K, B, G)
    rankings = tuple(ranking(presets[i], generators, means[i]) for i in range(k))
    taus = []
    for a, b in itertools.combinations(range(k), 2):
        t_draws = tau_draws(draws[a], draws[b])
        lo, hi = interval(t_draws, level=level, n_blocks=p, policy=policy).as_tuple()
        taus.append(TauPair(presets[a], presets[b], tau(means[a], means[b]), float(lo), float(hi)))
    pairs = list(itertools.combinations(range(g), 2))
    # contrast (preset i, pair (x, y)): per-prompt gap s[i, x] − s[i, y]
    contrasts = np.stack([s[i, x] - s[i, y] for i in range(k) for x, y in pairs], axis=1)  # (P, K·pairs)
    band = simultaneous_band(contrasts, weights, level=level, policy=policy)
    lo, hi = band.interval(np.arange(contrasts.shape[1]))
    reason = policy.not_confirmable(p, level)
    disagreements = []
    for n, (x, y) in enumerate([] if reason else pairs):
        for a, b in itertools.permutations(range(k), 2):
            ja, jb = a * len(pairs) + n, b * len(pairs) + n
            if lo[ja] > 0 and hi[jb] < 0:  # x above y under a, below under b, both confirmed
                disagreements.append(Disagreement(
                    generators[x], generators[y], presets[a], presets[b],
                    (float(band.mean[ja]), float(lo[ja]), float(hi[ja])),
                    (float(band.mean[jb]), float(lo[jb]), float(hi[jb])),
                ))  # fmt: skip
    return Concordance(tuple(presets), tuple(generators), p, rankings, tuple(taus), tuple(disagreements),
                       band.q, level, n_draws, reason)  # fmt: skip


def score_array(table, presets: tuple[str, ...]) -> tuple[np.ndarray, tuple[str, ...], tuple[str, ...]]:
    """``(K, G, P)`` scores from a ``measure.score_protocols`` table (failed rows NaN), with the
    generator and prompt ids in sorted order."""
    generators = tuple(sorted(table["generator"].unique()))
    prompts = tuple(sorted(table["prompt_id"].unique()))
    out = np.full((len(presets), len(generators), len(prompts)), np.nan)
    gi = {x: i for i, x in enumerate(generators)}
    pi = {x: i for i, x in enumerate(prompts)}
    ki = {x: i for i, x in enumerate(presets)}
    for row in table.itertuples(index=False):
        if row.status == "ok":
            out[ki[row.preset], gi[row.generator], pi[row.prompt_id]] = row.score
    return out, generators, prompts


#: Disagreement lines the terminal lists before pointing at concordance.json for the rest.
SHOWN_DISAGREEMENTS = 8


def answer(result: Concordance) -> str:
    """The concordance in one line: whether the generators' order depends on the preset, how
    much of it (confirmed reversals, the pairs and presets involved most) and the τ-b range."""
    taus = [t.tau for t in result.taus if math.isfinite(t.tau)]
    spread = f"; Kendall τ-b between presets {min(taus):+.2f} to {max(taus):+.2f}" if taus else ""
    if result.reason:
        return f"answer: {result.reason}: whether the order depends on the preset is not decided{spread}"
    found = result.disagreements
    if not found:
        return f"answer: the generators' order holds under every preset (no confirmed reversal){spread}"
    pairs = Counter(tuple(sorted((d.first, d.second))) for d in found)
    presets = Counter(p for d in found for p in (d.a, d.b))
    (top_pair, _), = pairs.most_common(1)
    (top_preset, n_preset), = presets.most_common(1)
    return (f"answer: the order depends on the preset: {len(pairs)} of {len(result.generators) * (len(result.generators) - 1) // 2} "
            f"generator pairs reverse between presets ({len(found)} confirmed reversals), most under {top_preset} "
            f"({n_preset}); e.g. {top_pair[0]} vs {top_pair[1]}{spread}")  # fmt: skip


def figure(result: Concordance, path) -> None:
    """A bump chart of the generators' ranks across presets; confirmed disagreements in red."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    reversals = Counter(g for d in result.disagreements for g in (d.first, d.second))
    fig, ax = plt.subplots(figsize=(1.8 + 1.4 * len(result.presets), 3.2), dpi=100)
    xs = range(len(result.presets))
    for n, gen in enumerate(result.generators):
        ranks = [r.order.index(gen) + 1 for r in result.rankings]
        # one colour per generator; solid when it takes part in a confirmed reversal
        ax.plot(xs, ranks, marker="o", color=OKABE_ITO[n % len(OKABE_ITO)], lw=1.8,
                linestyle="-" if reversals[gen] else ":")  # fmt: skip
        # parse_math off: a generator named "$\\frac$" is text, not mathtext to typeset (or fail on)
        ax.annotate(gen, (xs[-1], ranks[-1]), xytext=(6, 0), textcoords="offset points", va="center",
                    fontsize=8, parse_math=False)  # fmt: skip
    ax.set_xticks(list(xs), result.presets, fontsize=8, parse_math=False)
    ax.set_yticks(range(1, len(result.generators) + 1))
    ax.invert_yaxis()
    ax.set_ylabel("rank (1 = best)")
    ax.set_title(f"Rank by preset ({len(result.disagreements)} confirmed reversals; dotted: none)", fontsize=9)
    ax.set_xlim(-0.3, len(result.presets) - 0.2)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
