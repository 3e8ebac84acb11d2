"""The confirmed tier: every gated interval estimate of one evaluator, read at one family-wise level.

A check is *descriptive* when its point estimate is compared with the threshold (as the study
reports it) and *confirmed* when an interval clears it. One evaluator's audit gates a family of
K interval estimates (ρ per factor, peak ρ, discrimination per probe); each pointwise 95 %
interval would give it K chances to fail by noise. The confirmed tier reads every member at the
Bonferroni level ``1 − 2α/K`` (two-sided; a check fails on one side only, so the chance that
any member of an evaluator sitting exactly on its thresholds is confirmed failing is at most
α = 5 %), with the interval policy's small-sample construction over the P prompt blocks
(:func:`harness.stats.intervals.interval`). Below the policy's minimum blocks *at that level*
(:meth:`IntervalPolicy.min_blocks`) nothing is confirmable: the most extreme resample of P
blocks, 2⁻ᴾ, must be at most the one-sided error α/K.

Bonferroni, not max-t, because the members have different units (a ratio, a fraction) and their
bootstrap SEs from a few prompts are noisy (see :func:`~harness.stats.intervals.max_t_band`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from harness.core.numbers import finite_or_none

if TYPE_CHECKING:  # numpy and the interval policy are read only when intervals are built
    import numpy as np

    from harness.stats.intervals import IntervalPolicy

#: The family-wise false-confirmation rate the confirmed tier controls, per evaluator.
FAMILY_ALPHA = 0.05
#: The key of an estimate without one (peak ρ) in :attr:`FamilyConfirmation.intervals`.
NO_KEY = ""

Member = tuple[str, "str | None", "np.ndarray"]  # (metric, key or None, (B,) draws)


@dataclass(frozen=True)
class FamilyConfirmation:
    """One evaluator's confirmation intervals: ``family`` members, each read at ``level``
    over ``n_blocks`` prompt blocks; ``min_blocks`` the fewest at which that level can be
    confirmed; ``intervals``: metric → key (``""`` for none) → (low, high)."""

    family: int
    level: float
    n_blocks: int
    min_blocks: int
    intervals: Mapping[str, Mapping[str, tuple[float, float]]] = field(
        default_factory=lambda: MappingProxyType({}))

    @property
    def confirmable(self) -> bool:
        return self.family > 0 and self.n_blocks >= self.min_blocks

    @property
    def reason(self) -> str:
        """Why nothing is confirmable (``""`` when it is)."""
        if self.family == 0:
            return "not confirmable: no interval estimate to confirm"
        if self.n_blocks < self.min_blocks:
            return (f"not confirmable: {self.n_blocks} prompts (a family of {self.family} interval "
                    f"checks needs {self.min_blocks})")  # fmt: skip
        return ""

    def interval(self, metric: str, key: str | None = None) -> tuple[float, float] | None:
        """The confirmation interval of ``metric`` (per ``key``), ``None`` when not a member."""
        found = self.intervals.get(metric, {}).get(NO_KEY if key is None else str(key))
        return None if found is None else (float(found[0]), float(found[1]))

    def to_entry(self) -> dict[str, object]:
        """The ``confirmation`` object of an evaluator's summary.json entry."""
        return {
            "family": self.family, "alpha": FAMILY_ALPHA, "level": self.level, "n_blocks": self.n_blocks,
            "min_blocks": self.min_blocks, "confirmable": self.confirmable,
            "intervals": {name: {k: [finite_or_none(lo), finite_or_none(hi)] for k, (lo, hi) in keyed.items()}
                          for name, keyed in self.intervals.items()},
        }  # fmt: skip

    @classmethod
    def from_entry(cls, entry: object) -> FamilyConfirmation | None:
        """Read :meth:`to_entry`'s object back (``None`` when absent or not an object)."""
        if not isinstance(entry, Mapping):
            return None

        def bound(v: object) -> float:
            return float(v) if isinstance(v, int | float) else float("nan")

        raw = entry.get("intervals")
        intervals = {
            str(name): MappingProxyType({str(k): (bound(v[0]), bound(v[1])) for k, v in keyed.items()
                                         if isinstance(v, Sequence) and len(v) == 2})
            for name, keyed in (raw.items() if isinstance(raw, Mapping) else ()) if isinstance(keyed, Mapping)
        }  # fmt: skip
        return cls(int(entry.get("family", 0)), float(entry.get("level", 0.0)), int(entry.get("n_blocks", 0)),
                   int(entry.get("min_blocks", 0)), MappingProxyType(intervals))  # fmt: skip


def family_level(family: int, alpha: float = FAMILY_ALPHA) -> float:
    """The two-sided level each of ``family`` members is read at: ``1 − 2α/K`` (one-sided
    error α/K each)."""
    return 1.0 - 2.0 * alpha / max(family, 1)


def family_confirmation(members: Sequence[Member], n_blocks: int, *, alpha: float = FAMILY_ALPHA,
                        policy: IntervalPolicy | None = None) -> FamilyConfirmation:  # fmt: skip
    """The confirmation intervals of ``members`` (those with at least one finite draw),
    resampled over ``n_blocks`` prompt blocks (``policy``: default the interval policy's)."""
    import numpy as np

    from harness.stats.intervals import DEFAULT_POLICY, interval, withheld_ends

    policy = DEFAULT_POLICY if policy is None else policy
    kept = [(name, key, np.asarray(draws, dtype=np.float64)) for name, key, draws in members
            if draws is not None and np.isfinite(np.asarray(draws, dtype=np.float64)).any()]  # fmt: skip
    level = family_level(len(kept), alpha)
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for name, key, draws in kept:
        found = interval(draws, level=level, method="expanded percentile", n_blocks=n_blocks, policy=policy)
        bounds = withheld_ends((found.low, found.high), name, n_blocks)
        out.setdefault(name, {})[NO_KEY if key is None else str(key)] = bounds
    return FamilyConfirmation(len(kept), level, n_blocks, policy.min_blocks(level),
                              MappingProxyType({k: MappingProxyType(v) for k, v in out.items()}))  # fmt: skip
