"""The compare output of OFAT releases does not move for the metrics the golden files hold
(a compared metric registered since is left out; ``python -m tests._compare_golden --write``
takes it in)."""

from __future__ import annotations

import json

from tests._compare_golden import (
    JSON_FILE,
    MARKDOWN_FILE,
    assert_same,
    golden_metric_names,
    golden_outputs,
)


def test_ofat_compare_output_is_unchanged():
    want = json.loads(JSON_FILE.read_text(encoding="utf-8"))
    text, markdown = golden_outputs(only=golden_metric_names(want))
    assert_same(json.loads(text), want)
    assert markdown == MARKDOWN_FILE.read_text(encoding="utf-8")
