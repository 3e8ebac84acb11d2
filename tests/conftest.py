"""Tests never read or fill the user's real cache (the per-user default of harness.paths).

Unless ``T3D_AUDIT_CACHE_DIR`` names a cache on purpose, or tox already points
``XDG_CACHE_HOME`` into its environment (tox.ini), every test session gets a temporary
per-user cache folder; subprocesses inherit it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _temporary_user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if os.environ.get("T3D_AUDIT_CACHE_DIR") or os.environ.get("TOX_ENV_DIR"):
        yield
        return
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("user-cache"))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = before
