"""Registered statistics in the report: the grid of values the tables, report.html and the
terminal summary show for the metric rows with their own ``compute`` (a built-in statistic
named ``"module:function"`` or one registered from outside; the study's own metrics have
their tables).

A statistic with ``compute`` (:func:`harness.vocab.metrics.computed_metrics`) and
``"report"`` among its ``places`` gets one column per value: a scalar metric one column named
after it, a keyed metric one column per key (``name[key]``, or its ``key_labels`` entry).
The values come from each evaluator entry's ``registered`` mapping in ``summary.json``
(``{metric: value}`` or ``{metric: {key: value}}``). With no such metric registered there is
no grid (``None``), so the report stays as it was. Pure: reads a summary mapping only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.core.numbers import finite_or_none
from harness.stats.summary import REGISTERED, as_registered
from harness.vocab.metrics import MetricSpec, computed_metrics


@dataclass(frozen=True)
class Column:
    """One value of a registered metric: ``key`` is ``None`` for a scalar metric."""

    metric: str
    key: str | None
    label: str


@dataclass(frozen=True)
class Grid:
    """Columns and, per evaluator (sorted), one value per column (``None``: undefined)."""

    columns: tuple[Column, ...]
    rows: tuple[tuple[str, tuple[float | None, ...]], ...]


def report_metrics() -> tuple[MetricSpec, ...]:
    """The registered statistics shown in the report, registration order."""
    return tuple(m for m in computed_metrics() if m.shown_in("report"))


def _values(entry: object) -> Mapping[str, object]:
    """The entry's registered values, read as the typed summary reads them."""
    return as_registered(entry.get(REGISTERED)) if isinstance(entry, Mapping) else {}


def _columns(metrics: Sequence[MetricSpec], entries: Sequence[object]) -> tuple[Column, ...]:
    out: list[Column] = []
    for spec in metrics:
        if spec.key is None:
            out.append(Column(spec.name, None, spec.label_of(None)))
            continue
        keys: dict[str, None] = {}
        for entry in entries:
            value = _values(entry).get(spec.name)
            if isinstance(value, Mapping):
                keys.update(dict.fromkeys(str(k) for k in value))
        out.extend(Column(spec.name, key, spec.label_of(key)) for key in keys)
    return tuple(out)


def _cell(entry: object, column: Column) -> float | None:
    value = _values(entry).get(column.metric)
    if column.key is None:
        return None if isinstance(value, Mapping) else finite_or_none(value)
    return finite_or_none(value.get(column.key)) if isinstance(value, Mapping) else None


def registered_grid(summary: Mapping[str, object]) -> Grid | None:
    """The registered statistics of ``summary`` (a ``summary.json`` mapping), or ``None`` when
    no registered metric is shown in the report."""
    metrics = report_metrics()
    if not metrics:
        return None
    evaluators = summary.get("evaluators") if isinstance(summary, Mapping) else None
    evaluators = evaluators if isinstance(evaluators, Mapping) else {}
    names = sorted(evaluators)
    columns = _columns(metrics, [evaluators[n] for n in names])
    rows = tuple((str(n), tuple(_cell(evaluators[n], c) for c in columns)) for n in names)
    return Grid(columns, rows)


def registered_text(value: float | None) -> str:
    """A registered value as text: four significant digits, ``None`` as ``—``."""
    return "—" if value is None else f"{value:.4g}"
