"""The evidence of a pairwise claim on the grid and the presets: pure statistics on arrays.

For each claimed pair (A, B) and each protocol π (every grid protocol of the profile, then
every preset) the margin Δ_AB(π) = mean over prompts of A − B (score units). Reported:

- c0's margin with the interval policy's pointwise interval over the P prompts
  (:func:`harness.stats.intervals.interval`);
- the margin envelope over the grid ``[min_π Δ, max_π Δ]`` and its category
  (:func:`harness.stats.envelopes.envelopes`: strict, sign crossing, tie boundary);
- one simultaneous band over every (pair, protocol) contrast at once
  (:func:`harness.stats.simultaneous.simultaneous_band`), so "A above B at every protocol" and
  "B above A at protocol π" are read family-wise, at the interval policy's level;
- the presets' concordance (:func:`harness.peers.rank_concordance.concordance`): Kendall τ
  between presets and the reversals between presets the band confirms.

Below the policy's minimum prompts (6 at 95 %) nothing is confirmed: ``reason`` says
"not confirmable: 2 prompts (needs 6)".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.core.numbers import finite_or_none
from harness.stats.bootstrap import generator_mean_draws, prompt_mean_draws, prompt_weights
from harness.stats.envelopes import envelopes
from harness.stats.intervals import DEFAULT_POLICY, interval
from harness.stats.simultaneous import simultaneous_band

GRID, PRESET = "grid", "preset"


@dataclass(frozen=True)
class ProtocolGap:
    """Δ_AB at one protocol: ``name`` (``baseline``, ``pitch=90``, a preset name), ``kind``
    (:data:`GRID` or :data:`PRESET`), the margin ``gap`` and its simultaneous-band interval
    ``[lo, hi]`` (NaN when the contrast is constant over prompts: no inferential claim)."""

    name: str
    kind: str
    gap: float
    lo: float
    hi: float

    @property
    def reversed(self) -> bool:
        """B scores above A here (the point margin)."""
        return bool(self.gap < 0)

    @property
    def confirmed_reversed(self) -> bool:
        return bool(np.isfinite(self.hi) and self.hi < 0)

    @property
    def confirmed_holds(self) -> bool:
        """A above B here, confirmed (the band's lower end above 0; a constant positive margin,
        which has no spread to resample, holds too)."""
        if np.isfinite(self.lo):
            return bool(self.lo > 0)
        return bool(self.gap > 0 and not np.isfinite(self.hi))

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "kind": self.kind, "gap": finite_or_none(self.gap),
                "band": [finite_or_none(self.lo), finite_or_none(self.hi)]}  # fmt: skip


@dataclass(frozen=True)
class GeneratorScore:
    """A generator's c0 score: the mean over prompts and its pointwise interval."""

    generator: str
    mean: float
    lo: float
    hi: float


@dataclass(frozen=True)
class PairEvidence:
    """The grid and preset evidence of "``a`` beats ``b``" (module doc). ``envelope``: (lo,
    hi, category) of Δ over the grid; ``c0``: (gap, lo, hi), the pointwise interval."""

    a: str
    b: str
    n_prompts: int
    c0: tuple[float, float, float]
    envelope: tuple[float, float, str]
    grid: tuple[ProtocolGap, ...]
    presets: tuple[ProtocolGap, ...]
    band_q: float
    level: float
    reason: str

    @property
    def protocols(self) -> tuple[ProtocolGap, ...]:
        return self.grid + self.presets

    def reversing(self, kind: str | None = None) -> tuple[ProtocolGap, ...]:
        """Protocols whose point margin has B above A (of ``kind`` when given)."""
        return tuple(p for p in self.protocols if p.reversed and (kind is None or p.kind == kind))

    def to_dict(self) -> dict[str, object]:
        return {
            "a": self.a, "b": self.b, "prompts": self.n_prompts,
            "c0": {"gap": finite_or_none(self.c0[0]), "interval": [finite_or_none(self.c0[1]), finite_or_none(self.c0[2])]},
            "envelope": {"lo": finite_or_none(self.envelope[0]), "hi": finite_or_none(self.envelope[1]),
                         "category": self.envelope[2], "protocols": len(self.grid)},
            "band_q": finite_or_none(self.band_q), "level": self.level,
            "confirmable": not self.reason, "reason": self.reason,
            "grid": [p.to_dict() for p in self.grid],
            "presets": [p.to_dict() for p in self.presets],
            "reversing": {"grid": [p.name for p in self.reversing(GRID)],
                          "presets": [p.name for p in self.reversing(PRESET)]},
        }  # fmt: skip


def generator_scores(c0: np.ndarray, generators: Sequence[str], weights: np.ndarray) -> tuple[GeneratorScore, ...]:
    """Each generator's c0 mean with its pointwise interval: ``c0`` ``(G, P)``."""
    draws = generator_mean_draws(c0, weights)  # (B, G)
    p = c0.shape[1]
    out = []
    for i, g in enumerate(generators):
        lo, hi = interval(draws[:, i], n_blocks=p).as_tuple()
        out.append(GeneratorScore(g, float(np.nanmean(c0[i])), float(lo), float(hi)))
    return tuple(out)


def pair_evidence(
    generators: Sequence[str],
    pairs: Sequence[tuple[int, int]],
    grid_ids: Sequence[str],
    grid: np.ndarray,
    preset_names: Sequence[str] = (),
    presets: np.ndarray | None = None,
    *,
    weights: np.ndarray,
    level: float = DEFAULT_POLICY.level,
) -> list[PairEvidence]:
    """:class:`PairEvidence` of each claimed pair ``(i, j)`` ("generator i beats generator j")
    from ``grid`` ``(G, P, Π)`` (column 0: c0) and ``presets`` ``(K, G, P)``, with one
    simultaneous band over every pair's contrasts; ``weights`` ``(B, P)`` prompt counts."""
    g = np.asarray(grid, dtype=np.float64)
    n_prompts = g.shape[1]
    blocks = []
    for i, j in pairs:
        d = g[i] - g[j]  # (P, Π)
        if presets is not None and len(preset_names):
            d = np.concatenate([d, (presets[:, i, :] - presets[:, j, :]).T], axis=1)  # (P, Π + K)
        blocks.append(d)
    contrasts = np.concatenate(blocks, axis=1)
    band = simultaneous_band(contrasts, weights, level=level)
    lo, hi = band.interval(np.arange(contrasts.shape[1]))
    reason = DEFAULT_POLICY.not_confirmable(n_prompts, level)
    width = blocks[0].shape[1]
    out = []
    for n, (i, j) in enumerate(pairs):
        cols = range(n * width, (n + 1) * width)
        gaps = [ProtocolGap(name, GRID if k < len(grid_ids) else PRESET, float(band.mean[c]), float(lo[c]), float(hi[c]))
                for k, (name, c) in enumerate(zip([*grid_ids, *preset_names], cols, strict=True))]  # fmt: skip
        c0_draws = prompt_mean_draws(g[i][:, :1] - g[j][:, :1], weights)[:, 0]
        c_lo, c_hi = interval(c0_draws, n_blocks=n_prompts, level=level).as_tuple()
        env = envelopes(np.nanmean(g[[i, j]], axis=1))  # means (2, Π): one pair
        out.append(PairEvidence(
            generators[i], generators[j], n_prompts, (gaps[0].gap, float(c_lo), float(c_hi)),
            (float(env.lo[0]), float(env.hi[0]), env.categories[0]),
            tuple(gaps[: len(grid_ids)]), tuple(gaps[len(grid_ids):]), float(band.q), level, reason,
        ))  # fmt: skip
    return out


def weights_for(n_prompts: int, bootstrap: int, seed: int) -> np.ndarray:
    """The prompt-bootstrap counts ``(B, P)`` every interval of a claim reads."""
    return prompt_weights(n_prompts, bootstrap, seed)


def preset_concordance(presets: np.ndarray, names: Sequence[str], generators: Sequence[str], *,
                       bootstrap: int, seed: int) -> dict[str, object] | None:  # fmt: skip
    """The presets' concordance document (rankings, Kendall τ with intervals, confirmed
    reversals between presets; ``concordance --json``'s fields), ``None`` below two presets."""
    from harness.peers.rank_concordance import answer, concordance

    if presets is None or len(names) < 2:
        return None
    result = concordance(presets, tuple(names), tuple(generators), n_draws=bootstrap, seed=seed)
    return {**result.to_dict(), "answer": answer(result)}
