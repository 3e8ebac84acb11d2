"""The thresholds that can gate a run: the configured ones, less those the run cannot reach.

Without factorial blocks in the profile the block thresholds
(``harness.thresholds.BLOCK_THRESHOLDS``) are dropped, and without ``--audit-human`` the human
ones (``HUMAN_THRESHOLDS``), so an OFAT-only run's id, manifest and cards do not depend on them.
"""

from __future__ import annotations

from harness.thresholds import Thresholds


def gate_thresholds(thresholds: Thresholds, *, blocks: bool, human: bool) -> Thresholds:
    """``thresholds`` without the block ones unless ``blocks``, the human ones unless ``human``."""
    from harness.thresholds import BLOCK_THRESHOLDS, HUMAN_THRESHOLDS

    drop = () if blocks else BLOCK_THRESHOLDS
    drop += () if human else HUMAN_THRESHOLDS
    return thresholds.without(drop) if drop else thresholds
