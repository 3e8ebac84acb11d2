"""Well-known locations.

In a checkout the repository root holds ``fixtures/`` next to ``harness/``; an installed wheel
carries the same files as the package data ``harness/fixtures/`` (pyproject's package-dir).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
_CHECKOUT = PACKAGE_DIR.parent
# The folder that holds fixtures/, against which bundled files are named ("fixtures/..."): a
# checkout's root (an editable install reads the files in place), else the installed package.
REPO_ROOT = _CHECKOUT if (_CHECKOUT / "fixtures").is_dir() else PACKAGE_DIR
FIXTURES = REPO_ROOT / "fixtures"
PROFILES_FILE = PACKAGE_DIR / "profiles.json"
SCHEMAS = FIXTURES / "schemas"
BUNDLED_SCENES = FIXTURES / "scenes"
BUNDLED_ASSETS = BUNDLED_SCENES / "assets"

CACHE_ENV = "T3D_AUDIT_CACHE_DIR"


APP_NAME = "t3d-audit"


def user_cache_dir() -> Path:
    """The platform's per-user cache folder for t3d-audit (``platformdirs``): on Linux
    ``$XDG_CACHE_HOME/t3d-audit`` or ``~/.cache/t3d-audit``, on macOS
    ``~/Library/Caches/t3d-audit``, on Windows ``%LOCALAPPDATA%\\t3d-audit\\Cache``."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def default_cache_dir() -> Path:
    """``$T3D_AUDIT_CACHE_DIR`` if set, else :func:`user_cache_dir`: one cache per user, so
    every project on a machine shares renders and scores, wherever it is run from."""
    return Path(os.environ.get(CACHE_ENV) or user_cache_dir()).resolve()
