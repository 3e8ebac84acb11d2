"""``t3d-audit thresholds``: the threshold registry listed as text and JSON."""

from __future__ import annotations

import json

from harness.checks.thresholds import study_table
from harness.cli import main
from harness.vocab.metrics import (
    MAX_BEST_VIEW_INFLATION,
    MIN_STRICT_PAIRS,
    PEAK_RHO_MAX,
    THRESHOLDS,
    ThresholdSpec,
    register_threshold,
)


def test_thresholds_json_is_the_registry(capsys):
    assert main(["thresholds", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list(THRESHOLDS.names())
    assert {r["name"]: r["default"] for r in rows if r["default"] is not None} == study_table()
    by_name = {r["name"]: r for r in rows}
    assert by_name[PEAK_RHO_MAX] == {
        "name": PEAK_RHO_MAX, "direction": "max", "default": 1.0, "scope": "study",
        "description": THRESHOLDS.get(PEAK_RHO_MAX).description,
    }
    assert by_name[MIN_STRICT_PAIRS]["default"] is None
    assert {r["scope"] for r in rows} == {"study", "blocks", "human", "search", "presentation"}


def test_thresholds_text(capsys):
    assert main(["thresholds"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "dir", "default", "scope", "description"]
    assert [line.split()[0] for line in lines[1:]] == list(THRESHOLDS.names())  # one row each
    by_name = {line.split()[0]: line.split() for line in lines[1:]}
    assert by_name[MAX_BEST_VIEW_INFLATION][1:4] == ["max", "1.25", "study"]
    assert by_name[MIN_STRICT_PAIRS][1:4] == ["min", "-", "study"]  # known, not gated by default


def test_thresholds_lists_a_registered_one(capsys):
    register_threshold(ThresholdSpec("max_c0_spread", "max", 0.5, "spread of c0 scores"))
    try:
        assert main(["thresholds", "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)
    finally:
        THRESHOLDS.unregister("max_c0_spread")
    assert rows[-1] == {"name": "max_c0_spread", "direction": "max", "default": 0.5,
                        "scope": "study", "description": "spread of c0 scores"}
