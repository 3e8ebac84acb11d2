"""report.html and thumbs/: written by every audit run, rebuilt by ``t3d-audit html`` from the
report directory alone, checked by ``validate --deep``, and driven in a real browser (Debian's
chromium through Playwright) on a tiny audit project (box rasterizer, numpy evaluators)."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from harness.cards.provenance import load_manifest, output_entries, write_manifest
from harness.cli import main
from harness.report.html.page import build_html
from harness.report.validation import check_report
from tests._html_report import CHROMIUM, playwright_or_skip


def test_the_writer_adds_report_html_and_thumbs_listed_in_the_manifest(report):
    listed = {e["path"] for e in load_manifest(report)["outputs"]}
    assert "report.html" in listed and "thumbs/index.json" in listed
    index = json.loads((report / "thumbs" / "index.json").read_text())
    files = {i["file"] for i in index["images"] if i["file"]}
    assert files and all(f"thumbs/{f}" in listed for f in files)
    # every image of the shown prompts: baseline, each factor level, each probe
    factors = {i["factor"] for i in index["images"]}
    assert {"baseline", "probe", "pitch", "template"} <= factors
    problems, _notes = check_report(report, deep=True, figures=False)
    assert problems == []


def test_html_rebuilds_byte_identical_from_the_report_directory(report, capsys):
    written = (report / "report.html").read_bytes()
    assert build_html(report).encode() == written  # deterministic, from the directory alone
    (report / "report.html").unlink()
    assert main(["html", str(report)]) == 0
    assert (report / "report.html").read_bytes() == written
    assert "report.html" in capsys.readouterr().out
    assert check_report(report)[0] == []


def test_the_page_is_self_contained(report):
    text = (report / "report.html").read_text()
    assert not re.search(r"""(src|href|action)\s*=\s*["']?(https?:|//)""", text, re.I)
    assert "<link" not in text and "<script src" not in text and "@import" not in text
    assert "url(" not in text
    # thumbnails are embedded and decoded lazily; the larger copy is linked relatively
    assert re.search(r'<img data-thumb="[0-9a-f]{16}" alt="[^"]+score', text)
    assert re.search(r'href="thumbs/[0-9a-f]{16}\.jpg"', text)
    assert '"data:image/jpeg;base64,' in text


def test_validate_deep_flags_an_edited_page_even_when_rehashed(report):
    path = report / "report.html"
    path.write_text(path.read_text().replace("Verdict</h2>", "Verdict</h2><p>all good</p>", 1))
    manifest = load_manifest(report)
    manifest["outputs"] = output_entries(report)
    write_manifest(manifest, report)
    assert check_report(report)[0] == []  # hashes agree
    problems, _ = check_report(report, deep=True, figures=False)
    assert any(p.startswith("report.html: differs") for p in problems), problems


def test_a_report_without_thumbs_still_gets_a_page(report):
    # a report written without thumbnails: no thumbs/ folder and none listed in its manifest
    shutil.rmtree(report / "thumbs")
    manifest = load_manifest(report)
    manifest["outputs"] = [e for e in manifest["outputs"] if not e["path"].startswith("thumbs/")]
    write_manifest(manifest, report)
    assert main(["html", str(report)]) == 0
    text = (report / "report.html").read_text()
    assert "no thumbnail in this report" in text and "<img data-thumb" not in text
    assert check_report(report)[0] == []


def test_html_of_a_missing_directory_is_one_error_line(tmp_path, capsys):
    assert main(["html", str(tmp_path / "nope")]) == 2
    assert main(["html", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "not a directory" in err and "no summary.json" in err and "Traceback" not in err


def test_the_comparison_is_shown_with_its_intervals(report):
    out = report.parent / "cmp"
    code = main(["compare", str(report), str(report), "--pair", "tiny-grid=tiny-grid",
                 "--bootstrap", "50", "--out", str(out)])
    assert code in (0, 1)
    shutil.copy(out / "comparison.json", report / "comparison.json")
    assert main(["html", str(report)]) == 0
    text = (report / "report.html").read_text()
    doc = json.loads((report / "comparison.json").read_text())
    metric = doc["pairs"][0]["metrics"][0]
    assert 'id="comparison"' in text and "tiny-grid → tiny-grid" in text
    assert "95% CI" in text and metric["verdict"] in text
    assert check_report(report)[0] == []  # comparison.json and the new page are listed


# ----------------------------------------------------------------------------- figures


def test_competence_section_only_with_a_companion_agreement(report):
    assert 'id="competence"' not in build_html(report)  # the tiny project has no companion
    card_path = next((report / "cards").glob("*.json"))
    card = json.loads(card_path.read_text())
    card["companion_check"] = {"kind": "geometry_grounded", "details": "x", "agreement": {
        "pair_agreement": 0.81, "n_pairs": 700, "ranking_tau": 0.6, "winner": "faithful",
        "companion_winner": "faithful", "probes": {}}}  # fmt: skip
    card_path.write_text(json.dumps(card))
    page = build_html(report)
    section = page[page.index('<section id="competence">') :]
    section = section[: section.index("</section>")]
    assert "81%" in section and "like the symbolic companion at the default view" in section
    assert '<a href="#competence">' in page


def test_peak_rho_axis_is_linear_from_zero_with_the_companions_noise_at_zero():
    # regression: a log axis spanning 30 decades because the companion's rho is ~1e-31
    from harness.report.figures import peak_rho_figure

    summary = {"evaluators": {
        "companion": {"peak_rho": 3.2e-31, "peak_rho_ci": [1.6e-31, 4.5e-31]},
        "clip": {"peak_rho": 3.0, "peak_rho_ci": [1.1, 6.0]},
    }}
    _fig, ax = peak_rho_figure(summary)
    assert ax.get_xscale() == "linear"
    lo, hi = ax.get_xlim()
    assert lo == 0 and 6.0 < hi < 10
    points = [line.get_xdata()[0] for line in ax.get_lines() if line.get_marker() == "o"]
    assert sorted(points) == [0.0, 3.0]
    wide = {"evaluators": {"a": {"peak_rho": 5.0, "peak_rho_ci": [1.0, 400.0]}}}
    _fig, ax = peak_rho_figure(wide)
    assert ax.get_xscale() == "symlog" and ax.get_xlim()[0] == 0


# ----------------------------------------------------------------------------- browser


def test_the_page_in_chromium(report, tmp_path):
    sync_playwright = playwright_or_skip()
    shot = Path(os.environ.get("T3D_HTML_SCREENSHOT") or tmp_path / "report.png")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            requests: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda r: requests.append(r.url))
            t0 = time.perf_counter()
            page.goto((report / "report.html").as_uri(), wait_until="load")
            load_s = time.perf_counter() - t0
            assert errors == []
            assert load_s < 3.0
            # keyboard: the skip link is the first stop
            page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.className") == "skip"

            # filters: one evaluator, then failing only
            rows = page.locator("table.verdict tbody tr")
            assert rows.count() >= 2
            page.select_option("#f-ev", "tiny-grid")
            visible = [r.get_attribute("data-ev") for r in rows.all() if r.is_visible()]
            assert visible == ["tiny-grid"]
            assert not page.locator('details.ev[data-ev="tiny-pairs"]').first.is_visible()
            page.select_option("#f-ev", "")
            page.check("#f-failing")
            statuses = {r.get_attribute("data-status") for r in rows.all() if r.is_visible()}
            assert statuses == {"fail"}  # peak_rho_max = 0.001 fails tiny-grid
            page.uncheck("#f-failing")

            # sorting: the verdict table by evaluator, descending then ascending
            names = sorted(r.get_attribute("data-ev") for r in rows.all())
            header = page.locator("table.verdict thead th button").first
            header.click()
            header.click()
            assert [r.get_attribute("data-ev") for r in rows.all()] == names[::-1]
            header.focus()
            page.keyboard.press("Enter")  # sortable from the keyboard too
            assert [r.get_attribute("data-ev") for r in rows.all()] == names

            # the row filter of a statistics table
            page.locator("details.table summary").first.click()
            table = page.locator("details.table").first
            body_rows = table.locator("tbody tr")
            before = sum(r.is_visible() for r in body_rows.all())
            table.locator("input.rowfilter").fill("tiny-pairs")
            after = sum(r.is_visible() for r in body_rows.all())
            assert 0 < after < before or before == 0

            # thumbnails decode when opened and scrolled to, from data: URIs only
            page.locator('details.ev[data-ev="tiny-grid"] > summary').first.click()
            strip = page.locator('details.ev[data-ev="tiny-grid"] details.strip').first
            if not strip.get_attribute("open"):
                strip.locator("summary").click()
            img = strip.locator("img").first
            img.scroll_into_view_if_needed()
            page.wait_for_function("img => img.src.startsWith('data:image/jpeg')", arg=img.element_handle())
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(shot), full_page=False)
            assert errors == []
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    outside = [u for u in requests if not u.startswith(("file:", "data:"))]
    assert outside == []


@pytest.mark.parametrize("edit", ["summary.json", "results.json", "scores", "cards", "remove"])
def test_html_refuses_to_rebless_an_edited_report(report, capsys, edit):
    # regression: `t3d-audit html DIR` rewrote the manifest's hashes from whatever was on disk,
    # so an edited report passed `validate` again after its page was rebuilt
    if edit in ("scores", "cards"):
        target = next((report / edit).iterdir())
    else:
        target = report / ("summary.json" if edit == "remove" else edit)
    manifest_before = (report / "manifest.json").read_bytes()
    page_before = (report / "report.html").read_bytes()
    if edit == "remove":
        target.unlink()
    else:
        target.write_bytes(target.read_bytes().replace(b"0", b"1", 1) + b" ")
    assert main(["html", str(report)]) == 2
    err = capsys.readouterr().err
    assert "changed after it was written" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert (report / "manifest.json").read_bytes() == manifest_before
    assert (report / "report.html").read_bytes() == page_before
    assert check_report(report)[0] != []  # still caught by validate


def test_html_rehashes_only_its_page_and_the_comparison(report):
    (report / "notes.txt").write_text("added by hand")
    page = report / "report.html"
    page.write_text("stale page")
    assert main(["html", str(report)]) == 0
    listed = {e["path"]: e["sha256"] for e in load_manifest(report)["outputs"]}
    assert "notes.txt" not in listed  # an added file is not blessed either
    assert any("notes.txt: not listed" in p for p in check_report(report)[0])
    (report / "notes.txt").unlink()
    assert check_report(report)[0] == []  # the rebuilt page's hash was recorded
