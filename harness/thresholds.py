"""Audit thresholds: ``[tool.t3d-audit.thresholds]`` with per-evaluator ``overrides``.

```toml
[tool.t3d-audit.thresholds]
peak_rho_max = 1.0
[tool.t3d-audit.thresholds.overrides]
"clip-*" = { peak_rho_max = 2.0 }
```

Override patterns are ids or shell globs; they apply in file order, so a later, more specific
entry wins. Besides the known names, a project may declare its own ``min_<what>`` /
``max_<what>`` thresholds for its own audit tests (the prefix gives the direction); any other
name, or a near-miss of a known name, is rejected: a typo must not silently disable a gate.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import AuditError

# name -> (direction, description). "max": the estimate may not exceed it; "min": may not fall below.
KNOWN: dict[str, tuple[str, str]] = {
    "peak_rho_max": ("max", "configuration/generator variance ratio rho (every factor and the peak)"),
    "min_kendall_w": ("min", "Kendall's W across the levels of each shared factor"),
    "max_top1_count": ("max", "distinct unique winners across the levels of each shared factor"),
    "min_scramble_discrimination": ("min", "directional discrimination of the scrambled probe"),
    "min_removal_discrimination": ("min", "directional discrimination of keep_half and biggest_only"),
    "min_worst_objects_discrimination": ("min", "directional discrimination of worst_objects"),
    "max_best_view_inflation": ("max", "median best-view inflation over scenes"),
    "max_failed_share": ("max", "fraction of records with status failed"),
    "max_confirmed_reversals": ("max", "reversals confirmed by the simultaneous band"),
    "min_strict_pairs": ("min", "generator pairs strictly ordered over every shared protocol"),
    "max_sign_crossings": ("max", "generator pairs whose margin envelope crosses zero"),
}

# Which threshold gates which probe's discrimination.
PROBE_THRESHOLDS = {
    "scrambled": "min_scramble_discrimination",
    "keep_half": "min_removal_discrimination",
    "biggest_only": "min_removal_discrimination",
    "worst_objects": "min_worst_objects_discrimination",
}


class ThresholdError(AuditError):
    """A threshold table is malformed or names an unknown threshold."""


def _check_name(name: str, where: str) -> None:
    if name in KNOWN:
        return
    import difflib

    close = difflib.get_close_matches(name, KNOWN, n=1, cutoff=0.8)
    custom = name.startswith(("min_", "max_")) and len(name) > 4 and not close
    if not custom:
        hint = f"did you mean {close[0]}? " if close else ""
        raise ThresholdError(
            f"unknown threshold {name!r}",
            where=where,
            hint=f"{hint}use one of {', '.join(sorted(KNOWN))}, or a custom min_<what> / max_<what>",
        )


def _check_values(values: Mapping[str, Any], where: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in values.items():
        _check_name(str(name), where)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ThresholdError(f"threshold {name} must be a finite number, got {value!r}", where=where)
        out[name] = float(value)
    return out


@dataclass(frozen=True)
class Thresholds:
    """Global thresholds plus ``(pattern, values)`` overrides in declaration order."""

    base: tuple[tuple[str, float], ...] = ()
    overrides: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()

    @classmethod
    def from_table(cls, table: Mapping[str, Any] | None, *, where: str = "[tool.t3d-audit.thresholds]") -> Thresholds:
        """Parse the TOML table (``overrides`` is a sub-table of pattern → values)."""
        table = dict(table or {})
        raw_overrides = table.pop("overrides", {}) or {}
        if not isinstance(raw_overrides, Mapping):
            raise ThresholdError("overrides must be a table of pattern = { name = value }", where=where)
        base = _check_values(table, where)
        overrides = []
        for pattern, values in raw_overrides.items():
            if not isinstance(values, Mapping):
                raise ThresholdError(
                    f"override {pattern!r} must be an inline table", where=f"{where}.overrides"
                )
            checked = _check_values(values, f"{where}.overrides.{pattern}")
            overrides.append((str(pattern), tuple(sorted(checked.items()))))
        return cls(tuple(sorted(base.items())), tuple(overrides))

    def for_evaluator(self, evaluator_id: str) -> dict[str, float]:
        """The thresholds that apply to ``evaluator_id`` (overrides applied in order)."""
        out = dict(self.base)
        for pattern, values in self.overrides:
            if fnmatch.fnmatchcase(evaluator_id, pattern):
                out.update(values)
        return dict(sorted(out.items()))

    def to_dict(self) -> dict[str, Any]:
        return {"base": dict(self.base), "overrides": {p: dict(v) for p, v in self.overrides}}


def direction(name: str) -> str:
    """``"max"`` or ``"min"``: from the table of known names, else from the name's prefix."""
    if name in KNOWN:
        return KNOWN[name][0]
    if name.startswith("max_"):
        return "max"
    if name.startswith("min_"):
        return "min"
    raise ThresholdError(f"threshold {name!r} has no direction", hint="name it min_<what> or max_<what>")
