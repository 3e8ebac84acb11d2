"""Release-gate margins: ``[tool.t3d-audit.compare]`` with per-evaluator ``overrides``.

```toml
[tool.t3d-audit.compare]
rho = 0.10                 # every factor's rho
"rho.pitch" = 0.20         # one factor (or probe: "discrimination.scrambled")
[tool.t3d-audit.compare.overrides]
"clip-*" = { rho = 0.15 }
```

A margin is the change in the harmful direction that a release may make before it counts
as a regression (docs/release-gate.md); names are the metric kinds of
:data:`harness.release.comparison.KINDS`, optionally qualified by a factor or probe. Override
patterns are candidate evaluator ids or shell globs applied in file order (a later entry
wins). An unknown name is an error: a typo must not silently loosen the gate.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from harness.core.errors import AuditError
from harness.release.comparison import KINDS


class MarginError(AuditError):
    """A margin table or ``--margin`` value is malformed or names an unknown metric."""


def normalise_name(name: str, where: str) -> str:
    """``rho``, ``rho.pitch`` or the metric id ``rho-pitch`` → ``kind`` / ``kind.subject``."""
    text = str(name).strip()
    kind, sep, subject = text.replace("-", ".", 1).partition(".")
    if kind not in KINDS or (sep and not subject):
        import difflib

        close = difflib.get_close_matches(kind, KINDS, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}? " if close else ""
        raise MarginError(
            f"unknown metric {name!r}",
            where=where,
            hint=f"{hint}use one of {', '.join(KINDS)}, optionally as KIND.FACTOR or KIND.PROBE",
        )
    return f"{kind}.{subject}" if subject else kind


def _value(name: str, value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise MarginError(f"margin {name} must be a finite number ≥ 0, got {value!r}", where=where)
    return float(value)


def _check(values: Mapping[str, object], where: str) -> dict[str, float]:
    return {normalise_name(k, where): _value(k, v, where) for k, v in values.items()}


@dataclass(frozen=True)
class Margins:
    """Global margins plus ``(pattern, margins)`` overrides in declaration order."""

    base: tuple[tuple[str, float], ...] = ()
    overrides: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()

    @classmethod
    def from_table(cls, table: Mapping[str, object] | None, *, where: str = "[tool.t3d-audit.compare]") -> Margins:
        table = dict(table or {})
        raw = table.pop("overrides", {}) or {}
        if not isinstance(raw, Mapping):
            raise MarginError("overrides must be a table of pattern = { metric = margin }", where=where)
        base = _check(table, where)
        overrides = []
        for pattern, values in raw.items():
            if not isinstance(values, Mapping):
                raise MarginError(f"override {pattern!r} must be an inline table", where=f"{where}.overrides")
            checked = _check(values, f"{where}.overrides.{pattern}")
            overrides.append((str(pattern), tuple(sorted(checked.items()))))
        return cls(tuple(sorted(base.items())), tuple(overrides))

    def for_evaluator(self, evaluator_id: str, extra: Mapping[str, float] | None = None) -> dict[str, float]:
        """Margins for ``evaluator_id``: base, then matching overrides, then ``extra``
        (command-line values, which win)."""
        out = dict(self.base)
        for pattern, values in self.overrides:
            if fnmatch.fnmatchcase(evaluator_id, pattern):
                out.update(values)
        out.update(extra or {})
        return dict(sorted(out.items()))


def parse_margin_args(items: Iterable[str] | None) -> dict[str, float]:
    """``["rho=0.2", "discrimination.scrambled=0.1"]`` → checked margins (``--margin``)."""
    out: dict[str, float] = {}
    for item in items or ():
        name, sep, raw = str(item).partition("=")
        if not sep:
            raise MarginError(f"expected METRIC=DELTA, got {item!r}", where="--margin")
        try:
            value = float(raw)
        except ValueError:
            raise MarginError(f"margin of {name} is not a number: {raw!r}", where="--margin") from None
        out[normalise_name(name, "--margin")] = _value(name, value, "--margin")
    return out
