"""``summary.json`` (DESIGN.md "Summary") and a short plain-text digest of an audit."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from harness.stats.audit import AuditResult


def summary_json(result: AuditResult) -> str:
    """Strict JSON text of ``result.to_summary()`` (undefined values are null)."""
    return json.dumps(result.to_summary(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_summary(result: AuditResult, path: str | Path) -> Path:
    """Write ``summary.json`` atomically (temporary file in the same directory, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(summary_json(result))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def digest(result: AuditResult) -> str:
    """A few lines for the terminal: scale, failures, headline counts."""
    s: dict[str, Any] = result.to_summary()
    align = result.alignment
    n = len(align)
    peak = sum(1 for k in align if (s["evaluators"][k]["peak_rho"] or 0) > 1)
    rev = s["reversals"]
    q = s["simultaneous"]["q95"]
    return "\n".join(
        [
            f"{len(result.evaluators)} evaluators ({n} alignment), {result.n_records} records, "
            f"{result.n_failed} failed (excluded)",
            f"peak rho > 1: {peak}/{n}; winner changes: {rev['descriptive']}/{n}; "
            f"reversals pointwise {rev['pointwise']}/{n}, simultaneous {rev['simultaneous']}/{n}",
            f"simultaneous band: J = {s['simultaneous']['contrasts']}, B = {s['simultaneous']['B']}, "
            f"seed = {s['simultaneous']['seed']}, q95 = {q if q is None else round(q, 3)}",
        ]
    )
