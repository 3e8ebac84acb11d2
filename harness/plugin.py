"""pytest plugin of t3d-audit (registered by the root conftest and the pytest11 entry point).

Thin by design: options, the ``audit`` marker and hooks live here; session state lives in one
session object. See ``harness/session.py`` once the audit suite lands.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "audit: an audit assertion over evaluator x factor x probe (the release gate)"
    )
