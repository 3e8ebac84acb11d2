"""Report writer, provenance manifest, figures, terminal table and ``t3d-audit validate``."""

from __future__ import annotations

import json
import math

import pytest

from harness.cards.provenance import (
    package_versions,
    read_manifest,
    source_revision,
    verify_outputs,
)
from harness.protocol.profiles import get_profile
from harness.report.terminal import render_table, rows_from
from harness.report.validation import check_coverage, validate_report
from harness.report.writer import write_report
from harness.run.outputs import run_result
from harness.run.session import AuditSession
from harness.testing import TinySpec
from tests._audit_project import tiny_session

SECRET = "sk-t3d-fake-secret-report-5e1d"


def make_session(tmp_path, **over) -> AuditSession:
    return tiny_session(tmp_path, [TinySpec("tiny-grid"), TinySpec("tiny-ctrl", needs_text=False)], **over)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", SECRET)
    try:
        session = make_session(tmp)
        written = write_report(run_result(session, sorted(session.inputs.specs)), [])
    finally:
        mp.undo()
    return tmp, written


def test_layout_and_valid_report(report):
    _, written = report
    d = written.directory
    for rel in ("summary.json", "results.json", "manifest.json", "scores/tiny-grid.csv",
                "cards/tiny-grid.json", "cards/tiny-ctrl.json", "figures/dispersion.png",
                "figures/discrimination.png", "figures/peak_rho.png"):
        assert (d / rel).is_file(), rel
    assert list((d / "tables").glob("*.md")) and list((d / "tables").glob("*.csv"))
    assert validate_report(d) == []
    assert d.name.startswith("smoke-") and len(d.name) == len("smoke-") + 12


def test_manifest_binds_source_packages_inputs_and_outputs(report):
    _, written = report
    manifest = read_manifest(written.directory)
    assert manifest["source"]["revision"] in ("dirty", "unknown", manifest["source"]["commit"])
    assert manifest["packages"]["numpy"] != "not installed"
    roles = {e["role"] for e in manifest["inputs"]}
    assert {"scene", "asset", "scene-manifest", "profiles"} <= roles
    outputs = {e["path"] for e in manifest["outputs"]}
    files = {p.relative_to(written.directory).as_posix() for p in written.directory.rglob("*") if p.is_file()}
    assert outputs == files - {"manifest.json"}
    assert verify_outputs(written.directory, manifest) == []


def test_no_secret_and_no_machine_path_in_any_report_file(report):
    tmp, written = report
    files = [path for path in written.directory.rglob("*") if path.is_file()]
    assert {"summary.json", "manifest.json"} <= {path.name for path in files}  # never vacuous
    for path in files:
        data = path.read_bytes()
        assert SECRET.encode() not in data, path
        assert str(tmp).encode() not in data, f"{path} holds a machine-specific path"


def test_rewriting_the_same_inputs_gives_identical_bytes(report):
    tmp, written = report
    before = {p.relative_to(written.directory): p.read_bytes() for p in written.directory.rglob("*") if p.is_file()}
    session = make_session(tmp)
    again = write_report(run_result(session, sorted(session.inputs.specs)), [])
    assert again.directory == written.directory
    after = {p.relative_to(again.directory): p.read_bytes() for p in again.directory.rglob("*") if p.is_file()}
    before.pop(next(k for k in before if k.name == "manifest.json"))
    manifest_after = after.pop(next(k for k in after if k.name == "manifest.json"))
    assert before == after
    assert json.loads(manifest_after)["outputs"]


def test_validate_detects_tampering_missing_cards_and_stray_files(tmp_path, report):
    import shutil

    _, written = report
    copy = tmp_path / "copy"
    shutil.copytree(written.directory, copy)
    with open(copy / "scores" / "tiny-grid.csv", "a") as handle:
        handle.write("\n")
    (copy / "cards" / "tiny-ctrl.json").unlink()
    (copy / "notes.txt").write_text("added later")
    problems = "\n".join(validate_report(copy))
    assert "scores/tiny-grid.csv: sha256" in problems
    assert "cards/tiny-ctrl.json: listed in manifest.json but missing" in problems
    assert "cards/tiny-ctrl.json: missing (raw score file" in problems
    assert "notes.txt: not listed in manifest.json" in problems


def test_validate_rejects_an_edited_card(tmp_path, report):
    import shutil

    _, written = report
    copy = tmp_path / "copy"
    shutil.copytree(written.directory, copy)
    card = json.loads((copy / "cards" / "tiny-grid.json").read_text())
    card["score_uncertainty"]["peak_rho"] = 0.01
    (copy / "cards" / "tiny-grid.json").write_text(json.dumps(card))
    problems = "\n".join(validate_report(copy))
    assert "does not match its content" in problems


def test_coverage_checks_on_records(report):
    from harness.protocol.records import read_records

    _, written = report
    records = read_records(written.directory / "scores" / "tiny-grid.csv")
    expected = (dict(get_profile("smoke").levels), tuple(get_profile("smoke").probes))
    assert check_coverage(records, expected) == []
    missing = records.drop(records[(records["factor"] == "pitch") & (records["level"] == "45")].index[:1])
    assert any("no pitch=45" in p for p in check_coverage(missing, expected))
    dup = records.copy()
    tpl = dup.index[dup["factor"] == "template"]
    dup.loc[tpl[1], "caption"] = dup.loc[tpl[0], "caption"]
    assert any("template captions" in p and "repeat" in p for p in check_coverage(dup, expected))
    bad = records.copy()
    bad.loc[bad.index[0], ["status", "score"]] = ["failed", 0.0]
    assert any("carries a score" in p for p in check_coverage(bad, expected))
    twice = records._append(records.iloc[[0]], ignore_index=True)
    assert any("duplicate measurement" in p for p in check_coverage(twice, expected))


def test_probes_that_do_not_apply_are_not_missing(report):
    """Regression: a single-object scene writes no keep_half row (the probe does not apply);
    validate reported it missing. The manifest's ``probes_not_applicable`` names such cells."""
    from harness.protocol.records import read_records

    _, written = report
    records = read_records(written.directory / "scores" / "tiny-grid.csv")
    expected = (dict(get_profile("smoke").levels), tuple(get_profile("smoke").probes))
    gen, pid = records.iloc[0][["generator", "prompt_id"]]
    cell = (records["generator"] == gen) & (records["prompt_id"] == pid)
    dropped = records[~(cell & (records["factor"] == "probe") & (records["level"] == "keep_half"))]
    assert any(f"no probe=keep_half for {gen}/{pid}" in p for p in check_coverage(dropped, expected))
    assert check_coverage(dropped, expected, {f"{gen}/{pid}": ["keep_half"]}) == []
    # only the named probe of the named scene is excused
    scrambled = cell & (records["factor"] == "probe") & (records["level"] == "scrambled")
    other = dropped[~scrambled.loc[dropped.index]]  # the mask on dropped's own rows, not reindexed
    assert any("no probe=scrambled" in p
               for p in check_coverage(other, expected, {f"{gen}/{pid}": ["keep_half"]}))


def test_terminal_table_rows_and_alignment():
    summary = {"evaluators": {"b": {"peak_rho": 1.5, "peak_rho_ci": [1.1, None], "min_w": 0.4, "max_top1": 2,
                                    "discrimination": {"scrambled": 0.55}, "best_view_inflation": math.nan,
                                    "failed": 3},
                              "a": {"peak_rho": None}}}
    results = [{"evaluator": "b", "outcome": "failed"}, {"evaluator": "b", "outcome": "passed"}]
    rows = rows_from(summary, results)
    assert [r["evaluator"] for r in rows] == ["a", "b"]
    assert rows[1]["peak_rho_ci"] == "[1.10, —]" and rows[1]["scrambled"] == "55%"
    assert rows[1]["gate"] == "FAIL: 1 of 2 failed" and rows[0]["gate"] == "no tests ran"
    lines = render_table(rows)
    assert lines[0].startswith("evaluator") and set(lines[1]) == {"-"}
    assert len({len(line) for line in lines[:2]}) == 1


def test_source_revision_and_versions_shapes():
    rev = source_revision()
    assert set(rev) == {"revision", "commit"}
    assert package_versions(["numpy", "surely-not-a-package-t3d"])["surely-not-a-package-t3d"] == "not installed"
