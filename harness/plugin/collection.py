"""Collection: the ``audit`` marker on every audit test, the panel tests last (they need every
evaluator's records), and the checks a run does not have (a search without a search block, a
presentation probe without a preset) removed before the run records what it collected."""

from __future__ import annotations

import pytest

from harness.core.errors import AuditError
from harness.run.session import audit_session_of

PANEL_GROUP = "t3d-audit-panel"


def drop_not_presented(items: list[pytest.Item]) -> None:
    """Remove the presentation checks of a run that audits under no preset (not collected)."""
    def presented(item: pytest.Item) -> bool:
        callspec = getattr(item, "callspec", None)
        return not (callspec and "audit_presentation_probe" in callspec.params
                    and callspec.params["audit_presentation_probe"] is None)  # fmt: skip

    items[:] = [item for item in items if presented(item)]


AUDIT_FIXTURES = ("audit_evaluator", "audit_panel_summary", "audit_check")


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
        if any(n in names for n in AUDIT_FIXTURES):
            item.add_marker(pytest.mark.audit)
        if "audit_panel_summary" in names and "audit_evaluator" not in names:
            item.add_marker(pytest.mark.xdist_group(PANEL_GROUP))
            panel.append(item)
        else:
            rest.append(item)
    items[:] = rest + panel  # panel tests need every evaluator's records: run them last
