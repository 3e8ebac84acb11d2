"""Every pairwise claim of N generators at once (``claim --all-pairs``): which claims are
protocol-robust, as a partial order.

Each pair (X, Y) with X before Y in the claimed order (``--generators``, best first; default
c0's order) is one claim "X beats Y", decided by :func:`harness.claims.verdict.decide` on one
simultaneous band over every pair's contrasts. Its class:

- ``robust``: the verdict is "holds everywhere tested" (X ≻ Y in the partial order);
- ``protocol-dependent``: it depends on the protocol, or flips off the grid;
- ``reversed``: Y scores at least as high as X at c0 (only with a claimed order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.claims.verdict import DEPENDS, HOLDS, OFF_GRID, REVERSED, Verdict

ROBUST, DEPENDENT, REVERSED_CLASS = "robust", "protocol-dependent", "reversed"
CLASSES = (ROBUST, DEPENDENT, REVERSED_CLASS)
_CLASS_OF = {HOLDS: ROBUST, DEPENDS: DEPENDENT, OFF_GRID: DEPENDENT, REVERSED: REVERSED_CLASS}


def pair_class(verdict: Verdict) -> str:
    """The class (module doc) of one pair's verdict."""
    return _CLASS_OF[verdict.kind]


@dataclass(frozen=True)
class PairRow:
    """One pairwise claim: "``first`` beats ``second``", its class, verdict kind and evidence."""

    first: str
    second: str
    cls: str
    kind: str
    evidence: str

    def to_dict(self) -> dict[str, str]:
        return {"first": self.first, "second": self.second, "class": self.cls, "verdict": self.kind,
                "evidence": self.evidence}  # fmt: skip


@dataclass(frozen=True)
class PartialOrder:
    """The claimed ``order`` and one :class:`PairRow` per pair; ``matrix[i][j]`` is the class
    of "order[i] beats order[j]" (``""`` on the diagonal and below it)."""

    order: tuple[str, ...]
    rows: tuple[PairRow, ...]

    def cls(self, first: str, second: str) -> str:
        return next((r.cls for r in self.rows if (r.first, r.second) == (first, second)), "")

    @property
    def matrix(self) -> list[list[str]]:
        return [[self.cls(x, y) for y in self.order] for x in self.order]

    def counts(self) -> dict[str, int]:
        return {c: sum(r.cls == c for r in self.rows) for c in CLASSES}

    def robust_relations(self) -> list[str]:
        """``X ≻ Y`` for every robust pair, in the claimed order."""
        return [f"{r.first} ≻ {r.second}" for r in self.rows if r.cls == ROBUST]

    def sentence(self, evaluator: str) -> str:
        """The partial order in one sentence."""
        c = self.counts()
        robust = "; ".join(self.robust_relations()) or "none"
        return (f"Under {evaluator}, {c[ROBUST]} of {len(self.rows)} pairwise claims hold everywhere tested "
                f"({robust}); {c[DEPENDENT]} depend on the protocol and {c[REVERSED_CLASS]} are reversed at c0.")

    def to_dict(self) -> dict[str, object]:
        return {"order": list(self.order), "pairs": [r.to_dict() for r in self.rows], "counts": self.counts(),
                "robust": self.robust_relations(), "matrix": self.matrix}  # fmt: skip


def partial_order(order: Sequence[str], verdicts: Sequence[tuple[str, str, Verdict]]) -> PartialOrder:
    """The :class:`PartialOrder` of ``verdicts`` (``(first, second, verdict)`` per pair)."""
    rows = tuple(PairRow(a, b, pair_class(v), v.kind, v.evidence) for a, b, v in verdicts)
    return PartialOrder(tuple(order), rows)
