"""Well-known locations. The repository root holds ``fixtures/`` next to ``harness/``."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "fixtures"
SCHEMAS = FIXTURES / "schemas"
BUNDLED_SCENES = FIXTURES / "scenes"
BUNDLED_ASSETS = BUNDLED_SCENES / "assets"
BUNDLED_EVALUATORS = FIXTURES / "evaluators"

CACHE_ENV = "T3D_AUDIT_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$T3D_AUDIT_CACHE_DIR`` if set, else ``.audit_cache/`` in the working directory."""
    return Path(os.environ.get(CACHE_ENV) or ".audit_cache").resolve()
