"""The terminal of an audit run: one line per failing check, tracebacks only with -v, and the
report directory on the last line (pytester subprocesses, -n 0 and -n 2)."""

from __future__ import annotations

import re

import pytest

from tests._audit_project import make_project, report_dir, run_audit

pytest_plugins = ["pytester"]

PLANTED = '[tool.t3d-audit.thresholds.overrides]\n"tiny-grid" = { peak_rho_max = 0.001 }\n'
BROKEN_TEST = '''
def test_broken_after_a_passing_check(audit_check, audit_summary):
    audit_check.metric(audit_summary, "min_w", threshold="min_kendall_w")
    raise RuntimeError("a bug in the test, not a finding")
'''


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_failing_check_prints_one_line_and_the_last_line_names_the_report(pytester, workers):
    root = make_project(pytester, extra=PLANTED)
    (root / "audit_tests" / "test_broken.py").write_text(BROKEN_TEST)
    result = run_audit(pytester, f"quiet{workers}", "-n", workers)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    lines = result.stdout.lines
    checks = [line for line in lines if line.startswith("FAILED audit_tests/test_configuration_ratio.py")]
    assert checks, out[-3000:]
    for line in checks:  # check, estimate, CI, threshold, card: all on the one line
        assert "tiny-grid" in line and "95% CI [" in line and "(peak_rho_max): fails [card ecc-v1-sha256:" in line
    # no traceback for a failing check; the broken test's shows a short summary repr
    assert "mappingproxy" not in out
    assert not re.search(r"test_configuration_ratio\.py:\d+", out)  # no frame of a check's test
    assert out.count("EvaluatorSummary(") == 2
    result.stdout.fnmatch_lines(["*= t3d-audit failed checks (*; -v shows their tracebacks) =*"])
    # a failure that is not a check keeps its traceback
    result.stdout.fnmatch_lines(["*_ test_broken_after_a_passing_check*", "*RuntimeError: a bug in the test*"])
    # pytest's counts still count every failure, and the report is named last
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == len(checks) + 2  # the checks and the broken test, per evaluator
    report = report_dir(root, f"quiet{workers}")  # not the run id's .lock file beside it
    assert lines[-1] == f"t3d-audit report: {report} (open {report / 'report.html'})"
    # regression: a run that measures (no warm step) said nothing for minutes; each
    # evaluator's measurement now says when it starts and ends, past the capture, from workers too
    err = result.stderr.str()
    for evaluator in ("tiny-grid", "tiny-pairs"):
        assert f"t3d-audit: measuring {evaluator}: " in err, err[-2000:]
        assert re.search(rf"t3d-audit: measured {evaluator} in \d+ s: \d+ images", err), err[-2000:]


def test_verbose_shows_the_tracebacks(pytester):
    make_project(pytester, extra=PLANTED)
    result = run_audit(pytester, "verbose", "-n", "0", "-v")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "t3d-audit failed checks" not in out
    result.stdout.fnmatch_lines(["*= FAILURES =*", "*_ test_rho?tiny-grid-*", "*audit_check.metric(*"])
    assert out.splitlines()[-1].startswith("t3d-audit report: ")


def test_the_audit_commands_verdict_line_names_the_report(tmp_path):
    import argparse
    import time

    from harness.commands.audit import _report_of_run

    args = argparse.Namespace(report_dir=str(tmp_path))
    started = time.time()
    assert _report_of_run(args, started) == ""  # no report written: nothing to name
    (tmp_path / "default-abc").mkdir()
    assert _report_of_run(args, started) == f"; report {tmp_path / 'default-abc' / 'report.html'}"
    assert _report_of_run(argparse.Namespace(report_dir=str(tmp_path / "absent")), started) == ""


def test_the_traceback_hint_is_spelt_for_the_command_the_user_ran():
    # regression: after `t3d-audit audit` the hint said pytest's `-v`
    import types

    from harness.plugin.warm import WarmInProcess
    from harness.run.quiet_failures import detail_hint

    def config(*plugins):
        return types.SimpleNamespace(pluginmanager=types.SimpleNamespace(get_plugins=lambda: set(plugins)))

    assert detail_hint(config(object())) == "-v"
    assert detail_hint(config(object(), WarmInProcess())) == "t3d-audit audit ... -- -v"


def test_a_warm_run_says_the_printed_minus_n_auto_starts_no_workers(monkeypatch, capsys):
    # regression: the command line printed `-n auto` and nothing said that a warm
    # run (every records file cached) then ran in one process
    import types

    from harness.plugin import configure
    from harness.plugin.warm import WarmInProcess

    cache = types.SimpleNamespace(cached=lambda ev: True)
    session = types.SimpleNamespace(inputs=types.SimpleNamespace(specs={"a": 1, "b": 2}), record_cache=cache)
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(configure, "new_session", lambda config: session)
    config = types.SimpleNamespace(stash={})
    assert WarmInProcess().pytest_xdist_auto_num_workers(config) == 0
    assert "runs in this process (-n auto starts no workers)" in capsys.readouterr().out
    cache.cached = lambda ev: ev == "a"
    assert WarmInProcess().pytest_xdist_auto_num_workers(config) is None
    assert capsys.readouterr().out == ""
