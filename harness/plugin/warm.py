"""``t3d-audit audit``'s choice of xdist workers: none when every selected evaluator's records
are cached (a plugin object the command registers, not a plugin-wide hook)."""

from __future__ import annotations

import pytest

from harness.plugin import configure
from harness.run.session import SESSION_KEY


class WarmInProcess:
    """A pytest plugin object ``t3d-audit audit`` registers for its run of the audit suite:
    ``-n auto`` starts no xdist workers when every selected evaluator's records are already in
    the cache (a warm run measures nothing, and every worker would load the scenes, plan and
    records again only to read cached statistics); otherwise xdist chooses (one per core;
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` is honoured). The session built to decide is kept for
    :func:`harness.plugin.configure.pytest_configure`. The report is the same either way. Not a plugin-wide hook: a
    run of other tests (``pytest tests -n auto``) says nothing by its audit records."""

    # how the user runs this (quiet_failures spells its hints for this command, not pytest)
    t3d_audit_command = "t3d-audit audit"

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_auto_num_workers(self, config: pytest.Config) -> int | None:
        import os

        if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
            return None
        try:
            session = configure.new_session(config)
            config.stash[SESSION_KEY] = session
            specs = session.inputs.specs
            cached = bool(specs) and all(session.record_cache.cached(ev) for ev in specs)
        except Exception:  # undecidable here: pytest_configure reports real problems
            return None
        if cached:  # the printed command line says `-n auto`: say what it became
            print("t3d-audit audit: every evaluator's records are cached, so the audit runs in "
                  "this process (-n auto starts no workers)", flush=True)
        return 0 if cached else None
