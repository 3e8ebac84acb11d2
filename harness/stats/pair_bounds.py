"""Memory bounds of the pairwise statistics (Kendall's τ, tie-calibrated pairwise accuracy,
their bootstrap) and of the items × raters matrix.

These statistics hold every item pair at once (n items pooled give n(n−1)/2 pairs, about
120 bytes each through the sorts of the ε search), so a large pooled table would allocate
until the machine runs out of memory. Above :data:`MAX_PAIRS` pairs (about 3 GB) or
:data:`MAX_CELLS` matrix cells (400 MB of float64) they refuse with one
:class:`~harness.core.errors.HumanDataError` saying how to stay under the bound: group the pairs
(e.g. by prompt: pairs are formed within groups) or sample the items.
"""

from __future__ import annotations

from harness.core.errors import HumanDataError

MAX_PAIRS = 25_000_000  # item pairs one statistic holds at once (7 072 items pooled)
MAX_CELLS = 50_000_000  # cells of an items × raters (or items × items) matrix


def pair_count(group_sizes) -> int:
    """Pairs formed within groups of the given sizes: Σ m(m−1)/2 (exact integers)."""
    return sum(int(m) * (int(m) - 1) // 2 for m in group_sizes)


def check_pairs(pairs: int, *, what: str = "pairwise statistic") -> None:
    """Raise HumanDataError when ``pairs`` exceeds :data:`MAX_PAIRS`."""
    if pairs > MAX_PAIRS:
        raise HumanDataError(
            f"the {what} would hold {pairs:,} item pairs, over the bound of {MAX_PAIRS:,}",
            hint="group the pairs (e.g. by prompt) or sample fewer items; "
            "docs/human-agreement.md gives the bound",
        )


def check_cells(rows: int, columns: int, *, what: str = "matrix") -> None:
    """Raise HumanDataError when a ``rows`` × ``columns`` matrix exceeds :data:`MAX_CELLS`."""
    if int(rows) * int(columns) > MAX_CELLS:
        raise HumanDataError(
            f"the {what} would be {rows:,} × {columns:,} cells, over the bound of {MAX_CELLS:,}",
            hint="split the table (e.g. by dimension or rater group) or sample fewer items",
        )
