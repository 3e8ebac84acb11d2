"""``compare`` and ``--audit-baseline`` trust nothing: a release directory
whose manifest or cards do not verify is refused, an evaluator on only one side fails the gate
unless ``--allow-unpaired``, and a ``--config`` that does not exist is an error.

The releases are in-process reports of the planted evaluators on the bundled scenes (smoke
profile): nothing is rendered and no model runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cards.provenance import load_manifest, output_entries, write_manifest
from harness.cli import main
from harness.core.paths import REPO_ROOT
from harness.protocol.records import read_records, write_records
from harness.release.baselines import load_release, release_problems, save_baseline, unpaired
from harness.report.writer import write_report
from harness.run.options import AuditOptions
from harness.run.outputs import run_result
from harness.run.session import AuditSession
from harness.testing import BoxRasterizer


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """``both``: planted-robust and planted-bow; ``robust``: planted-robust alone."""
    tmp = tmp_path_factory.mktemp("trust")
    options = AuditOptions(profile="smoke", evaluators=("planted-robust", "planted-bow"),
                           cache_dir=tmp / "cache", report_dir=tmp / "reports", bootstrap=20)  # fmt: skip
    session = AuditSession(options, renderer_factory=lambda _: BoxRasterizer())
    both = write_report(run_result(session, ["planted-bow", "planted-robust"]), []).directory
    robust = write_report(run_result(session, ["planted-robust"]), []).directory
    return {"both": both, "robust": robust}


@pytest.fixture
def baseline(tmp_path, reports):
    target = tmp_path / "baseline"
    shutil.copytree(reports["both"], target)
    return target


def rehash(report: Path) -> None:
    manifest = load_manifest(report)
    manifest["outputs"] = output_entries(report)
    write_manifest(manifest, report)


def _compare(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["compare", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_sound_release_verifies(reports):
    assert release_problems(reports["both"]) == []
    assert load_release(reports["both"], role="baseline").verified


def test_edited_baseline_scores_are_refused(baseline, reports, capsys):
    path = baseline / "scores" / "planted-robust.csv"
    records = read_records(path)
    records.loc[records["factor"] == "pitch", "score"] += 0.5
    write_records(records, path)
    code, _, err = _compare(capsys, str(baseline), str(reports["both"]))
    assert code == 2
    assert "the baseline does not verify" in err and "scores/planted-robust.csv: sha256" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("damage", ["missing", "not-json", "bad-shape"])
def test_missing_or_invalid_manifest_is_refused(baseline, reports, capsys, damage):
    manifest = baseline / "manifest.json"
    if damage == "missing":
        manifest.unlink()
    elif damage == "not-json":
        manifest.write_text("{")
    else:
        doc = json.loads(manifest.read_text())
        doc["outputs"] = "everything"
        manifest.write_text(json.dumps(doc))
    code, _, err = _compare(capsys, str(reports["both"]), str(baseline))
    assert code == 2 and "the candidate does not verify" in err
    want = {"missing": "no manifest.json", "not-json": "manifest.json is not JSON",
            "bad-shape": "manifest.json#/outputs"}[damage]  # fmt: skip
    assert want in err and "Traceback" not in err


def test_forged_card_id_is_refused_even_with_a_rehashed_manifest(baseline, reports, capsys):
    card_path = baseline / "cards" / "planted-robust.json"
    card = json.loads(card_path.read_text())
    card["card_id"] = "ecc-v1-sha256:" + "0" * 64
    card_path.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    rehash(baseline)
    code, _, err = _compare(capsys, str(baseline), str(reports["both"]))
    assert code == 2 and "does not match its content" in err


def test_card_filed_under_another_evaluator_and_missing_card_are_refused(baseline):
    cards = baseline / "cards"
    (cards / "planted-robust.json").unlink()
    shutil.copyfile(cards / "planted-bow.json", cards / "planted-robust.json")
    rehash(baseline)
    assert any("card is for evaluator 'planted-bow'" in p for p in release_problems(baseline))
    (cards / "planted-robust.json").unlink()
    rehash(baseline)
    assert release_problems(baseline) == ["scores/planted-robust.csv: no card (cards/planted-robust.json)"]


def test_unpaired_evaluator_fails_the_gate(reports, capsys, tmp_path):
    out = tmp_path / "out"
    code, stdout, _ = _compare(capsys, str(reports["both"]), str(reports["robust"]), "--out", str(out))
    assert code == 1
    doc = json.loads((out / "comparison.json").read_text())
    assert doc["unpaired"] == {"baseline": ["planted-bow"], "candidate": []}
    assert doc["exit_code"] == 1 and doc["verified"] == {"baseline": True, "candidate": True}
    assert [p["baseline_evaluator"] for p in doc["pairs"]] == ["planted-robust"]
    assert "only in the baseline, not compared: planted-bow (fails the gate)" in stdout
    assert "Gate: FAIL (exit 1)" in stdout
    code, stdout, _ = _compare(capsys, str(reports["both"]), str(reports["robust"]), "--allow-unpaired")
    assert code == 0 and "Gate: PASS (exit 0)" in stdout and "(allowed (--allow-unpaired))" in stdout


def test_unpaired_rule():
    assert unpaired(["a", "b"], ["a"], [("a", "a")]) == {"baseline": ["b"], "candidate": []}
    # paired under another id (one alignment evaluator on each side) is not unpaired
    assert unpaired(["v1"], ["v2"], [("v1", "v2")]) == {"baseline": [], "candidate": []}
    # on both sides but left out of the pairs: the user chose, nothing was dropped silently
    assert unpaired(["a", "c"], ["a", "c"], [("a", "a")]) == {"baseline": [], "candidate": []}


def test_missing_config_is_an_error(reports, capsys, tmp_path):
    code, _, err = _compare(capsys, str(reports["robust"]), str(reports["robust"]),
                            "--config", str(tmp_path / "nonexistent.toml"))  # fmt: skip
    assert code == 2
    assert err.strip() == (f"t3d-audit compare: error: {tmp_path / 'nonexistent.toml'}: config file "
                           "not found (name an existing pyproject.toml, or omit --config)")  # fmt: skip


def test_saved_baseline_verifies_and_its_tampering_is_caught(reports, tmp_path):
    saved = save_baseline(reports["both"], "v1", root=tmp_path / "baselines")
    assert release_problems(saved) == []
    (saved / "scores" / "extra.csv").write_bytes((saved / "scores" / "planted-bow.csv").read_bytes())
    assert "scores/extra.csv: not listed in manifest.json" in release_problems(saved)
    (saved / "scores" / "extra.csv").unlink()
    (saved / "cards" / "planted-bow.json").unlink()
    assert "cards/planted-bow.json: listed in manifest.json but missing" in release_problems(saved)


def test_bare_score_files_are_compared_but_marked_unverified(reports, capsys, tmp_path):
    csv = reports["robust"] / "scores" / "planted-robust.csv"
    code, stdout, _ = _compare(capsys, str(csv), str(reports["robust"]))
    assert code == 0 and "- baseline: bare score file(s), no manifest or cards: unverified" in stdout


# ------------------------------------------------------------------------------ pytest --audit-baseline


def _audit(tmp: Path, tag: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "audit_tests", "-q", "-p", "no:cacheprovider", "-n", "0",
           "--audit-profile", "smoke", "--audit-evaluators", "planted-robust", "--audit-bootstrap", "20",
           "--audit-cache-dir", str(tmp / "cache"), "--audit-report-dir", str(tmp / tag),
           f"--junitxml={tmp / f'{tag}.xml'}", *extra]  # fmt: skip
    return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_audit_baseline_has_the_same_trust_rules(baseline, tmp_path):
    proc = _audit(tmp_path, "unpaired", "--audit-baseline", str(baseline))
    assert proc.returncode == 1, proc.stdout[-2000:]
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "unpaired.xml").getroot().iter("testcase")}
    failure = cases["test_no_regression[planted-bow-unpaired]"].find("failure")
    assert failure is not None and "planted-bow is in the baseline but not in this run" in failure.get("message")
    assert cases["test_no_regression[planted-robust-rho-pitch]"].find("failure") is None
    proc = _audit(tmp_path, "allowed", "--audit-baseline", str(baseline), "--audit-allow-unpaired")
    assert proc.returncode == 0, proc.stdout[-2000:]
    path = baseline / "scores" / "planted-robust.csv"
    path.write_bytes(path.read_bytes().replace(b",ok,", b",ok, ", 1))
    proc = _audit(tmp_path, "tampered", "--audit-baseline", str(baseline))
    assert proc.returncode == 4
    assert "--audit-baseline: " in proc.stderr and "the baseline does not verify" in proc.stderr


def test_compare_out_into_a_report_keeps_it_comparable(baseline, reports, capsys):
    """``compare --out REPORT`` adds comparison.json/.md before ``t3d-audit html`` lists them."""
    code, _, _ = _compare(capsys, str(reports["both"]), str(baseline), "--out", str(baseline))
    assert code == 0 and (baseline / "comparison.json").is_file()
    assert release_problems(baseline) == []
    (baseline / "other.json").write_text("{}")
    assert release_problems(baseline) == ["other.json: not listed in manifest.json"]
