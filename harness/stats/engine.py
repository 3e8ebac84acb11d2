"""The metric engine: every metric row's point estimate and prompt-bootstrap draws, each
through its registry row.

A statistic lives in one row of :data:`harness.vocab.metrics.METRICS` (a
:class:`~harness.vocab.metrics.MetricSpec`) and the function the row names:

* a row with an ``estimator`` names an :class:`EstimatorGroup` (``"module:NAME"``): one
  computation that gives the values of several rows together (ρ, dispersion, W and winners
  per factor, peak ρ, ... from one pass over the factor levels). The built-in groups are in
  ``stats/estimators.py``. A group runs once per :class:`Sample`, however many of its rows
  are asked for (:meth:`Sample.once`);
* a row with only a ``compute`` (a statistic registered from outside, or a built-in one
  named ``"module:function"``) is estimated by :func:`computed_estimates`: its point is
  ``compute`` on the scores, its draws ``compute`` on each prompt-bootstrap resample
  (:func:`harness.stats.replicates.resample_prompts`), or the row's own vectorised
  ``draws(scores, weights)`` when it has one.

:func:`estimate` serves the audit (``stats/audit_stats.py``), the release comparison
(``release/comparison.py``) and the release gate's planned tests: it iterates the rows a
caller selects and asks each for its values (:meth:`MetricSpec.estimate`). The values come
group by group, in the order the groups are defined (each group's own order: the order the
comparison lists them), then the rows with a ``compute`` in registry order. An
:class:`Estimate` is ``(kind, subject, point, draws)``: the metric row's name, its key (a
factor, probe, block id, ...; ``None`` for a scalar), the value on the sample and its (B,)
replicates. Pure: arrays in, arrays out; no I/O.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

import numpy as np

from harness.core.errors import AuditError
from harness.core.numbers import finite_or_nan
from harness.stats.replicates import resample_prompts
from harness.stats.table import EvaluatorScores
from harness.vocab.metrics import METRICS, Estimator, MetricSpec

#: (metric row name, subject): one value of one metric (subject ``None`` for a scalar).
Planned = tuple[str, str | None]

T = TypeVar("T")


@dataclass(frozen=True)
class Estimate:
    """One metric value: ``kind`` the metric row's name, ``subject`` its key (``None`` for a
    scalar), ``point`` the value on the sample (the row's unit; NaN when undefined) and
    ``draws`` its (B,) prompt-bootstrap replicates."""

    kind: str
    subject: str | None
    point: float
    draws: np.ndarray


@dataclass(frozen=True, eq=False)
class Sample:
    """What the engine estimates from: one evaluator's ``scores``, the prompt-bootstrap
    ``weights`` (B, P) shared by every metric (B = 0: points only), and optionally
    ``failed`` / ``total`` (P,) the failed and all record counts per prompt (the failed share)
    and ``human`` (G, P) the mean human rating of each scene (NaN: not rated; the
    human-agreement metrics).

    A sample keeps what was computed from it (:meth:`once`): an estimator group, or a value
    several groups and the audit read, runs once per sample. Two samples are the same only
    when they are one object."""

    scores: EvaluatorScores
    weights: np.ndarray
    failed: np.ndarray | None = None
    total: np.ndarray | None = None
    human: np.ndarray | None = None
    _kept: dict[object, object] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def points_only(cls, scores: EvaluatorScores) -> Sample:
        """A sample without bootstrap draws (weights (0, P)): every estimate's draws are empty."""
        return cls(scores, np.zeros((0, len(scores.prompts)), dtype=np.int32))

    def once(self, fn: Callable[[Sample], T]) -> T:
        """``fn(self)``, computed on the first call and kept with the sample."""
        if fn not in self._kept:
            self._kept[fn] = fn(self)
        return cast(T, self._kept[fn])

    def prepare_computed(self, specs: Iterable[MetricSpec]) -> None:
        """Estimate the rows ``specs`` with only a ``compute`` in one batch (one resample per
        draw, shared by every row) and keep each row's values for :meth:`computed`."""
        todo = [s for s in specs if s.estimator is None and s.compute is not None
                and ("computed", s.name) not in self._kept]  # fmt: skip
        found = computed_estimates(self.scores, self.weights, todo)
        for spec in todo:
            self._kept[("computed", spec.name)] = [e for e in found if e.kind == spec.name]

    def computed(self, spec: MetricSpec) -> list[Estimate]:
        """The values of row ``spec`` (only a ``compute``): its point and draws on this sample."""
        self.prepare_computed([spec])
        return cast(list[Estimate], self._kept[("computed", spec.name)])


_RANKS = itertools.count()


@dataclass(frozen=True, eq=False)
class EstimatorGroup:
    """One computation that gives the values of every metric row naming it (``name``).

    ``run(sample)`` returns its :class:`Estimate` list (in the order callers list them);
    ``plan(scores, human)`` the (metric, subject) of each, without computing (``human``: with
    human ratings). ``rank``: the groups' order in :func:`estimate` (their definition order).
    Calling the group runs it once per sample."""

    name: str
    run: Callable[[Sample], list[Estimate]]
    plan: Callable[[EvaluatorScores, bool], list[Planned]]
    rank: int

    def __call__(self, sample: Sample) -> list[Estimate]:
        return sample.once(self.run)


def estimator_group(
    plan: Callable[[EvaluatorScores, bool], list[Planned]],
) -> Callable[[Callable[[Sample], list[Estimate]]], EstimatorGroup]:
    """Decorator: the function ``run(sample) -> list[Estimate]`` as an :class:`EstimatorGroup`
    named after it, listing its values with ``plan``. A row names it ``"module:NAME"``."""

    def group(run: Callable[[Sample], list[Estimate]]) -> EstimatorGroup:
        return EstimatorGroup(run.__name__, run, plan, next(_RANKS))

    return group




def value_of(value: object, key: str | None) -> float:
    """One value of a statistic's result: the scalar, or ``key``'s entry (NaN when absent)."""
    if key is None:
        return math.nan if isinstance(value, Mapping) else finite_or_nan(value)
    if not isinstance(value, Mapping):
        return math.nan
    found = {str(k): v for k, v in value.items()}.get(key)
    return finite_or_nan(found)


def subjects_of(spec: MetricSpec, point: object) -> list[str | None]:
    """A scalar statistic's one subject (``None``), or a keyed one's keys in ``point``."""
    if spec.key is None:
        return [None]
    return [str(k) for k in point] if isinstance(point, Mapping) else []


#: What a caller makes of an exception raised by a row's ``compute`` or ``draws``: the error to
#: raise instead (the audit names the statistic; ``None`` re-raises it as it is).
Guard = Callable[[MetricSpec, Exception], Exception]


def _call(spec: MetricSpec, fn: Callable[..., object], *args: object, guard: Guard | None) -> object:
    if guard is None:
        return fn(*args)
    try:
        return fn(*args)
    except AuditError:
        raise
    except Exception as exc:  # a row's own code: any failure, reported with its metric
        raise guard(spec, exc) from exc


def computed_estimates(
    t: EvaluatorScores,
    weights: np.ndarray,
    specs: Iterable[MetricSpec],
    points: Mapping[str, object] | None = None,
    guard: Guard | None = None,
) -> list[Estimate]:
    """Every row of ``specs`` (each with a ``compute``): the point is ``compute(t)`` (or
    ``points[name]`` when given), the draws the row's ``draws(t, weights)`` when it has one,
    else ``compute`` on each draw's :func:`resample_prompts` (one resample per draw, shared by
    every row). A keyed row gives one estimate per key of its point, registry order.
    ``guard`` turns an exception of a row's code into the error raised (see :data:`Guard`)."""
    specs = [s for s in specs if s.compute is not None]
    if not specs:
        return []
    values = [points[s.name] if points is not None and s.name in points
              else _call(s, s.compute, t, guard=guard) for s in specs]  # fmt: skip
    subjects = [subjects_of(spec, point) for spec, point in zip(specs, values, strict=True)]
    n_draws = np.asarray(weights).shape[0]
    draws = [np.full((n_draws, len(keys)), np.nan) for keys in subjects]
    resampled = [i for i, spec in enumerate(specs) if spec.draws is None]
    for i, spec in enumerate(specs):
        if spec.draws is not None:
            given = _call(spec, spec.draws, t, weights, guard=guard)
            for j, key in enumerate(subjects[i]):
                column = given if key is None else (given.get(key) if isinstance(given, Mapping) else None)
                if column is not None:
                    draws[i][:, j] = np.asarray(column, dtype=np.float64)
    if resampled:
        for b, counts in enumerate(np.asarray(weights)):
            sample = resample_prompts(t, counts)
            for i in resampled:
                value = _call(specs[i], specs[i].compute, sample, guard=guard)
                draws[i][b] = [value_of(value, key) for key in subjects[i]]
    out = []
    for spec, point, keys, d in zip(specs, values, subjects, draws, strict=True):
        out += [Estimate(spec.name, key, value_of(point, key), d[:, j]) for j, key in enumerate(keys)]
    return out


# ------------------------------------------------------------------------------ the engine


def _everything(spec: MetricSpec) -> bool:
    return True


def _estimators(rows: Sequence[MetricSpec]) -> list[tuple[Estimator, frozenset[str]]]:
    """The estimators ``rows`` name, each with the names of its rows: the groups in their
    definition order, then any other estimator in the order its first row comes."""
    named: dict[Estimator, set[str]] = {}
    for spec in rows:
        estimator = spec.resolved_estimator()
        if estimator is not None:
            named.setdefault(estimator, set()).add(spec.name)
    order = sorted(named, key=lambda e: e.rank if isinstance(e, EstimatorGroup) else math.inf)
    return [(e, frozenset(named[e])) for e in order]


def plan(t: EvaluatorScores, human: bool = False,
         select: Callable[[MetricSpec], bool] = _everything) -> list[Planned]:
    """(metric, subject) of every value :func:`estimate` gives for ``t`` with the same
    ``select``, in order (``human``: with human ratings). A keyed row with a ``compute`` is
    computed on ``t`` to find its keys; an estimator that is not an :class:`EstimatorGroup`
    runs on ``t`` without draws."""
    rows = METRICS.where(select)
    out: list[Planned] = []
    for estimator, names in _estimators(rows):
        if isinstance(estimator, EstimatorGroup):
            planned = estimator.plan(t, human)
        else:
            planned = [(e.kind, e.subject) for e in estimator(Sample.points_only(t))]
        out += [p for p in planned if p[0] in names]
    for spec in rows:
        if spec.estimator is None and spec.compute is not None:
            point = spec.compute(t) if spec.key is not None else None
            out += [(spec.name, key) for key in subjects_of(spec, point)]
    return out


def estimate(sample: Sample, select: Callable[[MetricSpec], bool] = _everything) -> list[Estimate]:
    """Every metric row ``select`` accepts, estimated on ``sample`` through its row
    (:meth:`MetricSpec.estimate`): the estimator groups' values in their order, then the rows
    with only a ``compute`` in registry order (estimated in one batch)."""
    rows = METRICS.where(select)
    sample.prepare_computed(rows)
    found = [(spec, spec.estimate(sample)) for spec in rows]
    wanted = {id(e) for _spec, values in found for e in values}
    out = [e for estimator, _names in _estimators(rows) for e in sample.once(estimator) if id(e) in wanted]
    return out + [e for spec, values in found if spec.estimator is None for e in values]
