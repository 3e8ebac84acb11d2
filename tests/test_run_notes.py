"""A run says what it leaves out: prompts cut by the profile (at the start), and the real cause of
an absent metric in skip reasons (harness.run.notes; a pytester run of a 3-prompt set, -n 0/-n 2)."""

from __future__ import annotations

import pytest

from harness.run.notes import absent_reason, trim_note
from harness.testing import write_tiny_scene_set
from tests._audit_project import make_project, run_audit

pytest_plugins = ["pytester"]

PROFILES = {"smoke": 2, "default": 6, "paper": None}


def test_the_trim_note_names_the_counts_the_profile_and_a_profile_for_all():
    assert trim_note("smoke", 2, 3, PROFILES) == (
        "t3d-audit: auditing 2 of 3 prompts (profile smoke); use --audit-profile=default for all"
    )
    assert trim_note("smoke", 2, 40, PROFILES).endswith("use --audit-profile=paper for all")
    assert trim_note("default", 6, 6, PROFILES) is None
    assert trim_note("smoke", 2, 3, {"smoke": 2}).endswith("no profile audits all of them")


def test_absent_reasons_name_the_real_cause():
    kw = {"profile": "smoke", "profile_factors": ["pitch", "paraphrase"],
          "profile_probes": ["keep_half", "worst_objects"]}  # fmt: skip
    objects = absent_reason("probe", "keep_half", scene_kind="object", **kw)
    assert "single objects" in objects and "profile" not in objects
    assert absent_reason("probe", "scrambled", scene_kind="room", **kw) == "profile 'smoke' has no probe scrambled"
    para = absent_reason("factor", "paraphrase", scene_kind="room", **kw)
    assert para == "the scene set's prompts have no paraphrases (an imported set without them)"
    assert absent_reason("factor", "lighting", scene_kind="room", **kw) == "profile 'smoke' has no factor lighting"


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_trimmed_set_says_so_at_the_start(pytester, workers):
    root = make_project(pytester)
    write_tiny_scene_set(root / "scenes", prompts=("p01", "p02", "p03"))
    result = run_audit(pytester, f"trim{workers}", "-n", workers)
    lines = result.stdout.lines
    note = "t3d-audit: auditing 2 of 3 prompts (profile smoke); use --audit-profile=default for all"
    assert note in lines, result.stdout.str()[-2000:]
    # before the end of the run: at the start (lone process) or at the first result (xdist)
    assert lines.index(note) < next(i for i, line in enumerate(lines) if "t3d-audit summary" in line)
    assert lines.count(note) == 1


def test_skip_reasons_reach_results_json_and_the_matrix(pytester):
    import json

    from harness.report.html.page import build_html

    root = make_project(pytester)
    result = run_audit(pytester, "reasons", "-n", "0")
    assert result.ret == 0, result.stdout.str()[-2000:]
    (report,) = [p for p in (root / "reports-reasons").iterdir() if not p.name.startswith(".")]
    results = json.loads((report / "results.json").read_text())["results"]
    skipped = [r for r in results if r["outcome"] == "skipped"]
    assert skipped and all(r.get("reason") for r in skipped)
    blocks = [r for r in skipped if "test_interactions.py" in r["test"]]
    assert blocks[0]["reason"] == "not applicable: profile 'smoke' declares no factorial blocks"
    assert all("reason" not in r for r in results if r["outcome"] != "skipped")
    page = build_html(report)
    assert "every test skipped: not applicable: profile &#x27;smoke&#x27; declares no factorial blocks" in page


def test_the_plugin_asks_the_run_for_the_real_cause():
    from types import SimpleNamespace

    from harness.plugin.fixtures import _absent_reason
    from harness.protocol.profiles import get_profile

    smoke = get_profile("smoke")
    objects = SimpleNamespace(profile=smoke, scene_set=SimpleNamespace(kind="object"))
    text = _absent_reason(objects, "discrimination", "keep_half")
    assert text.startswith("discrimination[keep_half] is not measured in this run: probe keep_half edits")
    assert "single objects" in text and "its profile has no" not in text
    rooms = SimpleNamespace(profile=smoke, scene_set=SimpleNamespace(kind="room"))
    assert "paraphrase" in smoke.levels
    assert _absent_reason(rooms, "rho", "paraphrase").endswith(
        "the scene set's prompts have no paraphrases (an imported set without them)"
    )
