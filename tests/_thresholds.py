"""The project's default gates as configured, so tests never copy a threshold's value."""

from __future__ import annotations

import tomllib
from functools import cache

from harness.checks.thresholds import Thresholds
from harness.core.paths import REPO_ROOT


@cache
def default_thresholds() -> dict[str, float]:
    """``[tool.t3d-audit.thresholds]`` of the repository's ``pyproject.toml`` (no overrides)."""
    data = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(Thresholds.from_table(data["tool"]["t3d-audit"]["thresholds"]).base)
