"""A quiet terminal for failing audit checks: one line each instead of a traceback.

A failing audit check is a finding, not a crash: its traceback (the test line and the reprs of
the summary objects) tells a person nothing the check's own message does not. Unless the run
asks for detail (``-v`` or an explicit ``--tb``), the controller lists each failing check on
one line (check, estimate, interval, threshold, card) in a ``t3d-audit failed checks`` section
and keeps those tests out of pytest's FAILURES and short summary sections; every other
failure (an error in a test, a crash before any check) keeps its traceback. Tests skipped only
because an opt-in threshold is not declared (``min_strict_pairs``) are named on one line
instead of one ``SKIPPED`` line each (``results.json`` still records every skip). The counts of
the final line (``48 failed, 103 passed``) are untouched. The last line of the run names the
report directory and its ``report.html``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.run.aggregate import outcomes_of


def failing_check(report: pytest.TestReport) -> dict[str, object] | None:
    """The check that failed an audit test, or ``None`` when the report is not such a failure.

    A check raises right after it is recorded, so a test failed by a check has that failing
    check last; a test that failed otherwise (an error after passing checks) is not one."""
    if not (report.failed and report.when == "call"):
        return None
    for result in outcomes_of(report):
        checks = result.get("checks") or []
        if checks and checks[-1].get("passed") is False:
            return checks[-1]
    return None


def one_line(report: pytest.TestReport, check: dict[str, object]) -> str:
    """``FAILED <test> - <the check as a rule> [card <id>]`` (pytest's short-summary form)."""
    from harness.checks.wording import rule_with_card

    return f"FAILED {report.nodeid} - {rule_with_card(check)}"


_UNDECLARED = re.compile(r"no threshold (\S+) declared for ")


def undeclared_threshold(report: pytest.TestReport) -> str | None:
    """The opt-in threshold whose absence skipped this test (``min_strict_pairs``: no study
    default, gates only where a project declares it), or ``None`` for any other outcome."""
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return None
    found = _UNDECLARED.search(str(report.longrepr[-1]))
    return found.group(1) if found else None


def undeclared_line(skipped: dict[str, list[str]]) -> str:
    """One line for the tests skipped because an opt-in threshold is not declared, in place
    of one ``SKIPPED`` line per test: ``{threshold: [test names]}``."""
    parts = [f"{name} ({len(tests)} {'test' if len(tests) == 1 else 'tests'}: "
             f"{', '.join(sorted(set(tests)))})" for name, tests in sorted(skipped.items())]
    return ("t3d-audit: not gated here, opt-in thresholds not declared: " + "; ".join(parts)
            + " (declare one under [tool.t3d-audit.thresholds] to gate it)")


def detail_hint(config: pytest.Config) -> str:
    """How this run's user asks for the tracebacks: pytest's ``-v``, or, in a run started by
    ``t3d-audit audit`` (a plugin naming its command), that command's spelling."""
    for plugin in config.pluginmanager.get_plugins():
        command = getattr(plugin, "t3d_audit_command", None)
        if isinstance(command, str):
            return f"{command} ... -- -v"
    return "-v"


def wanted(config: pytest.Config) -> bool:
    """Quiet unless the run asked for detail: ``-v`` or a ``--tb`` style of its own."""
    return config.option.verbose < 1 and getattr(config.option, "tbstyle", "auto") == "auto"


class QuietFailures:
    """Controller-side hooks (registered by the plugin when :func:`wanted`)."""

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: object) -> object:
        stats = terminalreporter.stats
        failed = stats.get("failed", [])
        quiet = [(r, c) for r in failed for c in [failing_check(r)] if c is not None]
        if quiet:
            hint = detail_hint(terminalreporter.config)
            terminalreporter.write_sep(
                "=", f"t3d-audit failed checks ({len(quiet)}; {hint} shows their tracebacks)", red=True
            )
            for report, check in quiet:
                terminalreporter.write_line(one_line(report, check))
            shown = {id(r) for r, _ in quiet}
            stats["failed"] = [r for r in failed if id(r) not in shown]
        skipped = stats.get("skipped", [])
        undeclared: dict[str, list[str]] = {}
        for report in skipped:
            name = undeclared_threshold(report)
            if name is not None:
                undeclared.setdefault(name, []).append(report.nodeid.split("::")[-1].split("[")[0])
        if undeclared:
            terminalreporter.write_line(undeclared_line(undeclared))
            stats["skipped"] = [r for r in skipped if undeclared_threshold(r) is None]
        try:
            return (yield)
        finally:
            if quiet:
                stats["failed"] = failed  # the final counts still see every failure
            if undeclared:
                stats["skipped"] = skipped  # ... and every skip


def last_line(directory: Path) -> str:
    """The run's last line: the report directory and the page to open."""
    return f"t3d-audit report: {directory} (open {Path(directory) / 'report.html'})"
