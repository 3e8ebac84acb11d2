"""Content probes: directional discrimination and zero/failed sensitivity (§3.3, App. I).

A probe edits the frozen scene in a way that should lower alignment with the original
prompt. Each (intact, probe) pair is a strict drop (credit 1), exact tie (0.5) or rise (0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def pair_credit(intact: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """Directional credit per pair: 1 drop, 0.5 exact tie, 0 rise, NaN if either failed.

    ``intact``, ``probe``: same shape (e.g. (G, P)), score units.
    """
    a = np.asarray(intact, dtype=np.float64)
    b = np.asarray(probe, dtype=np.float64)
    credit = np.where(b < a, 1.0, np.where(b == a, 0.5, 0.0))
    return np.where(np.isfinite(a) & np.isfinite(b), credit, np.nan)


@dataclass(frozen=True)
class ProbeOutcome:
    """Outcome decomposition of one probe over all its pairs.

    Counts are over pairs with both scores measured (``n``); ``n_failed`` pairs lack one of
    them. ``n_zero`` measured pairs involve a zero score (a value that a client may have
    stored for a failed call), and ``clean_credit`` is the credit of the other measured
    pairs. Rates are fractions.
    """

    drops: int
    ties: int
    rises: int
    n_failed: int
    n_zero: int
    clean_credit: float

    @property
    def n(self) -> int:
        return self.drops + self.ties + self.rises

    @property
    def n_total(self) -> int:
        return self.n + self.n_failed

    @property
    def strict_drop(self) -> float:
        return self.drops / self.n if self.n else float("nan")

    @property
    def tie_rate(self) -> float:
        return self.ties / self.n if self.n else float("nan")

    @property
    def rise_rate(self) -> float:
        return self.rises / self.n if self.n else float("nan")

    @property
    def discrimination(self) -> float:
        """Tie-adjusted directional discrimination (drop 1, tie ½, rise 0) over measured pairs."""
        return (self.drops + 0.5 * self.ties) / self.n if self.n else float("nan")

    @property
    def clean_discrimination(self) -> float:
        """Discrimination on the pairs free of zero scores (a selected, biased subset)."""
        k = self.n - self.n_zero
        return self.clean_credit / k if k else float("nan")

    @property
    def sensitivity_bounds(self) -> tuple[float, float]:
        """Deterministic bounds over all pairs when every zero-involved or failed pair may
        take any credit in [0, 1]: [c/N, (c + z + f)/N] (Appendix I)."""
        if not self.n_total:
            return (float("nan"), float("nan"))
        unsure = self.n_zero + self.n_failed
        return (self.clean_credit / self.n_total, (self.clean_credit + unsure) / self.n_total)


def probe_outcome(
    intact: np.ndarray, probe: np.ndarray, recorded: np.ndarray | None = None
) -> ProbeOutcome:
    """Decompose the (intact, probe) pairs of one probe; arrays of equal shape.

    ``recorded`` (bool, same shape) marks the pairs that were attempted (a probe record
    exists, ok or failed); an attempted pair with a NaN side counts as failed. Without it,
    pairs with at least one finite side are taken as attempted.
    """
    a = np.asarray(intact, dtype=np.float64).ravel()
    b = np.asarray(probe, dtype=np.float64).ravel()
    ok = np.isfinite(a) & np.isfinite(b)
    if recorded is None:
        present = np.isfinite(a) | np.isfinite(b)
    else:
        present = np.asarray(recorded, dtype=bool).ravel() | ok
    a, b = a[ok], b[ok]
    zero = (a == 0) | (b == 0)
    credit = pair_credit(a, b)
    return ProbeOutcome(
        drops=int((b < a).sum()),
        ties=int((b == a).sum()),
        rises=int((b > a).sum()),
        n_failed=int((present & ~ok).sum()),
        n_zero=int(zero.sum()),
        clean_credit=float(credit[~zero].sum()),
    )


def content_accuracy(discriminations: dict[str, float]) -> float:
    """Plain mean of the probes' tie-adjusted discriminations (Table 17 'Mean (4)')."""
    vals = [v for v in discriminations.values() if np.isfinite(v)]
    return float(np.mean(vals)) if vals else float("nan")
