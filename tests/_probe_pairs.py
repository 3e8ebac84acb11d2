"""Probe pairs with a known outcome: the study's Table 10 (Appendix I) scrambled-probe counts."""

from __future__ import annotations

import numpy as np


def table10_pairs() -> tuple[np.ndarray, np.ndarray]:
    """300 (intact, scrambled) pairs built to match the study's Table 10 / Appendix I."""
    intact, probe = [], []

    def add(n, a, b):
        intact.extend([a] * n)
        probe.extend([b] * n)

    add(7, 0.0, 0.0)  # both zero: ties
    add(6, 0.0, 40.0)  # zero intact only: rises   -> 13 zero baselines
    add(10, 60.0, 0.0)  # zero scrambled only: drops -> 17 zero scrambled, 23 pairs
    add(114, 80.0, 60.0)  # clean drops
    add(70, 70.0, 70.0)  # clean ties
    add(93, 50.0, 90.0)  # clean rises
    return np.array(intact), np.array(probe)
