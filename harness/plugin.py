"""pytest plugin of t3d-audit (registered by the root conftest and the pytest11 entry point).

Thin by design: options (``--audit-*``), the ``audit`` marker, hooks (``pytest_audit_*``),
parametrization and fixtures live here; all state lives in one :class:`AuditSession` stored
under a StashKey. The xdist worker/controller branch happens once, in ``pytest_configure``.
Nothing heavy is imported at collection time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar

import pytest

from harness.core import cacheseal
from harness.core.errors import AuditError
from harness.run.aggregate import ControllerSink, WorkerSink
from harness.run.options import PATH_OPTIONS, add_options, build_options
from harness.run.session import (
    PANEL,
    RESULT_PROPERTY,
    SESSION_KEY,
    WORKER_OUTPUT_KEY,
    AuditSession,
    audit_session_of,
)

if TYPE_CHECKING:  # fixture types only: none of these is imported when the plugin loads
    import numpy as np
    import pandas as pd

    from harness.checks.assertions import AuditCheck
    from harness.core.jsonout import JSONObject
    from harness.measure.plan import ImageKey, Plan
    from harness.measure.repeatability import Repeatability
    from harness.peers.presentation_probes import ProbeResult
    from harness.protocol.configurations import Profile
    from harness.scenes.sceneset import SceneSet
    from harness.stats.summary import EvaluatorSummary, PanelSummary

# --audit-baseline (the release comparison as parametrized tests) lives in its own plugin module
pytest_plugins = ["harness.release.gate"]

OUTCOMES_KEY = pytest.StashKey[list]()
PANEL_GROUP = "t3d-audit-panel"
T = TypeVar("T")


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from harness.run import hookspecs
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, args: list[str]) -> None:
    # `--audit-cache-dir DIR` made DIR pytest's rootdir: redo that choice before it is used
    from harness.core.rootdir import reresolve

    reresolve(early_config, args, PATH_OPTIONS)


def _new_session(config: pytest.Config) -> AuditSession:
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


class WarmInProcess:
    """A pytest plugin object ``t3d-audit audit`` registers for its run of the audit suite:
    ``-n auto`` starts no xdist workers when every selected evaluator's records are already in
    the cache (a warm run measures nothing, and every worker would load the scenes, plan and
    records again only to read cached statistics); otherwise xdist chooses (one per core;
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` is honoured). The session built to decide is kept for
    :func:`pytest_configure`. The report is the same either way. Not a plugin-wide hook: a
    run of other tests (``pytest tests -n auto``) says nothing by its audit records."""

    # how the user runs this (quiet_failures spells its hints for this command, not pytest)
    t3d_audit_command = "t3d-audit audit"

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_auto_num_workers(self, config: pytest.Config) -> int | None:
        import os

        if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
            return None
        try:
            session = _new_session(config)
            config.stash[SESSION_KEY] = session
            specs = session.inputs.specs
            cached = bool(specs) and all(session.record_cache.cached(ev) for ev in specs)
        except Exception:  # undecidable here: pytest_configure reports real problems
            return None
        if cached:  # the printed command line says `-n auto`: say what it became
            print("t3d-audit audit: every evaluator's records are cached, so the audit runs in "
                  "this process (-n auto starts no workers)", flush=True)
        return 0 if cached else None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "audit: an audit assertion over evaluator x factor x probe (the release gate)"
    )
    # built already when t3d-audit audit asked whether workers are worth starting (WarmInProcess)
    session = config.stash.get(SESSION_KEY, None) or _new_session(config)
    # The one place that distinguishes an xdist worker from the controller (or a lone process).
    if hasattr(config, "workerinput"):
        session.sink = WorkerSink()
        _share_cores(int(config.workerinput.get("workercount", 1)))
    else:
        session.sink = ControllerSink()
    config.stash[SESSION_KEY] = session
    # where each measurement says it starts and ends: the terminal, past pytest's capture
    session.record_cache.announce = _uncaptured_line(config)
    if not hasattr(config, "workerinput"):
        _check_selection(config, session)
    config.pluginmanager.register(_RunHooks(config), "t3d-audit-run")
    from harness.run.quiet_failures import QuietFailures, wanted

    if not hasattr(config, "workerinput") and wanted(config):
        config.pluginmanager.register(QuietFailures(), "t3d-audit-quiet")


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


def _share_cores(workers: int) -> None:
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


# ------------------------------------------------------------------------------ collection


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    names = metafunc.fixturenames
    wanted = [
        n
        for n in ("audit_evaluator", "audit_factor", "audit_shared_factor", "audit_probe", "audit_block",
                  "audit_presentation_probe", "audit_saved_level")
        if n in names
    ]
    if not wanted:
        return
    session = audit_session_of(metafunc.config)
    try:
        if "audit_evaluator" in names:
            metafunc.parametrize(
                "audit_evaluator",
                [pytest.param(e, id=e, marks=pytest.mark.xdist_group(e)) for e in session.inputs.specs],
            )
        profile = session.inputs.profile
        if "audit_factor" in names:
            factors = list(profile.levels)
            metafunc.parametrize("audit_factor", _factor_params(session.inputs.scene_set.scenes, factors))
        if "audit_shared_factor" in names:
            from harness.vocab.factors import shared_factor_names

            shared = [f for f in profile.levels if f in shared_factor_names()]
            metafunc.parametrize("audit_shared_factor", _factor_params(session.inputs.scene_set.scenes, shared, ranks=True))
        if "audit_probe" in names:
            probes = list(profile.probes)
            metafunc.parametrize("audit_probe", probes, ids=probes)
        if "audit_block" in names:
            metafunc.parametrize("audit_block", _block_params(session.inputs.named_profile))
        if "audit_presentation_probe" in names:
            metafunc.parametrize("audit_presentation_probe", _presentation_params(session.options.view_policy))
        if "audit_saved_level" in names:  # --audit-profile-file's saved levels (docs/search.md)
            saved = list(session.searches.saved_levels)
            metafunc.parametrize("audit_saved_level", saved, ids=saved, indirect=True)
    except AuditError as exc:
        problem = str(exc)
    else:
        return
    pytest.fail(f"t3d-audit: {problem}", pytrace=False)  # one clean line, no traceback


def factors_left_out(scenes: Sequence[object]) -> dict[str, int]:
    """``factor -> number of scenes`` it cannot change (``measure_plan.factors_not_applicable``:
    lighting on 3D Gaussian splats). Those scenes have no rows for it, so its statistics and
    checks cover the other scenes only."""
    from harness.measure.plan import factors_not_applicable

    counts: dict[str, int] = {}
    for scene in scenes:
        for factor in factors_not_applicable(scene):
            counts[factor] = counts.get(factor, 0) + 1
    return counts


def _factor_params(scenes: Sequence[object], factors: list[str], ranks: bool = False) -> list[object]:
    """One parameter per factor. Scenes a factor cannot change are left out of that factor's
    checks only (:func:`factors_left_out`; the terminal summary says how many); a factor that
    can change no scene at all is skipped as "not applicable", never checked as a null effect.
    ``ranks``: the checks rank generators, so a factor that leaves fewer than two generators
    with scenes it can change is not applicable either."""
    from harness.measure.plan import factors_not_applicable

    counts = factors_left_out(scenes)
    params = []
    for f in factors:
        marks = ()
        kept = {s.generator for s in scenes if f not in factors_not_applicable(s)}
        if counts.get(f, 0) >= len(scenes):
            reason = (f"not applicable: {f} does not change any of the {counts[f]} scene(s) "
                      "(3D Gaussian splats: baked radiance), which have no rows for it")
            marks = (pytest.mark.skip(reason=reason),)
        elif ranks and f in counts and len(kept) < 2:
            reason = (f"not applicable: ranking generators by {f} needs two; it cannot change "
                      f"{counts[f]} of {len(scenes)} scene(s) (3D Gaussian splats), which leaves "
                      f"{len(kept)} generator")
            marks = (pytest.mark.skip(reason=reason),)
        params.append(pytest.param(f, id=f, marks=marks))
    return params


def _left_out_of(session: object) -> list[str]:
    """:func:`left_out_lines` of a run that loaded its scene set (a run of other tests loads
    nothing for it and says nothing)."""
    inputs = getattr(session, "inputs", None)
    if inputs is None or "scene_set" not in vars(inputs):
        return []
    return left_out_lines(inputs.scene_set.scenes)


def left_out_lines(scenes: Sequence[object]) -> list[str]:
    """The terminal's lines for :func:`factors_left_out` (none when every factor applies)."""
    n = len(scenes)
    return [
        f"t3d-audit: {factor} checks leave out {k} of {n} scene(s): 3D Gaussian splats, whose "
        f"baked radiance {factor} cannot change (the other scenes are checked)"
        for factor, k in sorted(factors_left_out(scenes).items()) if k < n
    ]


def _block_params(profile: object) -> list[object]:
    """One parameter per factorial block of ``profile``; without blocks, one skipped
    ``no-blocks`` parameter that says why (a skip, never a pass: the empty gate still sees
    the run's other checks)."""
    if profile.blocks:
        return [pytest.param(b.id, id=b.id) for b in profile.blocks]
    reason = f"not applicable: profile {profile.name!r} declares no factorial blocks"
    return [pytest.param(None, id="no-blocks", marks=pytest.mark.skip(reason=reason))]


def _presentation_params(view_policy: str) -> list[object]:
    """One parameter per presentation probe under ``--audit-view-policy=preset:NAME``; else one
    ``no-preset`` parameter that :func:`_drop_not_presented` removes before the run records its
    collected tests, so runs under other view policies keep their reports byte for byte."""
    from harness.peers.audit_probes import applicable_probes

    probes = applicable_probes(view_policy)
    if probes:
        return [pytest.param(p, id=p) for p in probes]
    reason = "not applicable: the run audits under no protocol preset (--audit-view-policy=preset:NAME)"
    return [pytest.param(None, id=NO_PRESET, marks=pytest.mark.skip(reason=reason))]


NO_PRESET = "no-preset"


def _drop_not_presented(items: list[pytest.Item]) -> None:
    """Remove the presentation checks of a run that audits under no preset (not collected)."""
    def presented(item: pytest.Item) -> bool:
        callspec = getattr(item, "callspec", None)
        return not (callspec and "audit_presentation_probe" in callspec.params
                    and callspec.params["audit_presentation_probe"] is None)  # fmt: skip

    items[:] = [item for item in items if presented(item)]


_AUDIT_FIXTURES = ("audit_evaluator", "audit_panel_summary", "audit_check")


def _searches(config: pytest.Config) -> bool:
    """Whether the run's profile declares a search block (an unreadable profile: the run's
    other checks say so, with their own message)."""
    try:
        return audit_session_of(config).inputs.named_profile.search is not None
    except AuditError:
        return True


def _saved_levels(config: pytest.Config) -> bool:
    """Whether ``--audit-profile-file`` gives the run's profile saved levels."""
    try:
        return bool(audit_session_of(config).searches.saved_levels)
    except AuditError:
        return True


def drop_search_checks(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Remove the tests that take ``audit_search`` unless the profile declares a search block,
    and those that take ``audit_saved_level`` unless ``--audit-profile-file`` gives saved
    levels: they exist only there (not even as skips), so a run without them keeps its
    results, run id and cards byte for byte (docs/search.md "In an audit")."""
    for fixture, present in (("audit_search", _searches), ("audit_saved_level", _saved_levels)):
        if any(fixture in getattr(i, "fixturenames", ()) for i in items) and not present(config):
            items[:] = [i for i in items if fixture not in getattr(i, "fixturenames", ())]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    panel: list[pytest.Item] = []
    rest: list[pytest.Item] = []
    for item in items:
        names = getattr(item, "fixturenames", ())
        if any(n in names for n in _AUDIT_FIXTURES):
            item.add_marker(pytest.mark.audit)
        if "audit_panel_summary" in names and "audit_evaluator" not in names:
            item.add_marker(pytest.mark.xdist_group(PANEL_GROUP))
            panel.append(item)
        else:
            rest.append(item)
    items[:] = rest + panel  # panel tests need every evaluator's records: run them last


# ------------------------------------------------------------------------------ reporting


def _test_key(item: pytest.Item) -> str:
    """Stable test id, identical with and without xdist's ``@group`` nodeid suffix."""
    path = Path(item.path).resolve()
    try:
        rel = path.relative_to(Path(item.config.rootpath).resolve())
    except ValueError:  # outside the project, e.g. the installed audit_tests: its package path
        top = path.parent
        while (top / "__init__.py").is_file() and (top.parent / "__init__.py").is_file():
            top = top.parent
        rel = path.relative_to(top.parent) if (top / "__init__.py").is_file() else Path(path.name)
    return f"{rel.as_posix()}::{item.name}"


def _evaluator_of(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    return str(callspec.params.get("audit_evaluator", PANEL)) if callspec else PANEL


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    report = yield
    names = getattr(item, "fixturenames", ())
    if not any(n in names for n in _AUDIT_FIXTURES):
        return report
    final = report.when == "call" or (report.when == "setup" and not report.passed)
    if final:
        result = {
            "test": _test_key(item),
            "evaluator": _evaluator_of(item),
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


class _RunHooks:
    """Per-run hooks bound to the run's sink (registered in ``pytest_configure``)."""

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
        _drop_not_presented(items)
        for item in items:
            if any(n in getattr(item, "fixturenames", ()) for n in _AUDIT_FIXTURES):
                session.collected_tests[_test_key(item)] = _evaluator_of(item)

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


# ------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="session")
def audit_session(request: pytest.FixtureRequest) -> AuditSession:
    """The run's audit session (options, profile, scenes, evaluators, cached records)."""
    return audit_session_of(request.config)


def _guard(fn: Callable[[], T]) -> T:
    """``fn()``; an audit error or a full disk fails the test with one line, no traceback."""
    from harness.run.aggregate import WRITE_FAILURES, write_failure

    try:
        return fn()
    except AuditError as exc:
        pytest.fail(f"t3d-audit: {exc}", pytrace=False)
    except OSError as exc:  # a full disk under the cache: one line, not a traceback per test
        if exc.errno not in WRITE_FAILURES:
            raise
        message = f"t3d-audit: {write_failure(exc)}; free space or fix permissions there and rerun"
    pytest.fail(message, pytrace=False)  # outside the handler: no chained exception shown


@pytest.fixture(scope="session")
def audit_profile(audit_session: AuditSession) -> Profile:
    """The protocol profile (``harness.protocol.configurations.Profile``)."""
    return _guard(lambda: audit_session.inputs.profile)


@pytest.fixture(scope="session")
def audit_scene_set(audit_session: AuditSession) -> SceneSet:
    """The selected frozen scene set (``harness.scenes.sceneset.SceneSet``)."""
    return _guard(lambda: audit_session.inputs.scene_set)


@pytest.fixture(scope="session")
def audit_render_plan(audit_session: AuditSession) -> Plan:
    """The measurement plan (``harness.measure.plan.Plan``): rows and the distinct renders."""
    return _guard(lambda: audit_session.inputs.plan)


@pytest.fixture(scope="session")
def audit_renders(audit_session: AuditSession) -> Callable[[ImageKey], np.ndarray | str]:
    """``image(row_image_key) -> (H, W, 3) uint8`` through the render cache (or a failure str)."""
    from harness.measure.images import ImageSource

    source = ImageSource(audit_session.inputs.plan, audit_session.inputs.renderer)
    return source.rgb


@pytest.fixture
def audit_records(audit_session: AuditSession, audit_evaluator: str) -> pd.DataFrame:
    """The evaluator's tidy records (``pandas.DataFrame``), measured once and disk-cached."""
    return _guard(lambda: audit_session.record_cache.records(audit_evaluator))


@pytest.fixture
def audit_summary(audit_session: AuditSession, audit_evaluator: str) -> EvaluatorSummary:
    """The evaluator's statistics, typed (``harness.stats.summary.EvaluatorSummary``), from its
    disk-cached summary entry (docs/formats.md "summary.json") with its bootstrap intervals."""
    return _guard(lambda: audit_session.summary_cache.evaluator_summary(audit_evaluator))


@pytest.fixture
def audit_human_agreement(audit_session: AuditSession, audit_evaluator: str) -> JSONObject:
    """The evaluator's agreement with ``--audit-human`` at every configuration (a dict:
    docs/human-agreement.md "In an audit"); without human data the test is skipped as not
    applicable (a skip, never a pass)."""
    if audit_session.options.human is None:
        pytest.skip("not applicable: no human ratings given (--audit-human)")
    return _guard(lambda: audit_session.human.agreement(audit_evaluator))


@pytest.fixture
def audit_presentation(
    audit_session: AuditSession, audit_evaluator: str, audit_presentation_probe: str, audit_thresholds: dict[str, float]
) -> ProbeResult:
    """The evaluator's presentation probe ``audit_presentation_probe`` around the run's preset
    (``harness.peers.presentation_probes.ProbeResult``: agreement, interval, threshold)."""
    from harness.peers.audit_probes import presentation_check
    from harness.vocab.metrics import MIN_PRESENTATION_AGREEMENT

    threshold = audit_thresholds.get(MIN_PRESENTATION_AGREEMENT)
    return _guard(lambda: presentation_check(audit_session.inputs, audit_evaluator, audit_presentation_probe, threshold))


@pytest.fixture
def audit_search(audit_session: AuditSession, audit_evaluator: str) -> JSONObject:
    """The evaluator's search beyond the grid under the profile's ``search`` block
    (``t3d-audit search --json``'s document, docs/search.md), run once per evaluator and
    shared by workers; tests asking for it are collected only when the profile has the block."""
    found = _guard(lambda: audit_session.searches.result(audit_evaluator))
    if found is None:  # collected anyway (e.g. a test file run with another plugin order)
        pytest.skip(f"not applicable: profile {audit_session.inputs.named_profile.name!r} declares no search block")
    return found


@pytest.fixture
def audit_repeatability(audit_session: AuditSession, audit_evaluator: str) -> Repeatability:
    """The evaluator's repeatability (``harness.measure.repeatability.Repeatability``): one c0
    sample scored in batches of 1, in a batch of N and in a fresh process; measured once per
    evaluator, shared by workers and cached across runs."""
    return _guard(lambda: audit_session.repeatability.result(audit_evaluator))


@pytest.fixture
def audit_saved_level(request: pytest.FixtureRequest, audit_session: AuditSession, audit_evaluator: str) -> JSONObject:
    """A saved level of ``--audit-profile-file`` measured for the evaluator on the run's scenes
    against c0 (its objective's effect, 95 % paired prompt-bootstrap interval, threshold)."""
    return _guard(lambda: audit_session.searches.saved_level(audit_evaluator, request.param))


@pytest.fixture
def audit_card(audit_session: AuditSession, audit_evaluator: str) -> JSONObject:
    """The evaluator's Evaluator Configuration Card (with its ``ecc-v1-sha256:`` id)."""
    return _guard(lambda: audit_session.cards.card(audit_evaluator))


@pytest.fixture
def audit_panel_summary(audit_session: AuditSession) -> PanelSummary:
    """The summary over every selected evaluator, typed (``harness.stats.summary.PanelSummary``:
    simultaneous band, reversals, every evaluator's summary)."""
    return _guard(lambda: audit_session.summary_cache.panel())


#: Fixtures that returned raw summary dicts, removed in favour of the typed ones. A test that
#: still asks for one fails at setup with a message naming its replacement.
REMOVED_FIXTURES = {
    "audit_stats": ("audit_summary", "harness.stats.summary.EvaluatorSummary"),
    "audit_panel": ("audit_panel_summary", "harness.stats.summary.PanelSummary"),
}


def _removed(name: str) -> NoReturn:
    replacement, typed = REMOVED_FIXTURES[name]
    pytest.fail(
        f"t3d-audit: the {name} fixture (a raw summary dict) was removed; use {replacement} "
        f"({typed}; docs/writing-an-audit.md, 'Fixtures')",
        pytrace=False,
    )


@pytest.fixture
def audit_stats() -> NoReturn:
    """Removed: use ``audit_summary`` (fails the test, naming it)."""
    _removed("audit_stats")


@pytest.fixture
def audit_panel() -> NoReturn:
    """Removed: use ``audit_panel_summary`` (fails the test, naming it)."""
    _removed("audit_panel")


@pytest.fixture
def audit_thresholds(request: pytest.FixtureRequest, audit_session: AuditSession) -> dict[str, float]:
    """Thresholds for the test's evaluator (overrides applied), or the global ones."""
    evaluator = request.getfixturevalue("audit_evaluator") if "audit_evaluator" in request.fixturenames else PANEL
    return audit_session.gate_thresholds.for_evaluator(evaluator)


@pytest.fixture
def audit_check(
    request: pytest.FixtureRequest, audit_session: AuditSession, audit_thresholds: dict[str, float]
) -> AuditCheck:
    """An :class:`harness.checks.assertions.AuditCheck` bound to the test's evaluator and card."""
    from harness.checks.assertions import AuditCheck

    evaluator = request.getfixturevalue("audit_evaluator") if "audit_evaluator" in request.fixturenames else PANEL
    outcomes: list[dict[str, object]] = []
    request.node.stash[OUTCOMES_KEY] = outcomes

    def card_id() -> str:
        return "" if evaluator == PANEL else audit_session.cards.card_id(evaluator)

    def no_data() -> str | None:
        if evaluator == PANEL:
            return None
        summary = audit_session.summary_cache.evaluator_summary(evaluator)
        if summary.failed_share == 1.0:
            return f"no successful records: all {summary.failed} measurements failed"
        return None

    return AuditCheck(
        evaluator=evaluator,
        thresholds=audit_thresholds,
        card_id=card_id,
        record=outcomes.append,
        skip=lambda reason: pytest.skip(reason),
        declared=audit_session.options.thresholds.is_declared,
        no_data=no_data,
        blocks=lambda: len(audit_session.inputs.scene_set.prompt_ids),
        absent=lambda name, key: _absent_reason(audit_session.inputs, name, key),
    )


def _absent_reason(inputs: object, name: str, key: str | None) -> str:
    """Why this run does not measure metric ``name`` at ``key`` (the real cause, see
    :func:`harness.run.notes.absent_reason`); ``inputs``: the run's
    :class:`~harness.run.inputs.RunInputs` (its profile and scene set)."""
    from harness.run.notes import absent_reason
    from harness.stats.summary import metric_kind

    profile = inputs.profile
    return f"{name}[{key}] is not measured in this run: " + absent_reason(
        metric_kind(name), key, profile=profile.name, profile_factors=profile.levels,
        profile_probes=profile.probes, scene_kind=inputs.scene_set.kind,
    )


def trim_note_of(session: AuditSession) -> str | None:
    """The start-of-run line when the profile audits fewer prompts than the scene set has."""
    from harness.protocol.configurations import load_profiles
    from harness.run.notes import trim_note

    try:
        audited = len(session.inputs.scene_set.prompt_ids)
    except AuditError:
        return None  # the run reports the problem itself, with its own message
    profiles = {name: p.prompts for name, p in load_profiles().items()}
    return trim_note(session.inputs.named_profile.name, audited, session.inputs.prompts_available, profiles)
