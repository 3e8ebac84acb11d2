"""Aggregation of audit outcomes across processes: the controller and worker sinks.

With pytest-xdist each worker runs tests and sends test reports to the controller; an audit
test's outcome rides in ``report.user_properties`` as one JSON string (each ``audit_claim``
request as another, under ``CLAIM_PROPERTY``), and per-worker facts
(what was measured) go through ``workeroutput``, again as a JSON string. Only the controller
writes ``reports/``. Without xdist the single process is the controller. The plugin picks the
sink in exactly one place (``harness.plugin.configure.pytest_configure``).
"""

from __future__ import annotations

import errno
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pytest

from harness.core.errors import AuditError
from harness.run.session import (
    CLAIM_PROPERTY,
    PANEL,
    RESULT_PROPERTY,
    WORKER_OUTPUT_KEY,
    AuditSession,
)


def outcomes_of(report: pytest.TestReport) -> list[dict[str, object]]:
    """The audit outcomes a test report carries (parsed JSON strings)."""
    out = []
    for name, value in getattr(report, "user_properties", ()):
        if name == RESULT_PROPERTY and isinstance(value, str):
            out.append(json.loads(value))
    return out


def claims_of(report: pytest.TestReport) -> list[str]:
    """The ``audit_claim`` requests a test report carries (JSON strings, as recorded)."""
    return [value for name, value in getattr(report, "user_properties", ())
            if name == CLAIM_PROPERTY and isinstance(value, str)]  # fmt: skip


#: Makes the report's ``claims/`` files of the given ``audit_claim`` requests (the plugin's).
ClaimFiles = Callable[[Iterable[str]], Mapping[str, Mapping[str, bytes]]]


class WorkerSink:
    """On an xdist worker: reports travel to the controller by themselves; send facts at the end."""

    def add_report(self, report: pytest.TestReport) -> None:
        """Nothing to do: xdist forwards the report (with its user_properties) to the controller."""

    def add_worker_output(self, text: str | None) -> None:
        """Workers receive no worker output."""

    def finish(self, session: AuditSession, config: pytest.Config, pytest_session: pytest.Session) -> None:
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[WORKER_OUTPUT_KEY] = json.dumps(session.worker_facts(), sort_keys=True)

    def terminal_summary(self, terminalreporter: object) -> None:
        """Workers print nothing."""


#: errno values of a write that failed for lack of room or permission (not a bug of ours).
WRITE_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG})


def write_failure(exc: OSError) -> str:
    """``cannot write <directory>: <reason> (<ERRNO>)``, the directory being that of the file
    the error names (``?`` when it names none)."""
    where = Path(exc.filename).parent if exc.filename else "?"
    code = errno.errorcode.get(exc.errno or 0, "")
    return f"cannot write {where}: {exc.strerror or exc}" + (f" ({code})" if code else "")


def disk_error(exc: OSError, report_dir: Path) -> str:
    """One line for a write that failed while the report (or a cache entry it reads) was
    written: the directory, the reason and what to do. ``report_dir`` is named when the error
    carries no file name."""
    head = write_failure(exc) if exc.filename else write_failure(
        OSError(exc.errno, exc.strerror or str(exc), str(report_dir / "x")))
    return (f"{head}; nothing was published under {report_dir} "
            "(free space or fix permissions there, then rerun: the caches keep what was measured)")


STUDY_SUITE = "audit_tests/"  # test keys of the study's suite, in a checkout or installed


class ControllerSink:
    """Collects every audit outcome, worker fact and claim request; writes the report directory
    at the end. ``claim_files``: makes the claims' files for the report (``None``: no claims
    section)."""

    def __init__(self, claim_files: ClaimFiles | None = None) -> None:
        self.claim_files = claim_files
        self.claims: set[str] = set()
        self.results: dict[str, dict[str, object]] = {}
        self.worker_facts: list[dict[str, object]] = []
        self.report_dir: Path | None = None
        self.error: str | None = None
        self.rows: list[dict[str, object]] = []
        self.gate_problem: str | None = None
        self.missing: list[str] = []
        self.kept = 0
        self.complete = True
        self.selection: str | None = None
        self.looser: dict[str, dict[str, dict[str, float]]] = {}  # evaluator -> looser thresholds

    def add_report(self, report: pytest.TestReport) -> None:
        for result in outcomes_of(report):
            # one result per test; a later phase (call after setup) replaces an earlier one
            self.results[result["test"]] = result
        self.claims.update(claims_of(report))

    def add_worker_output(self, text: str | None) -> None:
        if text:
            self.worker_facts.append(json.loads(text))

    def evaluators(self, session: AuditSession) -> list[str]:
        """Evaluators the report covers: those with results; all selected ones if panel tests ran."""
        ids = {r["evaluator"] for r in self.results.values() if r["evaluator"] != PANEL}
        if any(r["evaluator"] == PANEL for r in self.results.values()):
            ids.update(session.inputs.specs)
        return sorted(ids)

    def expected_tests(self, session: AuditSession, evaluators: list[str]) -> set[str]:
        """Collected audit tests (before deselection) that a report of ``evaluators`` covers.

        Panel tests belong to the report of every selected evaluator."""
        collected: dict[str, str] = dict(session.collected_tests)  # a lone process collects too
        for fact in self.worker_facts:
            collected.update(fact.get("collected", {}))
        chosen = set(evaluators)
        if chosen == set(session.inputs.specs):
            chosen.add(PANEL)
        return {test for test, ev in collected.items() if ev in chosen}

    def finish(self, session: AuditSession, config: pytest.Config, pytest_session: pytest.Session) -> None:
        try:
            self._write(session, config, pytest_session)
        finally:
            # this process's own measurements, taken after the report (which reads the caches)
            self.worker_facts.append(session.worker_facts())
            self._check_verdict(session, pytest_session)

    def _check_verdict(self, session: AuditSession, pytest_session: pytest.Session) -> None:
        """Under ``--audit-gate`` a run that wrote no report has no verdict: it never exits 0
        (a scorer's ``SystemExit``, a crash before any result, a report that failed to write)."""
        if not session.options.gate or self.report_dir is not None:
            return
        if not self.error and not self.gate_problem:
            self.gate_problem = (
                f"no report was written ({len(self.results)} audit results reached the end of "
                "the run), so there is no verdict; see the errors above"
            )
        if pytest_session.exitstatus == pytest.ExitCode.OK:
            pytest_session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _write(self, session: AuditSession, config: pytest.Config, pytest_session: pytest.Session) -> None:
        if not self.results:
            return
        from harness.report.writer import write_report
        from harness.run.outputs import run_result

        evaluators = self.evaluators(session)
        expected = self.expected_tests(session, evaluators)
        self.selection = selection_of(config) or without_study_suite(expected | set(self.results))
        try:
            written = write_report(
                run_result(session, evaluators, self._claim_files(evaluators)),
                [self.results[k] for k in sorted(self.results)],
                expected,
                self.selection,
            )
        except AuditError as exc:
            self.error = str(exc)
            pytest_session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        except OSError as exc:  # a full disk, a read-only directory: one line, no traceback
            self.error = disk_error(exc, Path(session.options.report_dir))
            pytest_session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        finally:
            self._check_gate(session, pytest_session)
        self.report_dir = written.directory
        self.rows = written.terminal_rows
        from harness.checks.thresholds import looser_than_study

        self.looser = {ev: found for ev in evaluators if (found := looser_than_study(session.gate_thresholds.for_evaluator(ev)))}
        self.missing = written.missing
        self.kept = written.kept
        self.complete = written.complete

    def _claim_files(self, evaluators: list[str]) -> Mapping[str, Mapping[str, bytes]]:
        """The report's claims: those of the run's tests whose evaluator the report covers."""
        wanted = sorted(c for c in self.claims if json.loads(c).get("evaluator") in evaluators)
        return self.claim_files(wanted) if wanted and self.claim_files is not None else {}

    def _check_gate(self, session: AuditSession, pytest_session: pytest.Session) -> None:
        """Fail a run in which no audit check reached an assertion (it gated nothing), or in
        which the study's suite (``audit_tests/``) ran and none of its checks did: a project's
        own passing check must not hide a study gate that skipped whole."""
        if session.options.allow_empty:
            return
        study = [r for r in self.results.values() if str(r.get("test", "")).startswith(STUDY_SUITE)]
        if any(r.get("checks") for r in self.results.values()) and (
            not study or any(r.get("checks") for r in study)
        ):
            return
        if any(r.get("checks") for r in self.results.values()):
            self.gate_problem = (
                f"none of the study's {len(study)} audit tests ({STUDY_SUITE}) reached an "
                "assertion, so only the project's own checks gated this run. The study's "
                "thresholds are built in (declared in harness/vocab/metrics.py; "
                "'t3d-audit thresholds' lists them); see the skipped tests' reasons, "
                "or pass --audit-allow-empty when an empty study gate is intended."
            )
            if pytest_session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                pytest_session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        outcomes = [r["outcome"] for r in self.results.values()]
        self.gate_problem = (
            f"no audit check reached an assertion: {len(outcomes)} audit tests ran "
            f"({outcomes.count('skipped')} skipped, {outcomes.count('passed')} passed without "
            f"a check, {outcomes.count('failed')} failed before one), so nothing was gated. "
            "Declare thresholds in [tool.t3d-audit.thresholds] (skipped tests say which), or "
            "pass --audit-allow-empty when an empty gate is intended."
        )
        # a configuration that gates nothing is a usage error, not a verdict (exit 4, not 1)
        if pytest_session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            pytest_session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def terminal_summary(self, terminalreporter: object) -> None:
        if self.gate_problem:
            terminalreporter.write_sep("=", "t3d-audit gate", red=True)
            terminalreporter.write_line(f"FAILED: {self.gate_problem}")
        if self.error:
            terminalreporter.write_sep("=", "t3d-audit report", red=True)
            terminalreporter.write_line(f"report not written: {self.error}")
            return
        if self.report_dir is None:
            return
        from harness.report.terminal import dash_notes, headlines, render_table

        terminalreporter.write_sep("=", "t3d-audit summary")
        for line in [*render_table(self.rows), *dash_notes(self.rows)]:
            terminalreporter.write_line(line)
        for line in headlines(self.rows):
            terminalreporter.write_line(line)
        measured = _sum_facts(self.worker_facts)
        if measured:
            terminalreporter.write_line(measured_line(measured))
        from harness.checks.evidence import check_outcomes, evidence_summary

        checks = check_outcomes(list(self.results.values()))
        if checks:
            terminalreporter.write_line(evidence_summary(checks))
        if self.kept:
            terminalreporter.write_line(
                f"partial run: {self.kept} results kept from the earlier report of this run id"
            )
        if self.missing:
            terminalreporter.write_line(
                f"report marked partial: {len(self.missing)} collected audit tests have no result "
                f"(first: {self.missing[0]}); rerun without -k/--lf to complete it"
            )
        elif not self.complete and self.selection and self.selection.startswith("without the study's suite"):
            terminalreporter.write_line(f"report marked partial: this run ran {self.selection}")
        elif not self.complete:
            terminalreporter.write_line(
                f"report marked partial: this run selected part of the suite ({self.selection}) "
                "and no complete report of this run id exists; rerun without it to complete it"
            )
        discarded = _sum_discarded(self.worker_facts)
        if discarded:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(discarded.items()))
            total = sum(discarded.values())
            terminalreporter.write_line(
                f"cache: {total} corrupt {'entry' if total == 1 else 'entries'} discarded and "
                f"recomputed ({kinds})"
            )
        for ev, looser in sorted(self.looser.items()):
            named = ", ".join(f"{name} {v['value']:g} (study {v['study']:g})" for name, v in looser.items())
            terminalreporter.write_line(f"looser than the study: {ev} was gated with {named}", yellow=True)
        terminalreporter.write_line(f"report: {self.report_dir}")


#: The package of the study's own audit suite: a report without it is not the study's audit.
STUDY_SUITE = "audit_tests"


def without_study_suite(test_keys: set[str]) -> str | None:
    """How a run that collected none of the study's suite chose its tests (a project's own
    audits under plain ``pytest``), or ``None`` when the suite is there: such a report is marked
    partial, so ``validate`` and the leaderboard refuse it as the study's audit."""
    if not test_keys or any(key.startswith(f"{STUDY_SUITE}/") for key in test_keys):
        return None
    return (f"without the study's suite ({STUDY_SUITE}/): only the project's own audits ran; "
            f"run `pytest --pyargs {STUDY_SUITE} <your audits>` or `t3d-audit audit` for the whole audit")


def selection_of(config: pytest.Config) -> str | None:
    """How the run chose part of the collected suite, or ``None`` when it ran all of it."""
    chosen = []
    for flag, dest in (("-k", "keyword"), ("-m", "markexpr")):
        value = config.getoption(dest, None)
        if value:
            chosen.append(f"{flag} {value}")
    if config.getoption("deselect", None):
        chosen.append("--deselect")
    if config.getoption("stepwise", False):
        chosen.append("--stepwise")
    lf = config.pluginmanager.get_plugin("lfplugin")
    if config.getoption("lf", False) and lf is not None and getattr(lf, "lastfailed", None):
        chosen.append("--lf")
    if any("::" in str(arg) for arg in config.args):
        chosen.append("node ids")
    return " ".join(chosen) or None


def measured_line(measured: dict[str, int]) -> str:
    """What the tests measured, each count under its own cause: renders made by the tests,
    renders read from the render cache (a warm step's, or an earlier run's), pairs scored, pairs
    the plan repeats (scored once, reused) and pairs from the score cache of earlier runs."""
    cached = measured["images"] - measured["renders"]
    text = (f"measured here: {measured['images']} images ({measured['renders']} rendered by the "
            f"tests, {cached} read from the render cache)")
    if measured.get("reused_pairs"):
        text += f", {measured['reused_pairs']} repeated pairs scored once and reused"
    return (text + f", {measured['scored_pairs']} pairs scored, {measured['cached_pairs']} pairs "
            "from the score cache of earlier runs")


def _sum_facts(facts: list[dict[str, object]]) -> dict[str, int]:
    total = {"images": 0, "renders": 0, "scored_pairs": 0, "cached_pairs": 0, "reused_pairs": 0}
    seen = False
    for fact in facts:
        for counters in fact.get("measure", {}).values():
            seen = True
            for k in total:
                total[k] += int(counters.get(k, 0))
    return total if seen else {}


def _sum_discarded(facts: list[dict[str, object]]) -> dict[str, int]:
    """Cache entries that failed verification, summed over processes, by cache kind."""
    total: dict[str, int] = {}
    for fact in facts:
        for kind, n in fact.get("cache_discarded", {}).items():
            total[kind] = total.get(kind, 0) + int(n)
    return total
