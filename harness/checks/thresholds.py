"""Audit thresholds: ``[tool.t3d-audit.thresholds]`` with per-evaluator ``overrides``.

```toml
[tool.t3d-audit.thresholds]
peak_rho_max = 1.0
[tool.t3d-audit.thresholds.overrides]
"clip-*" = { peak_rho_max = 2.0 }
```

Override patterns are ids or shell globs; they apply in file order, so a later, more specific
entry wins. Every name must be a known threshold. A project's own audit tests may use their
own thresholds, declared in a separate table so that a typo of a known name can never pass as
a new one::

    [tool.t3d-audit.thresholds.custom]
    min_my_metric = 0.4       # the prefix, min_ or max_, gives the direction

Overrides may then set known or declared custom names. Any other name is an error that names
the closest known one: a misspelt threshold must not silently remove a gate.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from harness.core.errors import AuditError
from harness.vocab.metrics import THRESHOLDS, default_thresholds, scoped_thresholds
from harness.vocab.registry_type import closest


class _Known(Mapping[str, tuple[str, str]]):
    """Known threshold name -> (direction, description): a live view of the threshold
    registry (:data:`harness.vocab.metrics.THRESHOLDS`), so a threshold registered by a
    plugin is known here too."""

    def __getitem__(self, name: str) -> tuple[str, str]:
        if name not in THRESHOLDS:
            raise KeyError(name)
        spec = THRESHOLDS.get(name)
        return spec.direction, spec.description

    def __iter__(self):
        return iter(THRESHOLDS.names())

    def __len__(self) -> int:
        return len(THRESHOLDS)


KNOWN: Mapping[str, tuple[str, str]] = _Known()


def block_thresholds() -> tuple[str, ...]:
    """Thresholds that gate only factorial blocks: a run whose profile has none leaves them
    out of its run id, manifest and cards (they cannot gate it), so OFAT-only runs keep their
    ids."""
    return scoped_thresholds("blocks")


def human_thresholds() -> tuple[str, ...]:
    """Thresholds that gate only agreement with human ratings: a run without --audit-human
    leaves them out of its run id, manifest and cards in the same way."""
    return scoped_thresholds("human")


def search_thresholds() -> tuple[str, ...]:
    """Thresholds that gate only a search (a profile's ``search`` block): a run
    without one leaves them out of its run id, manifest and cards in the same way."""
    return scoped_thresholds("search")


def presentation_thresholds() -> tuple[str, ...]:
    """Thresholds that gate only the presentation probes of an audit under a protocol preset:
    a run under any other view policy leaves them out of its run id, manifest and
    cards in the same way."""
    return scoped_thresholds("presentation")


class ThresholdError(AuditError):
    """A threshold table is malformed or names an unknown threshold."""


def _check_name(name: str, where: str, custom: frozenset[str] = frozenset()) -> None:
    if name in KNOWN or name in custom:
        return
    close = closest(name, set(KNOWN) | custom)
    hint = f"did you mean {close}? " if close else ""
    raise ThresholdError(
        f"unknown threshold {name!r}",
        where=where,
        hint=f"{hint}known thresholds: {', '.join(sorted(KNOWN))}; declare your own audit's "
        "thresholds as min_<what> / max_<what> under [tool.t3d-audit.thresholds.custom]",
    )


def _check_values(
    values: Mapping[str, object], where: str, custom: frozenset[str] = frozenset()
) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in values.items():
        _check_name(str(name), where, custom)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ThresholdError(f"threshold {name} must be a finite number, got {value!r}", where=where)
        out[str(name)] = float(value)
    return out


def _check_custom(values: object, where: str) -> dict[str, float]:
    if not isinstance(values, Mapping):
        raise ThresholdError("custom must be a table of min_<what> / max_<what> = value", where=where)
    for name in values:
        name = str(name)
        if name in KNOWN:
            raise ThresholdError(
                f"custom threshold {name!r} is a known threshold", where=where,
                hint="set it in [tool.t3d-audit.thresholds] itself",
            )
        if not (name.startswith(("min_", "max_")) and len(name) > 4):
            raise ThresholdError(
                f"custom threshold {name!r} must be named min_<what> or max_<what>", where=where,
                hint="the prefix gives the direction: max_ may not be exceeded, min_ not undercut",
            )
    return _check_values(values, where, frozenset(str(k) for k in values))


@dataclass(frozen=True)
class Thresholds:
    """Global thresholds plus ``(pattern, values)`` overrides in declaration order."""

    base: tuple[tuple[str, float], ...] = ()
    overrides: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()
    custom: frozenset[str] = frozenset()  # declared custom names (their values are in base)

    @classmethod
    def from_table(cls, table: Mapping[str, object] | None, *, where: str = "[tool.t3d-audit.thresholds]") -> Thresholds:
        """Parse the TOML table (``overrides`` is a sub-table of pattern → values)."""
        if table is not None and not isinstance(table, Mapping):
            raise ThresholdError(f"thresholds must be a table, got {table!r}", where=where)
        table = dict(table or {})
        raw_overrides = table.pop("overrides", {}) or {}
        if not isinstance(raw_overrides, Mapping):
            raise ThresholdError("overrides must be a table of pattern = { name = value }", where=where)
        custom_values = _check_custom(table.pop("custom", {}) or {}, f"{where}.custom")
        custom = frozenset(custom_values)
        base = _check_values(table, where) | custom_values
        overrides = []
        for pattern, values in raw_overrides.items():
            if not isinstance(values, Mapping):
                raise ThresholdError(
                    f"override {pattern!r} must be an inline table", where=f"{where}.overrides"
                )
            checked = _check_values(values, f"{where}.overrides.{pattern}", custom)
            overrides.append((str(pattern), tuple(sorted(checked.items()))))
        return cls(tuple(sorted(base.items())), tuple(overrides), custom)

    def is_declared(self, name: str) -> bool:
        """Whether ``name`` is a known threshold or one of this table's custom ones."""
        return name in KNOWN or name in self.custom

    def for_evaluator(self, evaluator_id: str) -> dict[str, float]:
        """The thresholds that apply to ``evaluator_id`` (overrides applied in order)."""
        out = dict(self.base)
        for pattern, values in self.overrides:
            if fnmatch.fnmatchcase(evaluator_id, pattern):
                out.update(values)
        return dict(sorted(out.items()))

    def without(self, names: Iterable[str]) -> Thresholds:
        """These thresholds with ``names`` removed from the base and every override (``self``
        when none of them is set)."""
        drop = frozenset(names)
        if not any(n in drop for n, _ in self.base) and not any(
            n in drop for _, values in self.overrides for n, _ in values
        ):
            return self
        return Thresholds(
            tuple((n, v) for n, v in self.base if n not in drop),
            tuple(
                (p, tuple((n, v) for n, v in values if n not in drop))
                for p, values in self.overrides
            ),
            self.custom,
        )

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"base": dict(self.base), "overrides": {p: dict(v) for p, v in self.overrides}}
        if self.custom:  # only when declared, so existing run ids stay as they were
            out["custom"] = sorted(self.custom)
        return out


def direction(name: str) -> str:
    """``"max"`` or ``"min"``: from the table of known names, else from the name's prefix."""
    if name in KNOWN:
        return KNOWN[name][0]
    if name.startswith("max_"):
        return "max"
    if name.startswith("min_"):
        return "min"
    raise ThresholdError(f"threshold {name!r} has no direction", hint="name it min_<what> or max_<what>")


# ------------------------------------------------------------------ built-in defaults, layered

def looser_than_study(values: Mapping[str, object]) -> dict[str, dict[str, float]]:
    """The thresholds in ``values`` (an evaluator's effective thresholds) that are looser than
    the study's built-in value: a ``max`` set higher or a ``min`` set lower. Name ->
    ``{"value": set, "study": built-in}``, sorted by name; empty when none is."""
    study = default_thresholds()
    out: dict[str, dict[str, float]] = {}
    for name in sorted(values):
        if name not in study or name not in KNOWN or study[name] is None:
            continue
        try:
            value = float(values[name])
        except (TypeError, ValueError):
            continue
        base = float(study[name])
        if math.isfinite(value) and (value > base if KNOWN[name][0] == "max" else value < base):
            out[name] = {"value": value, "study": base}
    return out


def study_table() -> dict[str, object]:
    """The study's built-in threshold values (every registered threshold with a default)."""
    return default_thresholds()


def study_table_toml() -> str:
    """The study's built-in values as a ``[tool.t3d-audit.thresholds]`` TOML table, one
    ``name = value  # description`` line per threshold with a default, registration order
    (what ``t3d-audit thresholds --toml`` prints; a project's own table may repeat any of them)."""
    lines = ["[tool.t3d-audit.thresholds]"]
    for spec in THRESHOLDS:
        if spec.default is not None:
            value = f"{spec.default:g}" if float(spec.default).is_integer() else repr(float(spec.default))
            lines.append(f"{spec.name} = {value}  # {spec.description}")
    return "\n".join(lines) + "\n"


def repeated_defaults_that_differ(table: Mapping[str, object]) -> dict[str, tuple[object, float | None]]:
    """The thresholds of a project ``table`` that name a built-in one but give another value
    than its default: name → (the table's value, the default). Empty when the table only
    repeats built-in values (or sets none)."""
    study = study_table()
    return {name: (value, study.get(name)) for name, value in table.items()
            if name in KNOWN and not isinstance(value, Mapping) and name in study
            and float(value) != float(study[name])}  # fmt: skip


def layered(project: Mapping[str, object] | None, *, where: str = "[tool.t3d-audit.thresholds]",
            defaults: Mapping[str, object] | None = None) -> Thresholds:
    """The study's defaults with a project's threshold table layered over them.

    The project may set any known threshold (its value wins), declare ``custom`` ones and
    ``overrides``; a study threshold it leaves out keeps the built-in value, so no project
    configuration silently removes a study check. ``defaults``: the study table (tests).
    """
    if project is not None and not isinstance(project, Mapping):
        raise ThresholdError(f"thresholds must be a table, got {project!r}", where=where)
    own = Thresholds.from_table(project, where=where)  # checked against the project's own names
    base = dict(Thresholds.from_table(study_table() if defaults is None else defaults,
                                      where="the built-in thresholds").base)
    base.update(own.base)
    return Thresholds(tuple(sorted(base.items())), own.overrides, own.custom)
