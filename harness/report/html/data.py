"""What ``report.html`` reads from one report directory (:class:`ReportData`) and the small
text helpers every section of the page uses: :data:`e` (``html.escape`` with quotes),
:func:`fmt` (numbers), :func:`plural`."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from harness.core.bounded_input import read_report_json as read_json
from harness.core.errors import AuditError
from harness.report.thumbs import read_index

e = html.escape


def fmt(value: object, digits: int = 4) -> str:
    """A number with ``digits`` significant digits; ``—`` for missing or non-finite."""
    if value is None or isinstance(value, bool):
        return "—" if value is None else str(value).lower()
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(x):
        return "—"
    return f"{x:.{digits}g}"


def read_report_file(path: Path) -> object:
    try:
        return read_json(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise AuditError(f"{path.name} is not readable JSON: {exc}", where=path,
                         hint="rerun the audit, or t3d-audit validate the report") from exc


def ordered(keys: Iterable[str], order: Sequence[str]) -> list[str]:
    keys = set(keys)
    return [k for k in order if k in keys] + sorted(keys - set(order))


# ----------------------------------------------------------------------------- inputs


class ReportData:
    """Everything the page shows, read from one report directory."""

    def __init__(self, report: Path):
        from harness.protocol.records import read_records

        self.dir = Path(report)
        if not (self.dir / "summary.json").is_file():
            raise AuditError("no summary.json", where=self.dir, hint="is this a report directory?")
        self.summary = read_report_file(self.dir / "summary.json") or {}
        self.results = read_report_file(self.dir / "results.json") or {}
        self.manifest = read_report_file(self.dir / "manifest.json") or {}
        self.comparison = read_report_file(self.dir / "comparison.json")
        self.evaluators = sorted(self.summary.get("evaluators", {}))
        self.cards = {p.stem: read_report_file(p) for p in sorted((self.dir / "cards").glob("*.json"))}
        self.records = {p.stem: read_records(p) for p in sorted((self.dir / "scores").glob("*.csv"))}
        self.thumbs = read_index(self.dir)
        options = self.manifest.get("options", {}) if isinstance(self.manifest, dict) else {}
        facts = options.get("card_facts") or {}
        self.companion = facts.get("companion") if facts.get("companion") in self.records else None

    @property
    def run_id(self) -> str:
        return str(self.results.get("run_id") or self.manifest.get("run_id") or self.dir.name)


def plural(n: int, noun: str) -> str:
    """``1 row``, ``5 rows``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
