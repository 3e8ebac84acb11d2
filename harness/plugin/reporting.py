"""Results: each audit test's outcome and checks as a user property of its report (what an
xdist worker sends the controller), and the per-run hooks that hand reports, worker output and
the end of the run to the run's sink (:mod:`harness.run.aggregate`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.core.errors import AuditError
from harness.plugin.collection import AUDIT_FIXTURES, drop_not_presented, drop_search_checks
from harness.plugin.parametrize import left_out_lines
from harness.run.aggregate import ControllerSink, WorkerSink
from harness.run.session import PANEL, RESULT_PROPERTY, SESSION_KEY, WORKER_OUTPUT_KEY, AuditSession

OUTCOMES_KEY = pytest.StashKey[list]()


#: Folders an installed package lives in: a test file under one is keyed by its package path.
INSTALL_FOLDERS = frozenset({"site-packages", "dist-packages"})


def key_of_test(item: pytest.Item) -> str:
    """Stable test id, identical with and without xdist's ``@group`` nodeid suffix, and
    independent of where the package is installed: a test file outside the project, or in an
    install folder inside it (a virtual environment in the project), is keyed by its package
    path (``audit_tests/test_rho.py::...``)."""
    path = Path(item.path).resolve()
    try:
        rel: Path | None = path.relative_to(Path(item.config.rootpath).resolve())
    except ValueError:  # outside the project, e.g. the installed audit_tests
        rel = None
    if rel is None or INSTALL_FOLDERS & set(rel.parts):
        top = path.parent
        while (top / "__init__.py").is_file() and (top.parent / "__init__.py").is_file():
            top = top.parent
        rel = path.relative_to(top.parent) if (top / "__init__.py").is_file() else Path(path.name)
    return f"{rel.as_posix()}::{item.name}"


def evaluator_of(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    return str(callspec.params.get("audit_evaluator", PANEL)) if callspec else PANEL


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    report = yield
    names = getattr(item, "fixturenames", ())
    if not any(n in names for n in AUDIT_FIXTURES):
        return report
    final = report.when == "call" or (report.when == "setup" and not report.passed)
    if final:
        result = {
            "test": key_of_test(item),
            "evaluator": evaluator_of(item),
            "outcome": report.outcome,
            "checks": item.stash.get(OUTCOMES_KEY, []),
        }
        if report.failed and not result["checks"]:
            crash = getattr(report.longrepr, "reprcrash", None)
            result["error"] = (getattr(crash, "message", "") or "error before any check")[:300]
        if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
            # why it skipped, for the report's verdict matrix ("Skipped: " is pytest's prefix)
            result["reason"] = str(report.longrepr[2]).removeprefix("Skipped: ")[:300]
        report.user_properties.append((RESULT_PROPERTY, json.dumps(result, sort_keys=True)))
    return report


class RunHooks:
    """Per-run hooks bound to the run's sink (registered by :func:`harness.plugin.configure.pytest_configure`)."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self._noted = False

    @property
    def sink(self) -> ControllerSink | WorkerSink:
        return self.config.stash[SESSION_KEY].sink

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        # before -k / --lf deselect: what a complete report of this run has to cover
        drop_search_checks(self.config, items)  # first: they are no part of such a run
        session = self.config.stash[SESSION_KEY]
        drop_not_presented(items)
        for item in items:
            if any(n in getattr(item, "fixturenames", ()) for n in AUDIT_FIXTURES):
                session.collected_tests[key_of_test(item)] = evaluator_of(item)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # on the controller for every worker's reports; locally in a lone process
        self.sink.add_report(report)
        if not self._noted and not hasattr(self.config, "workerinput"):
            from harness.run.aggregate import outcomes_of

            if outcomes_of(report):  # under xdist: the first audit result reaching the controller
                self._note_scope()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # a lone process collects: say the run's scope before any test runs
        if not hasattr(self.config, "workerinput") and self.config.stash[SESSION_KEY].collected_tests:
            self._note_scope()

    def _note_scope(self) -> None:
        self._noted = True
        note = trim_note_of(self.config.stash[SESSION_KEY])
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if note and reporter is not None:
            if self.config.pluginmanager.has_plugin("dsession"):
                reporter.write("\n")  # xdist's progress dots are not tracked by ensure_newline
            reporter.write_line(note, yellow=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        output = getattr(node, "workeroutput", None) or {}
        self.sink.add_worker_output(output.get(WORKER_OUTPUT_KEY))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.sink.finish(self.config.stash[SESSION_KEY], self.config, session)

    def pytest_terminal_summary(self, terminalreporter: object, exitstatus: int) -> None:
        self.sink.terminal_summary(terminalreporter)
        for line in _left_out_of(self.config.stash[SESSION_KEY]):
            terminalreporter.write_line(line, yellow=True)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        # after pytest's own final line: the report is what a person opens next
        directory = getattr(self.sink, "report_dir", None)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if directory is not None and reporter is not None:
            from harness.run.quiet_failures import last_line

            reporter.write_line(last_line(directory))


def _left_out_of(session: object) -> list[str]:
    """:func:`left_out_lines` of a run that loaded its scene set (a run of other tests loads
    nothing for it and says nothing)."""
    inputs = getattr(session, "inputs", None)
    if inputs is None or "scene_set" not in vars(inputs):
        return []
    return left_out_lines(inputs.scene_set.scenes)


def trim_note_of(session: AuditSession) -> str | None:
    """The start-of-run line when the profile audits fewer prompts than the scene set has."""
    from harness.protocol.profiles import load_profiles
    from harness.run.notes import trim_note

    try:
        audited = len(session.inputs.scene_set.prompt_ids)
    except AuditError:
        return None  # the run reports the problem itself, with its own message
    profiles = {name: p.prompts for name, p in load_profiles().items()}
    return trim_note(session.inputs.named_profile.name, audited, session.inputs.prompts_available, profiles)
