"""Temporary metric registrations for tests: the registries put back on exit.

:func:`own_statistics` scopes the metric and threshold registries and, inside it, leaves no
statistic with its own ``compute`` but the ones the test registers: a test of how such
statistics are shown (a report column, a card group) sees exactly its own, whatever the
harness registers itself. :func:`scoped_metrics` only scopes them (the built-ins stay).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from harness.vocab.metrics import METRICS, THRESHOLDS, MetricSpec, ThresholdSpec, register_metric
from harness.vocab.registry_type import scoped


@contextmanager
def scoped_metrics() -> Iterator[None]:
    """Metric and threshold registrations inside the block are undone on exit."""
    with scoped(METRICS, THRESHOLDS):
        yield


@contextmanager
def own_statistics(
    specs: Iterable[MetricSpec] = (), thresholds: Iterable[ThresholdSpec] = ()
) -> Iterator[tuple[MetricSpec, ...]]:
    """Within the block the statistics with a ``compute`` are exactly ``specs`` (registered
    with ``thresholds``, in order); everything is put back on exit."""
    with scoped_metrics():
        for spec in METRICS.where(lambda s: s.compute is not None):
            METRICS.unregister(spec.name)
        for threshold in thresholds:
            THRESHOLDS.register(threshold)
        yield tuple(register_metric(spec) for spec in specs)
