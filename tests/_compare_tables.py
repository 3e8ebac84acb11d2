"""A hand-computable pair of releases for the comparison tests: 2 generators x 2 prompts."""

from __future__ import annotations

import hashlib

import pandas as pd

from harness.protocol.records import records_from_rows


def scene_sha(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def tiny_release(pitch: dict[tuple[str, str], tuple[float, float]]) -> pd.DataFrame:
    """2 generators × 2 prompts; c0 scores g0: (4, 2), g1: (1, 1); pitch levels 0 and 90."""
    c0 = {("g0", "p0"): 4.0, ("g0", "p1"): 2.0, ("g1", "p0"): 1.0, ("g1", "p1"): 1.0}
    rows = []
    for (g, p), s in c0.items():
        common = dict(evaluator="ev", generator=g, prompt_id=p, scene_sha256=scene_sha(g, p), caption="a room", status="ok")
        rows.append(dict(common, factor="baseline", level="c0", score=s))
        for level, value in zip(("0", "90"), pitch[(g, p)], strict=True):
            rows.append(dict(common, factor="pitch", level=level, score=value))
    return records_from_rows(rows)


BASE_PITCH = {("g0", "p0"): (4.0, 6.0), ("g0", "p1"): (2.0, 2.0), ("g1", "p0"): (1.0, 1.0), ("g1", "p1"): (0.0, 2.0)}
CAND_PITCH = {**BASE_PITCH, ("g0", "p0"): (4.0, 8.0)}


#: Block cells of :func:`block_release`, last factor fastest: (lighting, pitch).
BLOCK_CELLS = (("city", "0"), ("city", "90"), ("night", "0"), ("night", "90"))
#: 2 × 2 cell scores per scene, in BLOCK_CELLS order (hand-computed in tests/test_compare_blocks.py).
BASE_BLOCK = {("g0", "p0"): (1.0, 2.0, 3.0, 4.0), ("g0", "p1"): (0.0, 0.0, 0.0, 4.0),
              ("g1", "p0"): (1.0, 1.0, 1.0, 1.0), ("g1", "p1"): (2.0, 0.0, 0.0, 2.0)}


def block_release(cells: dict[tuple[str, str], tuple[float, ...]]) -> pd.DataFrame:
    """2 generators × 2 prompts; c0 as :func:`tiny_release`; one factorial block
    ``lighting:pitch`` with the cells :data:`BLOCK_CELLS`, no OFAT sweep."""
    c0 = {("g0", "p0"): 4.0, ("g0", "p1"): 2.0, ("g1", "p0"): 1.0, ("g1", "p1"): 1.0}
    rows = []
    for (g, p), s in c0.items():
        common = dict(evaluator="ev", generator=g, prompt_id=p, scene_sha256=scene_sha(g, p), caption="a room", status="ok")
        rows.append(dict(common, factor="baseline", level="c0", score=s))
        for (light, pitch), value in zip(BLOCK_CELLS, cells[(g, p)], strict=True):
            rows.append(dict(common, factor="block", level=f"lighting={light},pitch={pitch}", score=value))
    return records_from_rows(rows)
