"""``summary.json`` (docs/formats.md "summary.json") and a short plain-text digest of an audit."""

from __future__ import annotations

from pathlib import Path

from harness.core.fileio import json_text, write_text_atomic
from harness.stats.audit_stats import AuditResult
from harness.stats.summary import PanelSummary


def summary_json(result: AuditResult) -> str:
    """Strict JSON text of ``result.to_summary()`` (undefined values are null)."""
    return json_text(result.to_summary(), sort_keys=False)


def write_summary(result: AuditResult, path: str | Path) -> Path:
    """Write ``summary.json`` atomically (temporary file in the same directory, then rename)."""
    path = Path(path)
    write_text_atomic(path, summary_json(result))
    return path


def digest(result: AuditResult) -> str:
    """A few lines for the terminal: scale, failures, headline counts."""
    panel = PanelSummary.from_summary(result.to_summary())
    align = result.alignment
    n = len(align)
    peak = sum(1 for k in align if (panel.evaluators[k].peak_rho or 0) > 1)
    rev, band = panel.reversals, panel.band
    q = band.q95
    return "\n".join(
        [
            f"{len(result.evaluators)} evaluators ({n} alignment), {result.n_records} records, "
            f"{result.n_failed} failed (excluded)",
            f"peak rho > 1: {peak}/{n}; winner changes: {rev.descriptive}/{n}; "
            f"reversals pointwise {rev.pointwise}/{n}, simultaneous {rev.simultaneous}/{n}",
            f"simultaneous band: J = {band.contrasts}, B = {band.bootstrap}, "
            f"seed = {band.seed}, q95 = {q if q is None else round(q, 3)}",
        ]
    )
