"""Where the public human-judgment data lives for the known-answer tests (skipped when absent).

Default: ``shared/data/human`` in the folder that holds the repository; ``T3D_AUDIT_HUMAN_DATA``
overrides.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def human_data(sub: str) -> Path:
    base = Path(os.environ.get("T3D_AUDIT_HUMAN_DATA", ROOT.parent / "shared" / "data" / "human"))
    path = base / sub
    if not path.exists():
        pytest.skip(f"public human-judgment data not present at {path} (set T3D_AUDIT_HUMAN_DATA)")
    return path
