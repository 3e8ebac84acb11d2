"""The compare output of OFAT releases does not move when nothing extra is registered: the
golden files were written by the comparison before its metrics came from the registry. The
goldens are compared over the factors and probes they name (``tests/_compare_covered.py``)."""

from __future__ import annotations

from tests._compare_covered import assert_golden_unchanged


def test_ofat_compare_output_is_unchanged():
    assert_golden_unchanged()
