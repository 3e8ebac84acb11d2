"""The first screen of report.html: the verdict matrix first, the competence table next, figures
with a full-size view, small samples flagged, a comparison's regressions highlighted and named in
the headline (harness.report.html.overview; chromium through Playwright on the tiny project)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.report.html.overview import cell, excess, family_of, mark_regressions, regressions
from harness.report.html.page import build_html
from tests._html_report import CHROMIUM, playwright_or_skip


def _check(tested, threshold, op="<=", passed=None):
    ok = (tested <= threshold) if op == "<=" else (tested >= threshold)
    return {"tested": tested, "threshold": threshold, "op": op, "passed": ok if passed is None else passed}


def test_a_cell_is_coloured_by_outcome_and_margin():
    assert family_of("audit_tests/test_configuration_ratio.py::test_rho[x-pitch]") == "configuration ratio"
    assert excess(_check(2.5, 1.0)) == 2.5 and excess(_check(0.3, 0.6, ">=")) == 2.0
    assert excess(_check(0.0, 0.0)) is None  # no ratio to a zero threshold
    far = [{"outcome": "failed", "checks": [_check(2.5, 1.0)]}, {"outcome": "passed", "checks": [_check(0.5, 1.0)]}]
    assert cell(far) == ("fail far", "✗ 1 of 2 failed", "1 of 2 tests failed, worst 2.5× its threshold")
    assert cell([{"outcome": "failed", "checks": [_check(1.5, 1.0)]}])[0] == "fail"
    assert cell([{"outcome": "passed", "checks": [_check(0.95, 1.0)]}])[0] == "pass near"
    assert cell([{"outcome": "passed", "checks": [_check(0.5, 1.0)]}])[0] == "pass"
    assert cell([{"outcome": "skipped", "checks": []}])[0] == "skipped"
    assert cell([]) == ("none", "not run", "no test of this family ran for this evaluator")


def test_regression_rows_are_marked_and_named():
    doc = {"pairs": [{"candidate_evaluator": "b", "n_prompts": 2, "metrics": [
        {"kind": "rho", "subject": "pitch", "verdict": "regression"},
        {"kind": "min_w", "subject": None, "verdict": "no change"}]}]}  # fmt: skip
    assert regressions(doc) == ["b: rho[pitch]"]
    table = "<tr><td>rho</td><td>regression (indicative)</td></tr><tr><td>min_w</td><td>no change</td></tr>"
    assert mark_regressions(table) == ('<tr class="regression"><td>rho</td><td>regression (indicative)</td></tr>'
                                       "<tr><td>min_w</td><td>no change</td></tr>")




def _with_regression(report: Path) -> None:
    """Add a comparison whose first metric is (planted as) a regression, and rebuild the page."""
    out = report.parent / "cmp"
    assert main(["compare", str(report), str(report), "--pair", "tiny-grid=tiny-grid",
                 "--bootstrap", "50", "--out", str(out)]) in (0, 1)
    doc = json.loads((out / "comparison.json").read_text())
    doc["pairs"][0]["metrics"][0]["verdict"] = "regression"
    (report / "comparison.json").write_text(json.dumps(doc))
    assert main(["html", str(report)]) == 0


def test_the_page_opens_with_the_matrix_then_competence_then_details(report):
    _with_regression(report)
    page = build_html(report)
    main_html = page[page.index('<main id="main">'):]
    assert main_html.startswith('<main id="main"><section id="verdict-matrix">')
    matrix = main_html[: main_html.index("</section>")]
    assert "tiny-grid" in matrix and "configuration ratio" in matrix and 'class="m fail' in matrix
    assert "Small sample" in matrix and "2 prompt blocks" in matrix  # the tiny set has 2 prompts
    assert "the release comparison finds 1 regression: tiny-grid:" in matrix
    assert main_html.index('id="verdict-matrix"') < main_html.index('id="verdict"')
    assert '<tr class="regression">' in page and "(indicative)" in page


def test_the_overview_in_chromium(report, tmp_path):
    _with_regression(report)
    sync_playwright = playwright_or_skip()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            requests: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto((report / "report.html").as_uri(), wait_until="load")
            first = page.evaluate("document.querySelector('main > section').id")
            assert first == "verdict-matrix"
            assert page.locator("#verdict-matrix table.matrix").is_visible()  # on the first screen
            box = page.locator("#verdict-matrix table.matrix").bounding_box()
            assert box is not None and box["y"] < 900
            figures = page.locator("#figures figure.fig")
            assert figures.count() >= 3
            for i in range(figures.count()):
                fig = figures.nth(i)
                shown = fig.locator("img").bounding_box()
                fig.locator("a").first.click()  # the image opens its full-size view
                key = page.evaluate("location.hash")[1:]
                view = page.locator(f"#{key}")
                assert view.is_visible()
                natural = view.locator("img").evaluate("img => img.naturalWidth")
                full = view.locator("img").bounding_box()
                assert full["width"] == pytest.approx(natural, abs=1)  # full resolution, not scaled
                assert natural >= shown["width"] * 0.99
                assert fig.locator("a[href^='figures/']").count() == 1  # and the PNG file
                view.locator("a.close").click()
                assert not view.is_visible()
            assert page.locator("tr.regression").count() >= 1
            assert errors == []
        finally:
            browser.close()
    outside = [u for u in requests if not u.startswith(("file:", "data:"))]
    assert outside == []


def _summary(discrimination):
    entry = {"dispersion": {"pitch": 0.1, "yaw": 0.2}, "discrimination": discrimination, "peak_rho": 1.5,
             "peak_rho_ci": [1.0, 2.0], "envelopes": {"strict": 2, "sign_crossing": 1, "tie_boundary": 0}}
    return {"evaluators": {"only": entry}}


def test_figures_are_high_dpi_and_nothing_empty_is_drawn(tmp_path):
    from PIL import Image

    from harness.report.figures import DPI, write_figures

    written = write_figures(_summary({"keep_half": 0.8, "scrambled": 0.4}), tmp_path / "a")
    assert {p.name for p in written} == {"dispersion.png", "discrimination.png", "peak_rho.png", "envelopes.png"}
    for path in written:
        with Image.open(path) as image:
            assert round(image.info["dpi"][0]) == DPI >= 200
    # regression: object scenes (no probe value) got an empty discrimination plot
    stale = tmp_path / "b" / "discrimination.png"
    stale.parent.mkdir()
    stale.write_bytes(b"old")
    written = write_figures(_summary({"worst_objects": None}), tmp_path / "b")
    assert "discrimination.png" not in {p.name for p in written} and not stale.exists()


def test_a_missing_figure_says_why(report):
    (report / "figures" / "discrimination.png").unlink()
    page = build_html(report)
    section = page[page.index('<section id="figures">'):]
    section = section[: section.index("</section>")]
    assert "No content-probe figure: no probe was measured on this run" in section
    assert 'alt="Directional discrimination' not in section


def test_every_dash_on_the_page_is_explained(report):
    page = build_html(report)
    for section in ("tables",):
        body = page[page.index(f'<section id="{section}">'):]
        assert "A — in a cell: the run does not measure it" in body[: body.index("</section>")]


def test_heatmap_numbers_are_shown_large_enough(report, tmp_path):
    # regression: the D heatmap was shown ~350 px wide, its numbers unreadable
    sync_playwright = playwright_or_skip()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto((report / "report.html").as_uri(), wait_until="load")
            img = page.locator("#figures figure.wide img").first
            natural = img.evaluate("img => img.naturalWidth")
            shown = img.bounding_box()["width"]
            # 8 pt numbers at 200 dpi are 22 px in the PNG: at least 11 px on screen
            assert shown / natural >= 0.5 or shown >= 1100
        finally:
            browser.close()
