"""The run's one :class:`~harness.run.session.AuditSession`, built and stored under a StashKey
in ``pytest_configure``: options resolved, the hook-provided renderer and evaluators checked,
and the one place that tells an xdist worker from the controller (or a lone process)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pytest

from harness.core import cacheseal
from harness.core.errors import AuditError
from harness.plugin.reporting import RunHooks
from harness.run.aggregate import ControllerSink, WorkerSink
from harness.run.options import build_options
from harness.run.session import SESSION_KEY, AuditSession


def new_session(config: pytest.Config) -> AuditSession:
    """The run's :class:`AuditSession`: options resolved, hook-provided renderer and evaluators."""
    hook = config.hook

    def renderer_factory(cache_dir: Path) -> object:
        found = hook.pytest_audit_renderer(config=config, cache_dir=cache_dir)
        if found is not None:
            return found
        from harness.render.renderer import default_renderer

        return default_renderer(cache_dir)

    from harness.run.evaluator_selection import offered_specs

    extra = _hook_evaluators(config, offered_specs)  # a clash of ids names both sources
    _check_hook_ids(extra)
    try:
        from harness.run.environment import check_environment

        check_environment()  # every T3D_AUDIT_* value, before any test
        cacheseal.secret()  # an unusable cache key stops the run here, not in every test
    except AuditError as exc:
        raise pytest.UsageError(f"t3d-audit: {exc}") from exc
    return AuditSession(build_options(config), renderer_factory=renderer_factory, extra_evaluators=extra)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "audit: an audit assertion over evaluator x factor x probe (the release gate)"
    )
    # built already when t3d-audit audit asked whether workers are worth starting (WarmInProcess)
    session = config.stash.get(SESSION_KEY, None) or new_session(config)
    # The one place that distinguishes an xdist worker from the controller (or a lone process).
    if hasattr(config, "workerinput"):
        session.sink = WorkerSink()
        share_cores(int(config.workerinput.get("workercount", 1)))
    else:
        session.sink = ControllerSink(claim_files=lambda properties: _claim_files(config, properties))
    config.stash[SESSION_KEY] = session
    # where each measurement says it starts and ends: the terminal, past pytest's capture
    session.record_cache.announce = _uncaptured_line(config)
    if not hasattr(config, "workerinput"):
        _check_selection(config, session)
    config.pluginmanager.register(RunHooks(config), "t3d-audit-run")
    from harness.run.quiet_failures import QuietFailures, wanted

    if not hasattr(config, "workerinput") and wanted(config):
        config.pluginmanager.register(QuietFailures(), "t3d-audit-quiet")


def _claim_files(config: pytest.Config, properties: Iterable[str]) -> Mapping[str, Mapping[str, bytes]]:
    """The report's claims (``harness.claims``, imported only for a run whose tests made one)."""
    from harness.claims.in_audit import audit_claims

    return audit_claims(config).report_files(properties)


def _hook_evaluators(config: pytest.Config, offered_specs: Callable[[object], list[object]]) -> list[object]:
    """What the ``pytest_audit_evaluators`` hooks offer, as specs; a hook that raises, or an
    offer that is no valid evaluator (a bad id, a NaN ``score_range``), is a usage error (exit
    4) with one line, its secrets masked, never an INTERNALERROR."""
    from harness.evaluators.secrets import environment_secrets, scrub_reason

    try:
        return offered_specs(config)
    except (KeyboardInterrupt, pytest.UsageError):
        raise
    except BaseException as exc:  # user code: SystemExit too
        if isinstance(exc, AuditError):
            raise pytest.UsageError(f"t3d-audit: {scrub_reason(str(exc), environment_secrets(), 400)}") from None
        reason = scrub_reason(f"{type(exc).__name__}: {exc}", environment_secrets(), 400)
        raise pytest.UsageError(f"t3d-audit: pytest_audit_evaluators: {reason}") from None


def _uncaptured_line(config: pytest.Config) -> Callable[[str], None]:
    """Write one line to stderr past pytest's output capture (an xdist worker's stderr is the
    controller's): a measurement that renders for minutes says when it starts and ends."""
    import sys

    capman = config.pluginmanager.getplugin("capturemanager")

    def write(line: str) -> None:
        if capman is None:
            print(line, file=sys.stderr, flush=True)
            return
        with capman.global_and_fixture_disabled():
            print(line, file=sys.stderr, flush=True)

    return write


def _check_hook_ids(specs: list[object]) -> None:
    """Every id a ``pytest_audit_evaluators`` hook returned is a valid evaluator id (exit 4);
    hook specs may be duck-typed, so their ids are checked here and not only by the spec."""
    from harness.core.ids import evaluator_id_problem

    for spec in specs:
        problem = evaluator_id_problem(getattr(spec, "id", None))
        if problem is not None:
            raise pytest.UsageError(
                f"t3d-audit: pytest_audit_evaluators: {problem} (rename the evaluator; "
                "docs/formats.md, 'Evaluator ids')"
            )


def _check_selection(config: pytest.Config, session: AuditSession) -> None:
    """Evaluator ids/globs and threshold overrides, checked once on the controller.

    Only when the run names evaluators or declares overrides: plain ``pytest tests`` stays free
    of registry look-ups. An override glob that matches no selected evaluator removes nothing
    but gates nothing either: a warning, and an error under ``--audit-gate``.
    """
    import fnmatch

    options = session.options
    if not (options.evaluators or options.thresholds.overrides):
        return
    try:
        selected = list(session.inputs.specs)
    except AuditError as exc:
        raise pytest.UsageError(f"t3d-audit: {exc}") from exc
    for pattern, _values in options.thresholds.overrides:
        if any(fnmatch.fnmatchcase(e, pattern) for e in selected):
            continue
        problem = (
            f"t3d-audit: threshold override {pattern!r} matches no selected evaluator "
            f"({', '.join(selected)}); check its spelling in [tool.t3d-audit.thresholds.overrides]"
        )
        if options.gate:
            raise pytest.UsageError(problem + " (an error under --audit-gate)")
        config.issue_config_time_warning(pytest.PytestConfigWarning(problem), stacklevel=2)


def share_cores(workers: int) -> None:
    """Give each xdist worker its share of the cores for torch and Cycles (unless the user set
    thread counts): N workers each running a pool over every core oversubscribe the machine."""
    import os
    import sys

    from harness.render.settings import THREADS_ENV, core_share

    share = str(core_share(workers))
    for name in ("OMP_NUM_THREADS", THREADS_ENV):
        os.environ.setdefault(name, share)
    if "torch" in sys.modules:  # imported early by a conftest: OMP_NUM_THREADS came too late
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
