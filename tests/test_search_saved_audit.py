"""A saved level becomes a regression check (docs/search.md "Saved levels in
an audit"): ``t3d-audit search ... --save-level NAME --into FILE`` then ``pytest audit_tests
--audit-profile P --audit-profile-file FILE`` measures the level on the run's prompts, and
``test_saved_level`` fails for the evaluator whose fragility it is (planted-offgrid) and passes
for planted-robust. Bad profile files are one-line errors before any render.
"""

from __future__ import annotations

import json
import shutil

import pytest

from harness.cli import main
from harness.core.paths import REPO_ROOT
from harness.protocol.profiles import PROFILES_FILE, get_profile
from harness.search.saved_levels import (
    SavedLevelError,
    audit_profile,
    load_profile_file,
    save_level,
    saved_configurations,
)
from harness.search.space import space_for

pytest_plugins = ["pytester"]

EVALUATORS = "--audit-evaluators=planted-offgrid,planted-robust"
CONFTEST = '''
def pytest_audit_evaluators(config):
    from harness.evaluators.reference.specs import search_planted_specs

    return search_planted_specs()
'''


def _point(**fields: float) -> str:
    space = space_for(get_profile("smoke"))
    return space.text(space.point(fields))


# ------------------------------------------------------------------------------ the file


def test_a_new_file_holds_only_what_it_adds_and_the_objective(tmp_path):
    path = save_level(tmp_path / "mine.json", "smoke", "warm", _point(pitch=55.0), "pair:faithful,gridded")
    raw = json.loads(path.read_text())
    assert raw == {"smoke": {"saved_levels": {"warm": {"point": _point(pitch=55.0),
                                                       "objective": "pair:faithful,gridded"}}}}  # fmt: skip
    saved = audit_profile(path, "smoke")
    assert saved.profile == get_profile("smoke") and saved.profile.levels == get_profile("smoke").levels
    assert saved.objective_of("warm") == "pair:faithful,gridded"
    assert saved_configurations(saved)["warm"].render.pitch_deg == 55.0


def test_a_file_that_copies_the_bundled_profile_still_loads_and_a_bare_point_falls_back(tmp_path):
    """The first layout copied the whole bundled profile and stored bare points."""
    bundled = json.loads(PROFILES_FILE.read_text())
    entry = {**bundled["smoke"], "saved_levels": {"old": _point(pitch=20.0)}}
    searched = {**bundled["search-smoke"], "saved_levels": {"old": _point(pitch=20.0)}}
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"smoke": entry, "search-smoke": searched}))
    found = load_profile_file(path)
    assert found["smoke"].objective_of("old") == "shift"  # no search block
    assert found["search-smoke"].objective_of("old") == "pair:faithful,gridded"  # the block's


def test_a_file_may_add_a_search_block(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"smoke": {"search": {"objective": "ranking", "budget": 8}}}))
    saved = audit_profile(path, "smoke")
    assert saved.profile.search is not None and saved.profile.search.budget == 8 and saved.saved == {}


BAD = [
    ("not json", "{", "cannot read profile file"),
    ("a list", "[]", "maps profile name -> profile"),
    ("unknown profile", {"mine": {"saved_levels": {}}}, "'mine' is not a bundled profile"),
    ("changed grid", {"smoke": {"levels": {"pitch": ["0"]}}}, "levels differ from the bundled profile"),
    ("bad level value", {"smoke": {"saved_levels": {"a": 3}}}, "must be a printed search point"),
    ("bad level name", {"smoke": {"saved_levels": {"-a": "pitch=1"}}}, "bad level name"),
    ("bad point", {"smoke": {"saved_levels": {"a": "pitch=1,nonsense=2"}}}, "unknown axis"),
    ("bad objective", {"smoke": {"saved_levels": {"a": {"point": "pitch=1", "objective": "pair:x"}}}},
     "is not shift, ranking or pair:A,B"),
    ("bad search block", {"smoke": {"search": {"budget": 0}}}, r"'budget' must be a whole number in \[1, 100000\], got 0"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "content", "words"), BAD, ids=[b[0] for b in BAD])
def test_bad_profile_files_are_one_line_errors_naming_the_file(tmp_path, case, content, words):
    path = tmp_path / "bad.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(SavedLevelError, match=words) as info:
        load_profile_file(path)
    text = str(info.value)
    assert "\n" not in text and str(path) in text, text


def test_a_profile_missing_from_the_file_names_what_it_has(tmp_path):
    path = save_level(tmp_path / "mine.json", "smoke", "a", _point(pitch=1.0))
    with pytest.raises(SavedLevelError, match=r"'default' is not in the profile file.*it has smoke"):
        audit_profile(path, "default")


def test_the_audit_command_passes_the_file_to_pytest(tmp_path):
    from harness.cli import command_parser
    from harness.run.suite_argv import SuiteRun, pytest_argv

    path = save_level(tmp_path / "mine.json", "smoke", "a", _point(pitch=1.0))
    args = command_parser("audit")[0].parse_args(["--profile", "smoke", "--profile-file", str(path)])
    assert f"--audit-profile-file={path.resolve()}" in pytest_argv(SuiteRun.from_args(args))


def test_the_python_api_passes_the_file_to_pytest(tmp_path, monkeypatch):
    import harness.api as api

    path = save_level(tmp_path / "mine.json", "smoke", "a", _point(pitch=1.0))
    seen: list[list[str]] = []
    monkeypatch.setattr(pytest, "main", lambda argv: seen.append(list(argv)) or 3)
    with pytest.raises(api.AuditError, match="did not complete"):
        api.audit("planted-robust", profile="smoke", profile_file=path, report_dir=tmp_path)
    assert f"--audit-profile-file={path.resolve()}" in seen[0]


def test_the_audit_command_refuses_a_bad_file_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mine": {}}))
    assert main(["audit", "--profile", "smoke", "--profile-file", str(bad), "--no-warm"]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a bundled profile" in err and str(bad) in err and len(err.splitlines()) == 1, err


# ------------------------------------------------------------------------------ the audit


def _project(pytester: pytest.Pytester) -> None:
    shutil.copytree(REPO_ROOT / "audit_tests", pytester.path / "audit_tests")
    (pytester.path / "pyproject.toml").write_text("[tool.t3d-audit]\nbootstrap = 50\n")
    (pytester.path / "conftest.py").write_text(CONFTEST)


def _audit(pytester: pytest.Pytester, *args: str, profile: str = "smoke") -> pytest.RunResult:
    root = pytester.path
    return pytester.runpytest_subprocess(
        "audit_tests/test_search.py", "audit_tests/test_failures.py", "-p", "no:cacheprovider", "-rfs",
        f"--audit-profile={profile}", EVALUATORS, f"--audit-cache-dir={root / 'cache'}",
        f"--audit-report-dir={root / 'reports'}", *args, timeout=600,
    )  # fmt: skip


def test_bad_profile_file_is_a_usage_error_before_the_run(pytester):
    _project(pytester)
    bad = pytester.path / "bad.json"
    bad.write_text(json.dumps({"smoke": {"levels": {"pitch": ["0"]}}}))
    result = _audit(pytester, f"--audit-profile-file={bad}", "-n", "0")
    assert result.ret == 4, result.stdout.str()[-2000:]
    lines = [ln for ln in result.stderr.lines if "--audit-profile-file" in ln]
    assert len(lines) == 1 and "levels differ from the bundled profile 'smoke'" in lines[0], result.stderr.str()
    assert not (pytester.path / "reports").exists()


def _saved_level(pytester: pytest.Pytester, monkeypatch, capsys, profile: str):
    """search → --save-level: (the profile file, the search's JSON)."""
    _project(pytester)
    root = pytester.path
    into = root / "release-1.json"
    monkeypatch.setenv("T3D_AUDIT_CACHE_DIR", str(root / "cache"))
    assert main(["search", "--evaluator", "planted-offgrid", "--profile", profile, "--objective",
                 "pair:faithful,gridded", "--budget", "64", "--seed", "0", "--json", "--no-progress",
                 "--save-level", "offgrid", "--into", str(into)]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["confirmed"] is True
    return into, doc


def test_a_saved_level_on_two_prompts_is_not_confirmable(pytester, monkeypatch, capsys):
    """The smoke profile's 2 prompts are below the interval policy's minimum (6): the saved-level
    check of either evaluator is skipped, "not confirmable", never failed or passed by noise."""
    into, _doc = _saved_level(pytester, monkeypatch, capsys, "smoke")
    result = _audit(pytester, f"--audit-profile-file={into}", "-n", "2")
    assert result.ret == 0, result.stdout.str()[-4000:]
    result.stdout.fnmatch_lines(["*SKIPPED [[]2[]] *not confirmable: 2 prompts (needs 6)*"])


def test_a_saved_level_fails_the_fragile_evaluator_next_release(pytester, monkeypatch, capsys):
    """search → --save-level → audit with --audit-profile-file on the default profile's 6
    prompts: test_saved_level fails exactly for planted-offgrid (its off-grid fragility) and
    passes for planted-robust; the grid checks of the same run (test_failed_share) passes both,
    and a run without the file collects no saved-level check."""
    into, doc = _saved_level(pytester, monkeypatch, capsys, "default")
    root = pytester.path
    result = _audit(pytester, f"--audit-profile-file={into}", "-n", "0", profile="default")
    tail = result.stdout.str()[-4000:]
    failed = sorted(ln.split(" ")[1].split("::")[1] for ln in result.outlines if ln.startswith("FAILED "))
    assert failed == ["test_saved_level[planted-offgrid-offgrid]"], tail
    assert result.ret == 1
    (report,) = [p for p in (root / "reports").iterdir() if not p.name.startswith(".")]
    results = json.loads((report / "results.json").read_text())
    assert results["complete"] is True
    rows = {r["test"].split("::")[-1]: r for r in results["results"] if "test_saved_level" in r["test"]}
    assert {k: r["outcome"] for k, r in rows.items()} == {
        "test_saved_level[planted-offgrid-offgrid]": "failed", "test_saved_level[planted-robust-offgrid]": "passed"}
    (check,) = rows["test_saved_level[planted-offgrid-offgrid]"]["checks"]
    assert check["threshold_name"] == "max_worst_case_pair_reversal" and check["compare"] == "lower"
    assert check["tested"] > 0.5  # the planted reversal (0.5 x +-1 by generator) on the run's prompts
    (robust,) = rows["test_saved_level[planted-robust-offgrid]"]["checks"]
    assert robust["passed"] and robust["estimate"] <= 0.0  # the order holds (the gap may move)
    manifest = json.loads((report / "manifest.json").read_text())
    assert manifest["options"]["saved_levels"] == {"offgrid": {"point": doc["worst"]["text"],
                                                               "objective": "pair:faithful,gridded"}}  # fmt: skip
    assert main(["validate", "--deep", str(report)]) == 0
    # the saved levels are part of the run id: another level set is another report directory
    from harness.report.run_ids import derived_run_id

    opts = manifest["options"]
    common = dict(profile=opts["profile"], plan=opts["plan_sha256"], evaluators=opts["evaluators"],
                  renderer=opts["renderer"], bootstrap=opts["bootstrap"], seed=opts["seed"],
                  thresholds=opts["thresholds"])  # fmt: skip
    assert derived_run_id(**common, saved_levels=opts["saved_levels"]) == manifest["run_id"]
    assert derived_run_id(**common) != manifest["run_id"]
    # without the file no saved-level check is collected (not even as a skip)
    collected = _audit(pytester, "--collect-only", "-q", "-n", "0", profile="default")
    assert collected.ret == 0 and "test_failed_share" in collected.stdout.str()
    assert "test_saved_level" not in collected.stdout.str()


def test_an_audit_takes_planted_offgrid_by_its_exact_id_only(tmp_path):
    """So the README's search → save → audit runs as printed without a conftest hook; a glob,
    a profile's panel or an evaluator listing never picks it up (no existing run moves)."""
    from harness.run.inputs import RunInputs
    from harness.run.options import AuditOptions

    def chosen(*patterns: str) -> set[str]:
        return set(RunInputs(AuditOptions(profile="smoke", evaluators=patterns, cache_dir=tmp_path)).specs)

    assert chosen("planted-offgrid", "planted-robust") == {"planted-offgrid", "planted-robust"}
    assert "planted-offgrid" not in chosen("planted-*")
    from harness.search.known_answers import named_known_answers

    hook = named_known_answers(["planted-offgrid"])
    assert named_known_answers(["planted-offgrid"], hook) == []  # a hook that offers it wins
