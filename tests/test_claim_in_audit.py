"""A claim as an ordinary audit test (docs/claims.md "In an audit"): the ``audit_claim``
fixture gives the known answers of the planted evaluators on the bundled scenes (scene
evaluators: no Blender), the same document with ``-n 0`` and ``-n 2``, and bad input fails the
test with one line; each claim made is in the run's report (``claims/``, report.html)."""

from __future__ import annotations

import json

import pytest

from harness.report.validation import check_report

pytest_plugins = ["pytester"]

TEST_FILE = '''
import json
import os

EXPECTED = {"planted-pitch": ("depends", "confirmed"), "planted-robust": ("holds", "confirmed")}


def test_faithful_beats_gridded(audit_evaluator, audit_claim):
    doc = audit_claim("faithful", "gridded", presets="mate3d", search_budget=4, flip_points=0)
    verdict = doc["verdict"]
    assert (verdict["kind"], verdict["evidence"]) == EXPECTED[audit_evaluator], verdict["line"]
    again = audit_claim("faithful", "gridded", presets="mate3d", search_budget=4, flip_points=0)
    assert again is doc  # once per process
    folder = os.environ["CLAIM_DOCS"]
    with open(os.path.join(folder, f"{audit_evaluator}-{os.getpid()}.json"), "w") as fh:
        json.dump(_without_run_facts(doc), fh, sort_keys=True)


def _without_run_facts(value):
    """The document less what differs between two runs of the same claim: wall-clock timings
    and the path of the search's log, which lives in each run's cache."""
    if isinstance(value, dict):
        return {k: _without_run_facts(v) for k, v in value.items() if k not in ("timing", "log")}
    if isinstance(value, list):
        return [_without_run_facts(v) for v in value]
    return value


def test_the_reverse_claim(audit_evaluator, audit_claim):
    doc = audit_claim("gridded", "faithful", presets="none", search_budget=0, flip_points=0)
    assert doc["verdict"]["kind"] == "reversed", doc["verdict"]["line"]


def test_an_unknown_generator(audit_evaluator, audit_claim):
    audit_claim("faithful", "nobody", presets="none", search_budget=0)
'''


def _run(pytester: pytest.Pytester, workers: str, *extra: str) -> pytest.RunResult:
    pytester.makepyfile(test_claims=TEST_FILE)
    root = pytester.path
    return pytester.runpytest_subprocess(
        "test_claims.py", *extra, "-p", "no:cacheprovider", "-rfs", "-n", workers, "--audit-profile=default",
        "--audit-evaluators=planted-pitch,planted-robust", "--audit-allow-empty", f"--audit-cache-dir={root / f'cache-{workers}'}",
        f"--audit-report-dir={root / f'reports-{workers}'}", timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_audit_claim_gives_the_known_answers_alike_with_zero_and_two_workers(pytester, monkeypatch):
    documents, papers = {}, {}
    for workers in ("0", "2"):
        docs = pytester.path / f"docs-{workers}"
        docs.mkdir()
        monkeypatch.setenv("CLAIM_DOCS", str(docs))
        result = _run(pytester, workers)
        text = result.stdout.str() + result.stderr.str()  # the verdict lines go past the capture, to stderr
        outcomes = result.parseoutcomes()
        assert outcomes.get("passed") == 4 and outcomes.get("failed") == 2, text[-4000:]
        failed = [line for line in result.outlines if line.startswith("FAILED ")]
        assert all("test_an_unknown_generator" in line for line in failed), failed
        assert "generator 'nobody' is not in the scene set" in text and "Traceback" not in text, text[-4000:]
        assert "During handling of the above exception" not in text, text[-4000:]  # one line, no chain
        assert "t3d-audit: claim planted-pitch: faithful beats gridded under planted-pitch: depends on the protocol" in text, text[-4000:]
        found = {p.name.split("-")[0] + "-" + p.name.split("-")[1]: json.loads(p.read_text())
                 for p in sorted(docs.glob("*.json"))}  # fmt: skip
        assert set(found) == {"planted-pitch", "planted-robust"}
        documents[workers] = found
        reports = pytester.path / f"reports-{workers}"
        written = next(reports.rglob("report.html"))
        page = written.read_text()
        problems = check_report(written.parent, deep=True, figures=False)[0]  # claims/ in the manifest
        assert [p for p in problems if "partial report" not in p] == [], problems  # claims only: partial
        assert '<section id="claims">' in page and "faithful beats gridded under planted-robust: holds" in page
        folders = {p.parent.name.rsplit("--", 1)[0]: p.parent for p in reports.rglob("claims/*/claim.json")}
        assert set(folders) == {f"{ev}--{a}-vs-{b}" for ev in ("planted-pitch", "planted-robust")
                                for a, b in (("faithful", "gridded"), ("gridded", "faithful"))}  # fmt: skip
        papers[workers] = {name: (f / "claim.md").read_bytes() for name, f in folders.items()}
    assert documents["0"] == documents["2"]
    assert papers["0"] == papers["2"]
    # a rerun of part of the suite completes the report: the claims it did not make are kept
    assert _run(pytester, "2", "-k", "reverse").ret == 0
    kept = {p.parent.name.rsplit("--", 1)[0]: (p.parent / "claim.md").read_bytes()
            for p in (pytester.path / "reports-2").rglob("claims/*/claim.json")}  # fmt: skip
    assert kept == papers["2"]
