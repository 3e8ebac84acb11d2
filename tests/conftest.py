"""Tests never read or fill the user's real cache, nor leave names in the product's registries.

Unless ``T3D_AUDIT_CACHE_DIR`` names a cache on purpose, or tox already points
``XDG_CACHE_HOME`` into its environment (tox.ini), every test session gets a temporary
per-user cache folder; subprocesses inherit it.

Every test runs inside its own scope of every registry (metrics, thresholds, factors,
settings, probes, evaluator families and specs; ``harness.vocab.registry_type.scoped``): what a
test registers, replaces or removes is put back when it ends, so a test's names never reach
another test or the product's vocabulary (and each xdist worker is its own process).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture(autouse=True)
def registries() -> Iterator[None]:
    """The test's own copy of every registry, restored afterwards (see the module docstring).

    The evaluator registry loads its catalogue and entry points on first use; it is loaded
    here, once per process, so that a test which reloads it (``SPECS.reset()``) under a
    patched entry-point table is put back to the real one."""
    from harness.evaluators.registry import SPECS
    from harness.vocab.registry_type import scoped

    len(SPECS)  # loaded (once per process): restoring then gives back exactly these rows
    with scoped():
        yield


@pytest.fixture(scope="session")
def tiny_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished report of the tiny audit project (real audit suite, box renders), built once
    per session (per xdist worker) for the report.html tests; treat it as read-only."""
    from tests._html_report import build_tiny_report

    return build_tiny_report(tmp_path_factory.mktemp("html-project"))


@pytest.fixture
def report(tiny_report: Path, tmp_path: Path) -> Path:
    """A private copy of the tiny report (tests may edit it)."""
    copy = tmp_path / tiny_report.name
    shutil.copytree(tiny_report, copy)
    return copy
