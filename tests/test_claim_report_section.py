"""The claims an audit's tests make, in its report: the request each test report carries, the
controller's collection of them, the folder names and the report.html section (escaped)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from harness.claims.in_audit import (
    CLAIM_PROPERTY,
    folder_name,
    request_of_property,
    request_property,
)
from harness.claims.inputs import ClaimRequest
from harness.report.html.page import build_html
from harness.run.aggregate import ControllerSink


def test_a_request_survives_its_property_string():
    request = ClaimRequest("ref-vit-clip", "mine", "theirs", profile="default", scenes=Path("/data/my set"),
                           presets="mate3d,gpteval3d", search_budget=4, flip_points=0, seed=7, bootstrap=500,
                           generators=("a", "b"))  # fmt: skip
    text = request_property(request)
    assert json.loads(text)["scenes"] == "/data/my set"
    assert request_of_property(text) == request


@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))
def test_folder_names_are_one_safe_path_part(evaluator, a, b):
    name = folder_name(ClaimRequest(evaluator, a, b), "0123456789abcdef")
    assert re.fullmatch(r"[A-Za-z0-9._-]+--[A-Za-z0-9._-]+-vs-[A-Za-z0-9._-]+--01234567", name), name
    assert name not in (".", "..") and "/" not in name


def test_the_controller_hands_on_the_claims_of_the_reported_evaluators_once_each():
    asked = []
    sink = ControllerSink(claim_files=lambda props: asked.append(list(props)) or {"x": {"claim.md": b"m"}})
    one = request_property(ClaimRequest("e1", "a", "b"))
    other = request_property(ClaimRequest("e2", "a", "b"))
    for props in ([(CLAIM_PROPERTY, one)], [(CLAIM_PROPERTY, one), ("someone_else", "x")], [(CLAIM_PROPERTY, other)]):
        sink.add_report(SimpleNamespace(user_properties=props))
    assert sink._claim_files(["e1"]) == {"x": {"claim.md": b"m"}}
    assert asked == [[one]]
    assert sink._claim_files(["e3"]) == {} and len(asked) == 1  # no claim of e3: nothing computed
    assert ControllerSink()._claim_files(["e1"]) == {}


def test_the_report_shows_each_claim_escaped_with_its_paper_block_and_link(report):
    folder = report / "claims" / "ev--a-vs-b--01234567"
    folder.mkdir(parents=True)
    doc = {"evaluator": "ev<i>", "card_id": "ecc-v1-sha256:ab",
           "verdict": {"line": "a beats b: <script>alert(1)</script>", "evidence": "descriptive"}}  # fmt: skip
    (folder / "claim.json").write_text(json.dumps(doc))
    (folder / "claim.md").write_text("| a | <b>1</b> |\n")
    page = build_html(report)
    section = page[page.index('<section id="claims">'):]
    section = section[: section.index("</section>")]
    assert "a beats b: &lt;script&gt;alert(1)&lt;/script&gt;" in section and "<script>alert" not in page
    assert "| a | &lt;b&gt;1&lt;/b&gt; |" in section and "ev&lt;i&gt;" in section
    assert 'href="claims/ev--a-vs-b--01234567/claim.html"' in section
    assert '<a href="#claims">Claims</a>' in page


def test_a_report_without_claims_has_no_claims_section(report):
    page = build_html(report)
    assert '<section id="claims">' not in page and 'href="#claims"' not in page
