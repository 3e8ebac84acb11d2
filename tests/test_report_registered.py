"""Registered statistics in the report: a metric registered with ``compute`` and ``report``
among its places gets a "Registered statistics" section in report.html, a
``table_registered`` table and one terminal line per evaluator; with none registered nothing
of it appears."""

from __future__ import annotations

import json
import math
import re

import pytest

from harness.report.html.page import build_html
from harness.report.registered import registered_grid
from harness.report.tables import table_registered, write_tables
from harness.report.terminal import render_table, rows_from
from harness.vocab.metrics import MetricSpec, computed_metrics
from tests._metric_registry import own_statistics

SCALAR = "test_c0_spread"
KEYED = "test_spread_by"
HIDDEN = "test_not_in_report"


@pytest.fixture
def registered():
    """Two report metrics (a scalar, a keyed one with a hostile key label) and one that is
    kept out of the report; unregistered afterwards."""
    specs = [
        MetricSpec(SCALAR, "c0 spread", "score", +1, None, compute=lambda scores: 0.0),
        MetricSpec(KEYED, "spread by", "score", +1, "factor", key_labels={"pitch": "<b>pitch</b>"},
                   compute=lambda scores: {}),
        MetricSpec(HIDDEN, "hidden", "score", +1, None, places=frozenset({"summary"}),
                   compute=lambda scores: 0.0),
    ]
    with own_statistics(specs) as registered_specs:
        yield registered_specs


@pytest.fixture
def nothing_registered():
    """No statistic with its own ``compute``: neither one of the harness nor of a test."""
    with own_statistics():
        yield


def _summary() -> dict:
    return {"evaluators": {
        "ev-b": {"registered": {SCALAR: None, KEYED: {"yaw": 2.5}, HIDDEN: 9.0}},
        "ev-a": {"registered": {SCALAR: 0.123456, KEYED: {"pitch": 0.5, "yaw": math.nan}, HIDDEN: 9.0}},
    }}


def test_nothing_registered_means_no_grid_no_table_no_line(nothing_registered):
    assert not [m for m in computed_metrics() if "report" in m.places]
    assert registered_grid(_summary()) is None
    assert table_registered(_summary()) is None
    lines = render_table(rows_from(_summary(), []))
    assert not any("registered" in line for line in lines)


def test_the_grid_has_a_column_per_metric_and_key(registered):
    grid = registered_grid(_summary())
    assert [c.label for c in grid.columns] == ["test_c0_spread", "<b>pitch</b>", "test_spread_by[yaw]"]
    assert grid.rows == (("ev-a", (0.123456, 0.5, None)), ("ev-b", (None, None, 2.5)))


def test_the_table_lists_the_values(registered, tmp_path):
    table = table_registered(_summary())
    assert table.key == "table_registered"
    assert table.columns == ("Evaluator", "test_c0_spread", "<b>pitch</b>", "test_spread_by[yaw]")
    assert table.rows == (("ev-a", "0.1235", "0.5", "–"), ("ev-b", "–", "–", "2.5"))
    written = {p.name for p in write_tables([table], tmp_path)}
    assert {"table_registered.md", "table_registered.csv"} <= written
    assert "ev-a,0.1235,0.5,–" in (tmp_path / "table_registered.csv").read_text()


def test_the_terminal_lists_them_one_line_per_evaluator(registered):
    lines = render_table(rows_from(_summary(), []))
    assert lines[-2:] == [
        "ev-a registered: test_c0_spread 0.1235, <b>pitch</b> 0.5, test_spread_by[yaw] —",
        "ev-b registered: test_c0_spread —, <b>pitch</b> —, test_spread_by[yaw] 2.5",
    ]
    assert not any(HIDDEN in line for line in lines)


def test_the_page_shows_them_escaped(registered, report):
    plain = build_html(report)
    assert 'id="registered"' in plain  # registered: the section is there, even without values
    summary = json.loads((report / "summary.json").read_text())
    evaluators = sorted(summary["evaluators"])
    for i, ev in enumerate(evaluators):
        summary["evaluators"][ev]["registered"] = {SCALAR: 0.25 + i, KEYED: {"pitch": 0.75}, HIDDEN: 1.0}
    (report / "summary.json").write_text(json.dumps(summary))
    page = build_html(report)
    start = page.index('<section id="registered">')
    section = page[start:page.index("</section>", start)]
    assert "<h2>Registered statistics</h2>" in section
    assert f'<tr data-ev="{evaluators[0]}"><th scope="row">{evaluators[0]}</th><td>0.25</td><td>0.75</td>' in section
    assert "<td>1.25</td>" in section
    assert "&lt;b&gt;pitch&lt;/b&gt;" in section and "<b>pitch" not in section
    assert "hidden" not in section and HIDDEN not in section
    assert '<a href="#registered">Registered</a>' in page
    assert not re.search(r"\son[a-z]+\s*=", section)  # no inline event handler (the CSP forbids them)
    assert page.count("<script") == 2  # the page's own: the thumbnail data and its one script


def test_the_page_has_no_section_without_registration(nothing_registered, report):
    # the shared tiny report was built under whatever statistics were registered then, and
    # the page lists the tables its directory holds: a report written without any has none
    for table in (report / "tables").glob("table_registered.*"):
        table.unlink()
    page = build_html(report)
    assert 'id="registered"' not in page and "Registered statistics" not in page
