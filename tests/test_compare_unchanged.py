"""The compare output of OFAT releases does not move for what the golden files hold: the
factors, probes and compared metrics they name (``tests/_compare_covered.py``). Anything
registered since is left out; ``python -m tests._compare_golden --write`` takes it in."""

from __future__ import annotations

from tests._compare_covered import assert_golden_unchanged


def test_ofat_compare_output_is_unchanged():
    assert_golden_unchanged()
