"""The release gate can never be lost silently (pytester runs of the real audit suite).

Each test reproduces a way the gate used to vanish without an error: a path option written
as two arguments, an empty threshold table, a partial rerun, bad option values, an override
that matches nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.report.validation import validate_report
from tests._audit_project import LENIENT, make_project, report_dirs

pytest_plugins = ["pytester"]

STRICT = '[tool.t3d-audit.thresholds.overrides]\n"tiny-grid" = { peak_rho_max = 0.001 }\n'


def results_of(run: Path) -> dict:
    return json.loads((run / "results.json").read_text())


@pytest.mark.parametrize("option", ["--audit-cache-dir", "--audit-report-dir"])
def test_space_separated_path_options_gate_exactly_like_the_equals_form(
    pytester, tmp_path_factory, option
):
    # regression: `--audit-cache-dir DIR` with DIR outside the project made DIR the rootdir, so
    # pyproject.toml (testpaths, thresholds) was not read and every audit check skipped
    make_project(pytester, extra=STRICT)
    outside = tmp_path_factory.mktemp("shared")
    other = "--audit-report-dir" if option == "--audit-cache-dir" else "--audit-cache-dir"
    runs = {}
    for form, workers in (("space", "2"), ("equals", "0")):
        target = outside / form
        target.mkdir()
        given = [option, str(target)] if form == "space" else [f"{option}={target}"]
        runs[form] = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "-n", workers, *given,
            f"{other}={pytester.path / ('side-' + form)}", timeout=300,
        )
    for form, result in runs.items():
        assert result.ret == pytest.ExitCode.TESTS_FAILED, (form, result.stdout.str()[-1500:])
        result.stdout.fnmatch_lines([f"rootdir: {pytester.path}*", "*must be ? 0.001 (peak_rho_max): fails*"])
    space, equals = (runs[f].parseoutcomes() for f in ("space", "equals"))
    assert space == equals and space["failed"] >= 1


OWN_SKIPPING_AUDIT = """
import pytest


def test_own(audit_check, audit_summary):
    pytest.skip("this project's check has nothing to look at")
"""


def test_an_empty_gate_fails_unless_allowed(pytester):
    # regression: with no thresholds every check skipped and pytest exited 0. The study's
    # thresholds are built in now, so the empty gate here is a project's own skipping suite.
    root = make_project(pytester, thresholds="")
    (root / "own_audit").mkdir()
    (root / "own_audit" / "test_own.py").write_text(OWN_SKIPPING_AUDIT)
    text = (root / "pyproject.toml").read_text().replace('["audit_tests"]', '["own_audit"]')
    (root / "pyproject.toml").write_text(text)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "0", timeout=300)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*t3d-audit gate*", "FAILED: no audit check reached an assertion*"])
    allowed = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "0", "--audit-allow-empty", timeout=300
    )
    assert allowed.ret == pytest.ExitCode.OK
    assert "no audit check reached an assertion" not in allowed.stdout.str()


def test_partial_reruns_complete_the_report_instead_of_replacing_it(pytester):
    # regression: `-k ...` / `--lf` rewrote results.json of the same run id with the subset
    root = make_project(pytester, extra=STRICT)
    reports = root / "reports"
    full = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", timeout=300)
    assert full.ret == pytest.ExitCode.TESTS_FAILED
    (run,) = report_dirs(reports)
    complete = results_of(run)
    assert complete["complete"] is True and complete["missing"] == []
    tests = [r["test"] for r in complete["results"]]
    for args in (["-k", "pitch"], ["--lf"], ["-x"]):
        partial = pytester.runpytest_subprocess("-n", "0", *args, timeout=300)
        assert partial.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), args
        after = results_of(run)
        assert [r["test"] for r in after["results"]] == tests, args
        assert after["complete"] is True
        # a rerun of fewer evaluators reports on them alone: never complete by omission
        for other in report_dirs(reports):
            if other != run:
                assert results_of(other)["complete"] is False, (args, other.name)
    pytester.runpytest_subprocess("-n", "0", "-k", "pitch", timeout=300).stdout.fnmatch_lines(
        ["*partial run: * results kept from the earlier report*"]
    )
    # a partial run with no earlier report is marked partial, never passed off as complete
    fresh = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "0", "-k", "pitch", f"--audit-report-dir={root / 'fresh'}",
        timeout=300,
    )
    fresh.stdout.fnmatch_lines(["*report marked partial: * collected audit tests have no result*"])
    (fresh_run,) = report_dirs(root / "fresh")
    marked = results_of(fresh_run)
    assert marked["complete"] is False
    assert len(marked["missing"]) + len(marked["results"]) == len(tests)
    # validate flags a report whose results do not cover evaluators x checks, and no other
    assert validate_report(run) == []
    problems = validate_report(fresh_run)
    assert any("partial report" in p for p in problems), problems
    doc = results_of(run)
    doc["results"] = [r for r in doc["results"] if "pitch" not in r["test"]]
    from harness.protocol.profiles import get_profile
    from harness.report.validation import check_results

    smoke = get_profile("smoke")
    problems = check_results(doc, {"tiny-grid", "tiny-pairs"}, (dict(smoke.levels), tuple(smoke.probes)))
    assert any("lacks factors ['pitch']" in p for p in problems), problems


@pytest.mark.parametrize(
    ("args", "pyproject_extra", "message"),
    [
        (["--audit-seed=-1"], "", "*--audit-seed must be an integer in [[]0, *[]], got '-1'"),
        (["--audit-seed", "x"], "", "*--audit-seed must be an integer*got 'x'"),
        (["--audit-bootstrap=-5"], "", "*--audit-bootstrap must be an integer in [[]0, 100000[]]*"),
        (["--audit-bootstrap=1000000000"], "", "*--audit-bootstrap must be an integer in*"),
        (["--audit-cache-dir=afile"], "", "*--audit-cache-dir=*afile: is a file, not a directory*"),
        (["--audit-report-dir=afile/sub"], "", "*--audit-report-dir=*has */afile in its way*"),
        (["--audit-run-id=../x"], "", "*--audit-run-id must be a plain directory name*"),
        (["--audit-scenes=nowhere"], "", "*--audit-scenes=*nowhere: no such file or directory"),
        ([], "thresholds = 5\n", "*thresholds must be a table*got 5"),
        ([], "bootstrp = 5\n", "*unknown key 'bootstrp' in [[]tool.t3d-audit[]]; did you mean 'bootstrap'?*"),
    ],
)
def test_bad_options_are_one_line_usage_errors_before_collection(pytester, args, pyproject_extra, message):
    # regression: these gave tracebacks, INTERNALERROR, or 301 errors at test setup
    root = make_project(pytester)
    (root / "afile").write_text("not a directory")
    if pyproject_extra:
        text = (root / "pyproject.toml").read_text().split("[tool.t3d-audit.thresholds]")[0]
        (root / "pyproject.toml").write_text(
            text.replace('bootstrap = 40\n', "bootstrap = 40\n" + pyproject_extra)
        )
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "0", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1, errors
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_an_override_matching_no_evaluator_warns_and_fails_under_gate(pytester):
    make_project(pytester, extra='[tool.t3d-audit.thresholds.overrides]\n"clip-vit-b-32" = { peak_rho_max = 2.0 }\n')
    warned = pytester.runpytest("-p", "no:cacheprovider", "-n", "0", "--collect-only", "-q")
    assert warned.ret == pytest.ExitCode.OK
    warned.stdout.fnmatch_lines(["*override 'clip-vit-b-32' matches no selected evaluator*"])
    gated = pytester.runpytest("-p", "no:cacheprovider", "-n", "0", "--collect-only", "--audit-gate")
    assert gated.ret == pytest.ExitCode.USAGE_ERROR
    gated.stderr.fnmatch_lines(["*override 'clip-vit-b-32' matches no selected evaluator*--audit-gate*"])


DOWN_CONFTEST = """
from harness.testing import BoxRasterizer, TinySpec


def pytest_audit_renderer(config, cache_dir):
    return BoxRasterizer()


def pytest_audit_evaluators(config):
    return [TinySpec("tiny-grid"), TinySpec("tiny-down", grid=False, fail_all=True)]
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_evaluator_whose_records_all_failed_fails_alone_and_is_reported(pytester, workers):
    # regression: one evaluator with only failed rows crashed the session finish (All-NaN slice),
    # so no report was written for any evaluator
    root = make_project(pytester, thresholds=LENIENT.replace("max_failed_share = 1.0", "max_failed_share = 0.01"))
    (root / "conftest.py").write_text(DOWN_CONFTEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", workers, timeout=300)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*no successful records: all * measurements failed*"])
    (run,) = report_dirs(root / "reports")
    outcomes = results_of(run)["results"]
    down = [r for r in outcomes if r["evaluator"] == "tiny-down"]
    assert down and not [r["test"] for r in down if r["outcome"] == "passed"]
    assert all(r["outcome"] != "failed" for r in outcomes if r["evaluator"] == "tiny-grid")
    card = json.loads((run / "cards" / "tiny-down.json").read_text())
    assert card["score_uncertainty"]["records_status"] == "no_successful_records"
    assert card["score_uncertainty"]["failed_share"] == 1.0
    summary = json.loads((run / "summary.json").read_text())["evaluators"]
    assert summary["tiny-down"]["peak_rho"] is None and summary["tiny-grid"]["peak_rho"] is not None


def test_strict_pairs_is_opt_in_a_skip_by_default_and_a_gate_once_declared(pytester):
    """audit_tests' ``test_strict_pairs`` has no study default (``min_strict_pairs`` is absent
    from ``harness/defaults.toml``: declaring it would change every run id and card): without a
    declaration it skips with a reason naming the threshold, never passes; a project that
    declares it gets a real check, which can fail."""
    from tests._audit_project import report_dir, run_audit

    make_project(pytester)
    selection = ("-n", "0", "-k", "test_strict_pairs or test_sign_crossings")
    default = run_audit(pytester, "default", *selection, "-ra")
    assert default.ret == pytest.ExitCode.OK, default.stdout.str()[-1500:]
    # regression: one SKIPPED line per evaluator for a threshold nobody declared;
    # now one line names it, and the final counts still count every skip
    out = default.stdout.str()
    assert not [line for line in default.stdout.lines if line.startswith("SKIPPED") and "min_strict_pairs" in line]
    default.stdout.fnmatch_lines(["t3d-audit: not gated here, opt-in thresholds not declared: "
                                  "min_strict_pairs (2 tests: test_strict_pairs) (declare one under*"])
    assert default.parseoutcomes()["skipped"] == 2, out[-1500:]
    by_test = {}
    for r in results_of(report_dir(pytester.path, "default"))["results"]:
        by_test.setdefault(r["test"].split("::")[-1].split("[")[0], []).append(r)
    assert {r["outcome"] for r in by_test["test_strict_pairs"]} == {"skipped"}
    assert all("no threshold min_strict_pairs declared" in r["reason"] for r in by_test["test_strict_pairs"])
    assert {r["outcome"] for r in by_test["test_sign_crossings"]} == {"passed"}

    (pytester.path / "pyproject.toml").write_text(
        (pytester.path / "pyproject.toml").read_text().replace(
            "max_sign_crossings = 100\n", "max_sign_crossings = 100\nmin_strict_pairs = 1000\n"
        )
    )
    declared = run_audit(pytester, "declared", *selection)
    assert declared.ret == pytest.ExitCode.TESTS_FAILED, declared.stdout.str()[-1500:]
    declared.stdout.fnmatch_lines(["*must be ? 1000 (min_strict_pairs): fails*"])
    strict = [r for r in results_of(report_dir(pytester.path, "declared"))["results"]
              if "test_strict_pairs" in r["test"]]  # fmt: skip
    assert strict and {r["outcome"] for r in strict} == {"failed"}
    assert all(c["threshold_name"] == "min_strict_pairs" for r in strict for c in r["checks"])


EXITING_CONFTESTS = {
    "os._exit at import": "import os\nos._exit(0)\n",
    "sys.exit at import": "import sys\nsys.exit(0)\n",
    "os._exit at session end": "import os\n\n\ndef pytest_sessionfinish(session):\n    os._exit(0)\n",
    "sys.exit in a hook": "import sys\n\n\ndef pytest_collection_finish(session):\n    sys.exit(0)\n",
}


# the default run keeps one case of each defect (os._exit in the pytest run, sys.exit while the
# CLI loads the conftest for --evaluators); the rest of the matrix is slow
_FAST_EXITS = {("os._exit at import", "all"), ("sys.exit at import", "chosen")}


@pytest.mark.parametrize(
    ("how", "evaluators"),
    [pytest.param(how, chosen, id=f"{name}-{how}",
                  marks=() if (how, name) in _FAST_EXITS else pytest.mark.slow)
     for how in EXITING_CONFTESTS
     for name, chosen in (("all", []), ("chosen", ["--evaluators", "tiny-grid"]))],
)  # fmt: skip
def test_user_code_exiting_zero_never_passes_the_gate(pytester, how, evaluators):
    # regression: a conftest calling sys.exit(0) made `audit --gate` exit 0 with no output,
    # no report and no verdict
    _assert_gate_fails(pytester, how, [*evaluators, "--workers", "0"])


@pytest.mark.slow
@pytest.mark.parametrize("how", ["os._exit at import", "os._exit at session end"])
def test_user_code_exiting_zero_never_passes_the_gate_with_xdist_workers(pytester, how):
    pytest.importorskip("xdist")
    _assert_gate_fails(pytester, how, ["--workers", "2"])


def _assert_gate_fails(pytester, how: str, options: list[str]) -> None:
    import os
    import subprocess
    import sys

    from harness.core.paths import REPO_ROOT

    root = make_project(pytester)
    (root / "conftest.py").write_text((root / "conftest.py").read_text() + "\n" + EXITING_CONFTESTS[how])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "harness", "audit", "--gate", "--no-warm", "--profile", "smoke",
         *options, "--cache-dir", str(root / "cache"), "--", "-p", "no:cacheprovider"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert "verdict PASS" not in out, out[-3000:]
    if "hook" not in how:  # pytest prints its own INTERNALERROR for a hook's SystemExit
        assert "Traceback" not in out, out[-3000:]


@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.slow)])
def test_a_passing_gated_audit_still_exits_zero_with_its_verdict_and_report(pytester, workers):
    """The gated audit runs in a forked child: its pass, its output and its report come through."""
    import os
    import subprocess
    import sys

    from harness.core.paths import REPO_ROOT

    root = make_project(pytester)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "harness", "audit", "--gate", "--no-warm", "--profile", "smoke",
         "--workers", workers, "--cache-dir", str(root / "cache"), "--report-dir", str(root / "reports"),
         "--", "-p", "no:cacheprovider"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert done.stdout.strip().splitlines()[-1].startswith("t3d-audit audit: verdict PASS"), out[-2000:]
    assert (report_dirs(root / "reports")[-1] / "results.json").is_file()


def test_a_passing_selection_is_not_called_a_full_pass_and_fails_the_gate(pytester):
    """``-k`` choosing a few checks that hold: the verdict names the selection and the partial
    report instead of "every audit assertion held", and ``--gate`` does not pass on it."""
    import os
    import subprocess
    import sys

    from harness.core.paths import REPO_ROOT

    root = make_project(pytester)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    base = [sys.executable, "-m", "harness", "audit", "--no-warm", "--profile", "smoke", "--workers", "0",
            "--cache-dir", str(root / "cache"), "--report-dir", str(root / "reports")]  # fmt: skip
    for gate, code in (([], 0), (["--gate"], 1)):
        done = subprocess.run([*base, *gate, "--", "-p", "no:cacheprovider", "-k", "test_failed_share"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        out = done.stdout + done.stderr
        assert done.returncode == code, out[-3000:]
        assert "every audit assertion held" not in out, out[-3000:]
        assert "verdict PASS for the checks this run selected only" in out, out[-3000:]
        assert "-k test_failed_share" in out and "marked partial" in out, out[-3000:]


OWN_PASSING_AUDIT = """
def test_own(audit_evaluator, audit_summary, audit_check):
    audit_check("own failed share", 0.0, "max_failed_share")
"""


def test_a_run_of_only_the_projects_own_audits_is_marked_partial_and_refused(pytester):
    """Plain ``pytest audits/`` in a project: the study's suite never ran, so the report says so
    in one line, is marked partial, and ``validate`` (and so the leaderboard) refuses it."""
    root = make_project(pytester)
    (root / "audits").mkdir()
    (root / "audits" / "test_own.py").write_text(OWN_PASSING_AUDIT)
    result = pytester.runpytest_subprocess("audits", "-p", "no:cacheprovider", "-n", "0", timeout=300)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    result.stdout.fnmatch_lines(["*report marked partial: this run ran without the study's suite (audit_tests/)*"])
    (run,) = report_dirs(root / "reports")
    doc = results_of(run)
    assert doc["complete"] is False and "without the study's suite" in doc["selection"]
    assert any("partial report" in problem for problem in validate_report(run))
