"""Aggregation of audit outcomes across processes: the controller and worker sinks.

With pytest-xdist each worker runs tests and sends test reports to the controller; an audit
test's outcome rides in ``report.user_properties`` as one JSON string, and per-worker facts
(what was measured) go through ``workeroutput``, again as a JSON string. Only the controller
writes ``reports/``. Without xdist the single process is the controller. The plugin picks the
sink in exactly one place (``harness.plugin.pytest_configure``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.errors import AuditError
from harness.session import PANEL, RESULT_PROPERTY, WORKER_OUTPUT_KEY, AuditSession


def outcomes_of(report: pytest.TestReport) -> list[dict[str, Any]]:
    """The audit outcomes a test report carries (parsed JSON strings)."""
    out = []
    for name, value in getattr(report, "user_properties", ()):
        if name == RESULT_PROPERTY and isinstance(value, str):
            out.append(json.loads(value))
    return out


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

    def terminal_summary(self, terminalreporter: Any) -> None:
        """Workers print nothing."""


class ControllerSink:
    """Collects every audit outcome and worker fact; writes the report directory at the end."""

    def __init__(self) -> None:
        self.results: dict[str, dict[str, Any]] = {}
        self.worker_facts: list[dict[str, Any]] = []
        self.report_dir: Path | None = None
        self.error: str | None = None
        self.rows: list[dict[str, Any]] = []

    def add_report(self, report: pytest.TestReport) -> None:
        for result in outcomes_of(report):
            # one result per test; a later phase (call after setup) replaces an earlier one
            self.results[result["test"]] = result

    def add_worker_output(self, text: str | None) -> None:
        if text:
            self.worker_facts.append(json.loads(text))

    def evaluators(self, session: AuditSession) -> list[str]:
        """Evaluators the report covers: those with results; all selected ones if panel tests ran."""
        ids = {r["evaluator"] for r in self.results.values() if r["evaluator"] != PANEL}
        if any(r["evaluator"] == PANEL for r in self.results.values()):
            ids.update(session.specs)
        return sorted(ids)

    def finish(self, session: AuditSession, config: pytest.Config, pytest_session: pytest.Session) -> None:
        try:
            self._write(session, pytest_session)
        finally:
            # this process's own measurements, taken after the report (which reads the caches)
            self.worker_facts.append(session.worker_facts())

    def _write(self, session: AuditSession, pytest_session: pytest.Session) -> None:
        if not self.results:
            return
        from harness.report.writer import write_report

        try:
            written = write_report(
                session,
                self.evaluators(session),
                [self.results[k] for k in sorted(self.results)],
            )
        except AuditError as exc:
            self.error = str(exc)
            pytest_session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
        self.report_dir = written.directory
        self.rows = written.terminal_rows

    def terminal_summary(self, terminalreporter: Any) -> None:
        if self.error:
            terminalreporter.write_sep("=", "t3d-audit report", red=True)
            terminalreporter.write_line(f"report not written: {self.error}")
            return
        if self.report_dir is None:
            return
        from harness.report.terminal import render_table

        terminalreporter.write_sep("=", "t3d-audit summary")
        for line in render_table(self.rows):
            terminalreporter.write_line(line)
        measured = _sum_facts(self.worker_facts)
        if measured:
            terminalreporter.write_line(
                "measured here: {images} images ({renders} rendered, the rest from the render "
                "cache), {scored_pairs} pairs scored, {cached_pairs} pairs from the score "
                "cache".format(**measured)
            )
        discarded = _sum_discarded(self.worker_facts)
        if discarded:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(discarded.items()))
            total = sum(discarded.values())
            terminalreporter.write_line(
                f"cache: {total} corrupt {'entry' if total == 1 else 'entries'} discarded and "
                f"recomputed ({kinds})"
            )
        terminalreporter.write_line(f"report: {self.report_dir}")


def _sum_facts(facts: list[dict[str, Any]]) -> dict[str, int]:
    total = {"images": 0, "renders": 0, "scored_pairs": 0, "cached_pairs": 0}
    seen = False
    for fact in facts:
        for counters in fact.get("measure", {}).values():
            seen = True
            for k in total:
                total[k] += int(counters.get(k, 0))
    return total if seen else {}


def _sum_discarded(facts: list[dict[str, Any]]) -> dict[str, int]:
    """Cache entries that failed verification, summed over processes, by cache kind."""
    total: dict[str, int] = {}
    for fact in facts:
        for kind, n in fact.get("cache_discarded", {}).items():
            total[kind] = total.get(kind, 0) + int(n)
    return total
