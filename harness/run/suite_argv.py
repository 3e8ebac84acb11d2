"""The pytest command line of an audit run and the report directory it wrote: shared by
``t3d-audit audit`` and :func:`harness.api.audit`."""

from __future__ import annotations

import argparse
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import AuditError
from harness.core.paths import REPO_ROOT
from harness.core.rootdir import project_root


@dataclass(frozen=True)
class SuiteRun:
    """What an audit run asks pytest for. ``workers``: ``"0"`` (this process), a count,
    ``"auto"`` or ``"logical"``; ``evaluators``: comma-separated ids or globs; ``pytest_args``:
    further pytest arguments (a leading ``--`` is dropped)."""

    profile: str = "default"
    workers: str = "0"
    evaluators: str | None = None
    report_dir: str | Path | None = None
    cache_dir: str | Path | None = None
    view_policy: str = "single"
    gate: bool = False
    baseline: str | Path | None = None
    profile_file: str | Path | None = None
    pytest_args: tuple[str, ...] = ()
    evidence: str | None = None  # None: the project's setting, else descriptive

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SuiteRun:
        """The run ``t3d-audit audit``'s parsed arguments ask for."""
        return cls(profile=args.profile, workers=str(args.workers), evaluators=args.evaluators,
                   report_dir=args.report_dir, cache_dir=args.cache_dir,
                   view_policy=getattr(args, "view_policy", "single"), gate=bool(args.gate),
                   baseline=getattr(args, "baseline", None), profile_file=getattr(args, "profile_file", None),
                   pytest_args=tuple(args.pytest_args or ()), evidence=getattr(args, "evidence", None))  # fmt: skip


def suite_args() -> list[str]:
    """How pytest finds the study's suite: the installed package ``audit_tests`` by name (the
    invocation folder stays the rootdir, so the user's conftest and config are read), else a
    checkout's folder when the package is not importable from here."""
    try:
        found = importlib.util.find_spec("audit_tests") is not None
    except (ImportError, ValueError):
        found = False
    return ["--pyargs", "audit_tests"] if found else [str(REPO_ROOT / "audit_tests")]


def pytest_argv(run: SuiteRun) -> list[str]:
    """The pytest command line of ``run`` (also printed, so users can run it directly)."""
    # `=` forms: no value can be taken for a test path. The rootdir is the invoking project's.
    argv = [
        *suite_args(), "-p", "no:cacheprovider",
        f"--audit-profile={run.profile}",
        # this process imported harness (the CLI) before pytest could mark it for rewriting
        "-W", "ignore:Module already imported so cannot be rewritten; harness"
        ":pytest.PytestAssertRewriteWarning",
    ]
    if run.workers != "0":
        argv += ["-n", run.workers, "--dist", "loadgroup", "--max-worker-restart", "0"]
    if run.profile_file:
        argv += [f"--audit-profile-file={Path(run.profile_file).resolve()}"]
    if run.evaluators:
        argv += [f"--audit-evaluators={run.evaluators}"]
    if run.report_dir:
        argv += [f"--audit-report-dir={run.report_dir}"]
    if run.cache_dir:
        argv += [f"--audit-cache-dir={run.cache_dir}"]
    if run.view_policy != "single":
        argv += [f"--audit-view-policy={run.view_policy}"]
    if run.gate:
        argv += ["--audit-gate"]
    if run.evidence:
        argv += [f"--audit-evidence={run.evidence}"]
    if run.baseline:
        argv += [f"--audit-baseline={run.baseline}"]
    extra = list(run.pytest_args)
    if extra and extra[0] == "--":
        extra = extra[1:]
    return argv + extra


def reports_dir(report_dir: str | Path | None) -> Path:
    """Where a run's report goes: ``report_dir``, else ``reports/`` under the invoking
    project's root (pytest's rootdir for the working folder, as the plugin uses)."""
    return Path(report_dir) if report_dir else project_root(Path.cwd()) / "reports"


def latest_report(report_dir: Path, since: float) -> Path:
    """The report directory a run wrote: the newest ``<run-id>/`` modified since ``since``
    (seconds since the epoch)."""
    found = [p for p in report_dir.iterdir() if p.is_dir() and not p.name.startswith(".")] \
        if report_dir.is_dir() else []
    found = [p for p in found if p.stat().st_mtime >= since - 1]
    if not found:
        raise AuditError("the run wrote no report to save as a baseline", where=str(report_dir))
    return max(found, key=lambda p: p.stat().st_mtime)
