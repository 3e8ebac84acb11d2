"""The ``audit_*`` fixtures: the run's session, profile, scenes, plan, renders, records, typed
summaries, cards, thresholds and the ``audit_check`` that records each check's outcome. Each
fixture is annotated with the type it returns; an audit error fails its test with one line."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

import pytest

from harness.core.errors import AuditError
from harness.plugin.reporting import OUTCOMES_KEY
from harness.run.session import CLAIM_PROPERTY, PANEL, AuditSession, audit_session_of

if TYPE_CHECKING:  # fixture types only: none of these is imported when the plugin loads
    import numpy as np
    import pandas as pd

    from harness.checks.assertions import AuditCheck
    from harness.core.jsonout import JSONObject
    from harness.measure.plan import ImageKey, Plan
    from harness.measure.repeatability import Repeatability
    from harness.peers.presentation_probes import ProbeResult
    from harness.protocol.profiles import Profile
    from harness.scenes.sceneset import SceneSet
    from harness.stats.summary import EvaluatorSummary, PanelSummary

T = TypeVar("T")


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
        message = f"t3d-audit: {exc}"
    except OSError as exc:  # a full disk under the cache: one line, not a traceback per test
        if exc.errno not in WRITE_FAILURES:
            raise
        message = f"t3d-audit: {write_failure(exc)}; free space or fix permissions there and rerun"
    pytest.fail(message, pytrace=False)  # outside the handler: no chained exception shown


@pytest.fixture(scope="session")
def audit_profile(audit_session: AuditSession) -> Profile:
    """The protocol profile (``harness.protocol.profiles.Profile``)."""
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
    announce = audit_session.record_cache.announce  # past pytest's capture, from workers too
    return _guard(lambda: presentation_check(audit_session.inputs, audit_evaluator, audit_presentation_probe,
                                             threshold, announce))  # fmt: skip


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
def audit_claim(request: pytest.FixtureRequest, audit_evaluator: str) -> Callable[..., JSONObject]:
    """``audit_claim(a, b, *, presets="all", search_budget=16, flip_points=32, max_views=4,
    seed=None)``: the claim "``a`` beats ``b``" under the test's evaluator on the run's scenes,
    profile, renderer and cache (``t3d-audit claim --json``'s document: ``verdict`` with
    ``kind``, ``evidence``, ``line``; ``pairs``, ``scores``, ``card_id``; docs/claims.md "In an
    audit"). Computed once per process and shared by workers; bad input fails the test with
    one line. Each claim made is recorded on the test's report and shown in the run's
    report.html."""
    from harness.claims.in_audit import audit_claims, request_property

    claims = audit_claims(request.config)

    def claim(a: str, b: str, **options: object) -> JSONObject:
        asked = _guard(lambda: claims.request(audit_evaluator, a, b, **options))  # type: ignore[arg-type]
        doc = _guard(lambda: claims.answer(asked))
        request.node.user_properties.append((CLAIM_PROPERTY, request_property(asked)))  # for the report
        return doc

    return claim


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
        evidence=audit_session.options.evidence,
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
