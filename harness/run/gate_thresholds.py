"""The thresholds that can gate a run: the configured ones, less those the run cannot reach.

Without factorial blocks in the profile the block thresholds
(``harness.checks.thresholds.block_thresholds()``) are dropped, and without ``--audit-human`` the human
ones (``human_thresholds()``), so an OFAT-only run's id, manifest and cards do not depend on them.
"""

from __future__ import annotations

from harness.checks.thresholds import Thresholds


def gate_thresholds(
    thresholds: Thresholds, *, blocks: bool, human: bool, search: bool = False, presentation: bool = False
) -> Thresholds:
    """``thresholds`` without the block ones unless ``blocks``, the human ones unless ``human``,
    the search ones unless ``search`` (a profile's search block), the presentation ones unless
    ``presentation`` (an audit under a protocol preset)."""
    from harness.checks.thresholds import (
        block_thresholds,
        human_thresholds,
        presentation_thresholds,
        search_thresholds,
    )

    drop = () if blocks else block_thresholds()
    drop += () if human else human_thresholds()
    drop += () if search else search_thresholds()
    drop += () if presentation else presentation_thresholds()
    return thresholds.without(drop) if drop else thresholds
