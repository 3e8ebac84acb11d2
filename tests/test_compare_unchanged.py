"""The compare output of OFAT releases does not move when nothing extra is registered: the
golden files were written by the comparison before its metrics came from the registry."""

from __future__ import annotations

import json
import math

from tests._compare_golden import JSON_FILE, MARKDOWN_FILE, golden_outputs


def _same(got, want, path="$"):
    """Equal structure and values; floats equal to 1e-12 relative (last-bit summation order)."""
    if isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15), f"{path}: {got} != {want}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            _same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: length"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _same(g, w, f"{path}[{i}]")
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def test_ofat_compare_output_is_unchanged():
    text, markdown = golden_outputs()
    _same(json.loads(text), json.loads(JSON_FILE.read_text(encoding="utf-8")))
    assert markdown == MARKDOWN_FILE.read_text(encoding="utf-8")
