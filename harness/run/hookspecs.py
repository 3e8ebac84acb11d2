"""Hooks of the t3d-audit pytest plugin (``pytest_audit_*``), for conftest files and plugins.

They let a project swap in its own components without touching the harness, e.g. a cheap
numpy rasterizer instead of Blender for the harness's own tests, or an in-house evaluator.
"""

from __future__ import annotations

import pytest


@pytest.hookspec(firstresult=True)
def pytest_audit_renderer(config: pytest.Config, cache_dir: object) -> object:
    """Return the renderer the audit uses (``harness.render.renderer.Renderer``), or None.

    ``cache_dir`` is where renders may be cached. The first non-None result wins; the default
    is the Blender render service.
    """


@pytest.hookspec
def pytest_audit_evaluators(config: pytest.Config) -> list[object]:
    """Return extra evaluator specs to offer to ``--audit-evaluators`` (ids/globs).

    A spec needs ``id``, ``needs_text``, ``identity()``, ``identity_hash`` and
    ``build(device, batch_size)`` returning an object with ``score`` (pairwise) and optionally
    ``score_grid``; see ``harness.evaluators.base``. An id the registry (or another hook)
    holds with a different identity is refused, naming both sources. The CLI calls this hook
    too (``harness.run.project_evaluators``), with a config that is parsed but not configured.
    """
