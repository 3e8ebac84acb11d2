"""The terminal summary table printed at the end of an audit run (plain text, fixed width)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

COLUMNS = (
    ("evaluator", "evaluator", "<"),
    ("peak_rho", "peak ρ", ">"),
    ("peak_rho_ci", "95% CI", ">"),
    ("min_w", "min W", ">"),
    ("max_top1", "top-1s", ">"),
    ("scrambled", "scramble", ">"),
    ("best_view", "best-view", ">"),
    ("failed", "failed", ">"),
    ("gate", "gate", "<"),
)


def _f(value: Any, fmt: str = "{:.2f}") -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "—"
    return fmt.format(number) if math.isfinite(number) else "—"


def _gate(passed: int, failed: int, total: int) -> str:
    if failed:
        return f"FAIL ({failed}/{total} failed)"
    return f"pass ({passed}/{total})" if passed else "—"


def rows_from(summary: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """One row per evaluator of ``summary``; ``gate`` counts passed/failed audit tests."""
    rows = []
    for ev in sorted(summary.get("evaluators", {})):
        entry = summary["evaluators"][ev]
        mine = [r for r in results if r.get("evaluator") == ev]
        failed = sum(1 for r in mine if r.get("outcome") == "failed")
        passed = sum(1 for r in mine if r.get("outcome") == "passed")
        ci = entry.get("peak_rho_ci") or [None, None]
        rows.append(
            {
                "evaluator": ev,
                "peak_rho": _f(entry.get("peak_rho")),
                "peak_rho_ci": f"[{_f(ci[0])}, {_f(ci[1])}]",
                "min_w": _f(entry.get("min_w")),
                "max_top1": _f(entry.get("max_top1"), "{:.0f}"),
                "scrambled": _f((entry.get("discrimination") or {}).get("scrambled"), "{:.0%}"),
                "best_view": _f(entry.get("best_view_inflation")),
                "failed": _f(entry.get("failed"), "{:.0f}"),
                "gate": _gate(passed, failed, len(mine)),
            }
        )
    return rows


def render_table(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """Lines of a fixed-width table of ``rows`` (as made by :func:`rows_from`)."""
    widths = {
        key: max([len(title), *(len(str(r.get(key, ""))) for r in rows)]) for key, title, _ in COLUMNS
    }

    def line(values: Mapping[str, str]) -> str:
        cells = []
        for key, _, align in COLUMNS:
            text = str(values.get(key, ""))
            cells.append(text.ljust(widths[key]) if align == "<" else text.rjust(widths[key]))
        return "  ".join(cells).rstrip()

    header = line({key: title for key, title, _ in COLUMNS})
    return [header, "-" * len(header), *(line(r) for r in rows)]
