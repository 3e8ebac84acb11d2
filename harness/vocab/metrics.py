"""The metric and threshold registries: every statistic and every gate declared once.

A :class:`ThresholdSpec` is one gate: its name (``max_<what>`` / ``min_<what>``, or the
study's ``peak_rho_max``), direction, default value (``None``: known but not gated unless a
project sets it) and scope (``study``; ``blocks``: only when the profile has factorial
blocks; ``human``: only with ``--audit-human``). ``thresholds.py``'s table of known names,
the built-in defaults and the layering derive from :data:`THRESHOLDS`.

A :class:`MetricSpec` is one statistic of an evaluator: name (its ``summary.json`` key and
the name checks use), label, unit, which direction is harmful, what its key is (a factor, a
probe, a block, ...), the threshold gating it, the release-compare margin, and where it
appears. The row is the metric: :meth:`MetricSpec.estimate` gives its values (point and
prompt-bootstrap draws) on a sample, and the metric engine (``stats/engine.py``) estimates
every metric through its row. A study row names its ``estimator``, a group of
``stats/estimators.py`` that computes several rows together (``"module:NAME"``); a row with
``compute`` (a function of the evaluator's score arrays: a built-in statistic named
``"module:function"``, or one registered from outside) is computed, summarised with its
interval, checked, carded, reported and compared from this row alone::

    from harness.vocab.metrics import MetricSpec, ThresholdSpec, register_metric

    register_metric(
        MetricSpec("c0_spread", "c0 spread", unit="score", harmful=+1, margin=0.05,
                   threshold="max_c0_spread", compute=my_stats.c0_spread),
        threshold=ThresholdSpec("max_c0_spread", "max", 0.5, "spread of c0 scores"),
    )

``compute(scores)`` takes a :class:`~harness.stats.table.EvaluatorScores` and returns a float
(NaN when undefined) or, for a keyed metric, a mapping key → float. ``compute`` may also be
``"module:function"`` (a :class:`LazyCompute`, imported on first call): a built-in row here
points at its statistic in ``harness/stats/`` that way. ``draws(scores, weights)``, optional
and given the same ways, returns the statistic's prompt-bootstrap replicates ((B,), or key →
(B,)) from the (B, P) prompt counts; without it the engine recomputes ``compute`` on each
draw's resample of the scores.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from harness.vocab.registry_type import Lazy, Registry, VocabularyError

if TYPE_CHECKING:
    import numpy as np


class ScoreTable(Protocol):
    """What a statistic is computed from: one evaluator's scores on the shared (generator,
    prompt) axes, a :class:`harness.stats.table.EvaluatorScores` (the statistics build on the
    vocabulary, so the vocabulary names the table by what it holds)."""

    @property
    def evaluator(self) -> str: ...

    @property
    def generators(self) -> tuple[str, ...]: ...

    @property
    def prompts(self) -> tuple[str, ...]: ...

Direction = Literal["max", "min"]
Scope = Literal["study", "blocks", "human", "search", "presentation"]
Unit = Literal["ratio", "fraction", "count", "coefficient", "score"]
KeyKind = Literal["factor", "shared factor", "probe", "block", "envelope count", "reversal count"]
Place = Literal["summary", "check", "card", "report", "compare"]
EVERYWHERE: frozenset[str] = frozenset({"summary", "check", "card", "report", "compare"})

#: Metric names, one constant each: an audit file writes ``metric(PEAK_RHO)``.
RHO = "rho"
DISPERSION = "dispersion"
KENDALL_W = "kendall_w"
TOP1_COUNT = "top1_count"
DISCRIMINATION = "discrimination"
PEAK_RHO = "peak_rho"
TEMPLATE_RHO = "template_rho"
MIN_W = "min_w"
MAX_TOP1 = "max_top1"
BEST_VIEW_INFLATION = "best_view_inflation"
CONTENT_ACCURACY = "content_accuracy"
FAILED_SHARE = "failed_share"
ENVELOPES = "envelopes"
SIGN_CROSSINGS = "sign_crossings"
STRICT_PAIRS = "strict_pairs"
INTERACTION_SHARE = "interaction_share"
BLOCK_SIGN_CROSSINGS = "block_sign_crossings"
HUMAN_AGREEMENT = "human_agreement"
HUMAN_AGREEMENT_DROP = "human_agreement_drop"
REVERSALS = "reversals"
MOVEMENT = "movement"
PEAK_MOVEMENT = "peak_movement"

#: Threshold names of the study, one constant each.
PEAK_RHO_MAX = "peak_rho_max"
MIN_KENDALL_W = "min_kendall_w"
MAX_TOP1_COUNT = "max_top1_count"
MIN_SCRAMBLE_DISCRIMINATION = "min_scramble_discrimination"
MIN_REMOVAL_DISCRIMINATION = "min_removal_discrimination"
MIN_WORST_OBJECTS_DISCRIMINATION = "min_worst_objects_discrimination"
MAX_BEST_VIEW_INFLATION = "max_best_view_inflation"
MAX_FAILED_SHARE = "max_failed_share"
MAX_CONFIRMED_REVERSALS = "max_confirmed_reversals"
MIN_STRICT_PAIRS = "min_strict_pairs"
MAX_SIGN_CROSSINGS = "max_sign_crossings"
MAX_INTERACTION_SHARE = "max_interaction_share"
MAX_BLOCK_SIGN_CROSSINGS = "max_block_sign_crossings"
MIN_HUMAN_AGREEMENT = "min_human_agreement"
MAX_HUMAN_AGREEMENT_DROP = "max_human_agreement_drop"
#: The search's thresholds (scope ``search``: only a profile with a search block).
MAX_WORST_CASE_RHO = "max_worst_case_rho"
MAX_WORST_CASE_RANKING_DISTANCE = "max_worst_case_ranking_distance"
MAX_WORST_CASE_PAIR_REVERSAL = "max_worst_case_pair_reversal"
MAX_FLIP_SHARE = "max_flip_share"
#: Protocol movement's threshold: known, not gated unless a project sets it.
MAX_MOVEMENT = "max_movement"


@dataclass(frozen=True)
class ThresholdSpec:
    """One gate. ``direction``: ``max`` (the estimate may not exceed it) or ``min`` (may not
    fall below it). ``default``: the built-in value, ``None`` when it gates nothing unless a
    project sets it. ``scope``: when it applies (``study`` always, ``blocks`` with factorial
    blocks, ``human`` with human ratings); out of scope it is left out of the run id."""

    name: str
    direction: Direction
    default: float | None
    description: str
    scope: Scope = "study"

    def __post_init__(self) -> None:
        if self.direction not in ("max", "min"):
            raise VocabularyError(f"threshold {self.name!r}: direction must be 'max' or 'min'")
        if self.scope not in ("study", "blocks", "human", "search", "presentation"):
            raise VocabularyError(
                f"threshold {self.name!r}: scope must be study, blocks, human, search or presentation")


Compute = Callable[[ScoreTable], float | Mapping[str, float]]
#: ``draws(scores, weights)``: the statistic's prompt-bootstrap replicates, (B,) or key → (B,),
#: from the (B, P) prompt counts of :func:`harness.stats.bootstrap.prompt_weights`.
Draws = Callable[[ScoreTable, "np.ndarray"], "np.ndarray | Mapping[str, np.ndarray]"]


#: A ``compute`` given as ``"module:function"``, imported on the first call (the stats modules
#: sit above the vocabulary): the one lazy reference, :class:`~harness.vocab.registry_type.Lazy`.
LazyCompute = Lazy


class Estimated(Protocol):
    """One value of a metric as the metric engine gives it (a
    :class:`harness.stats.engine.Estimate`): the metric row's name, its key, the value and
    its (B,) prompt-bootstrap draws."""

    @property
    def kind(self) -> str: ...

    @property
    def subject(self) -> str | None: ...

    @property
    def point(self) -> float: ...

    @property
    def draws(self) -> np.ndarray: ...


class MetricSample(Protocol):
    """What a metric is estimated on (a :class:`harness.stats.engine.Sample`): it runs an
    estimator once and keeps the result (``once``), and estimates a row that has only a
    ``compute`` (``computed``)."""

    def once(self, fn: Estimator) -> Sequence[Estimated]: ...

    def computed(self, spec: MetricSpec) -> Sequence[Estimated]: ...


#: ``estimator(sample)``: the values of every metric row naming it, on one
#: :class:`MetricSample` (an :class:`harness.stats.engine.EstimatorGroup`).
Estimator = Callable[[MetricSample], Sequence[Estimated]]


@dataclass(frozen=True)
class MetricSpec:
    """One statistic of an evaluator.

    ``harmful``: +1 when a larger value is worse (ρ), -1 when a smaller one is (W).
    ``key``: what the metric is keyed by (``None``: a scalar). ``threshold``: the threshold
    that gates it by default; ``key_thresholds`` per key where keys are gated differently
    (a probe-keyed metric takes its probe's threshold from the probe registry). ``margin``:
    the release-compare margin in the metric's unit (``None``: not compared). ``places``:
    where it appears. ``estimator``: the metric engine's group that estimates it, named
    ``"module:NAME"`` (an :class:`harness.stats.engine.EstimatorGroup`, imported on first
    use; the study's own rows name theirs in ``harness/stats/estimators.py``). ``compute``:
    for a statistic with its own function (see the module docstring), estimated by the
    engine's compute path when the row names no estimator. ``draws``: that statistic's
    vectorised bootstrap replicates (optional). ``summary_path``: where its value sits in a
    ``summary.json`` evaluator entry when that is not its own name. ``bounds``: the closed range
    of values the statistic can take (``None``: unbounded); an interval of it, or of a
    difference of two of it, is clipped to what it can reach. ``upper_min_blocks``: for a
    statistic biased low with few prompts, the fewest prompt blocks at which its interval's
    upper end covers; below them the upper end is withheld (NaN, ``null`` in JSON) and the
    interval is one-sided (:func:`harness.stats.intervals.withheld_ends`); ``lower_min_blocks``
    the same for a statistic biased high, whose lower end is withheld.
    """

    name: str
    label: str
    unit: Unit = "ratio"
    harmful: int = +1
    key: KeyKind | None = None
    threshold: str | None = None
    key_thresholds: Mapping[str, str] = field(default_factory=dict)
    key_labels: Mapping[str, str] = field(default_factory=dict)
    margin: float | None = None
    places: frozenset[str] = EVERYWHERE
    description: str = ""
    compute: Compute | str | None = None
    summary_path: tuple[str, ...] = ()
    draws: Draws | str | None = None
    estimator: Estimator | str | None = None
    bounds: tuple[float, float] | None = None
    upper_min_blocks: int | None = None
    lower_min_blocks: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.compute, str):  # "module:function", imported on first use
            object.__setattr__(self, "compute", LazyCompute(self.compute))
        if isinstance(self.draws, str):
            object.__setattr__(self, "draws", LazyCompute(self.draws))
        if isinstance(self.estimator, str):
            object.__setattr__(self, "estimator", Lazy(self.estimator))
        if self.draws is not None and self.compute is None:
            raise VocabularyError(f"metric {self.name!r}: draws needs a compute (its point estimate)")
        if self.harmful not in (1, -1):
            raise VocabularyError(f"metric {self.name!r}: harmful must be +1 or -1")
        unknown = set(self.places) - EVERYWHERE
        if unknown:
            raise VocabularyError(
                f"metric {self.name!r}: unknown place(s) {sorted(unknown)}",
                hint=f"places: {', '.join(sorted(EVERYWHERE))}",
            )

    @property
    def direction(self) -> Direction:
        """The threshold direction that guards it: ``max`` when larger is harmful."""
        return "max" if self.harmful > 0 else "min"

    def shown_in(self, place: str) -> bool:
        return place in self.places

    @property
    def estimated(self) -> bool:
        """Whether the metric engine estimates it: it names an estimator or has a ``compute``."""
        return self.estimator is not None or self.compute is not None

    def resolved_estimator(self) -> Estimator | None:
        """The estimator it names (a ``"module:NAME"`` imported now); ``None`` without one."""
        estimator = self.estimator
        return estimator.resolve() if isinstance(estimator, Lazy) else estimator

    def estimate(self, sample: MetricSample) -> list[Estimated]:
        """Its values on ``sample`` (point and draws, one per key): its estimator's values of
        this row (the estimator runs once per sample, for every row naming it), else those
        of its ``compute``; none for a row with neither."""
        estimator = self.resolved_estimator()
        if estimator is not None:
            return [e for e in sample.once(estimator) if e.kind == self.name]
        return list(sample.computed(self)) if self.compute is not None else []

    def label_of(self, key: str | None) -> str:
        """``rho[pitch]``, ``strictly ordered pairs``: how checks and outputs name a value."""
        named = self.key_labels.get(key or "")
        if named:
            return named
        return self.name if key is None else f"{self.name}[{key}]"


THRESHOLDS: Registry[ThresholdSpec] = Registry("threshold")
METRICS: Registry[MetricSpec] = Registry("metric")
PANEL_METRICS: Registry[MetricSpec] = Registry("panel metric")


def register_threshold(spec: ThresholdSpec, *, replace: bool = False) -> ThresholdSpec:
    """Declare a threshold (its name must read ``max_<what>`` / ``min_<what>``)."""
    if not spec.name.startswith(("max_", "min_")) and spec.name != PEAK_RHO_MAX:
        raise VocabularyError(
            f"threshold {spec.name!r} must be named min_<what> or max_<what>",
            hint="the prefix gives the direction",
        )
    if not spec.name.startswith(spec.direction + "_") and spec.name != PEAK_RHO_MAX:
        raise VocabularyError(f"threshold {spec.name!r}: its prefix disagrees with {spec.direction}")
    return THRESHOLDS.register(spec, replace=replace)


def register_metric(
    spec: MetricSpec, *, threshold: ThresholdSpec | None = None, replace: bool = False
) -> MetricSpec:
    """Add an evaluator statistic (and the threshold that gates it, when it is new).

    A registered statistic needs ``compute`` or an ``estimator`` (a metric engine group that
    computes it); its threshold must be registered (here or before) when it names one.
    """
    if threshold is not None:
        register_threshold(threshold, replace=replace)
    for name in (spec.threshold, *spec.key_thresholds.values()):
        if name is not None and name not in THRESHOLDS:
            raise VocabularyError(
                f"metric {spec.name!r} names unknown threshold {name!r}",
                hint="register it first, or pass threshold=ThresholdSpec(...)",
            )
    return METRICS.register(spec, replace=replace)


def metric(name: str, *, where: str | None = None) -> MetricSpec:
    """The spec of evaluator metric ``name``."""
    return METRICS.get(name, where=where)


def computed_metrics() -> tuple[MetricSpec, ...]:
    """The registered statistics with their own ``compute`` (those the study's code does not
    compute), registration order."""
    return METRICS.where(lambda m: m.compute is not None)


def default_thresholds() -> dict[str, float]:
    """Every threshold with a default value: the study's built-in gate."""
    return {t.name: t.default for t in THRESHOLDS if t.default is not None}


def scoped_thresholds(scope: Scope) -> tuple[str, ...]:
    """The thresholds that apply only in ``scope`` (``blocks``, ``human``)."""
    return tuple(t.name for t in THRESHOLDS if t.scope == scope)


for _threshold in (
    ThresholdSpec(PEAK_RHO_MAX, "max", 1.0,
                  "configuration/generator variance ratio rho (every factor and the peak)"),
    ThresholdSpec(MIN_KENDALL_W, "min", 0.5, "Kendall's W across the levels of each shared factor"),
    ThresholdSpec(MAX_TOP1_COUNT, "max", 1.0,
                  "distinct unique winners across the levels of each shared factor"),
    ThresholdSpec(MIN_SCRAMBLE_DISCRIMINATION, "min", 0.6,
                  "directional discrimination of the scrambled probe"),
    ThresholdSpec(MIN_REMOVAL_DISCRIMINATION, "min", 0.7,
                  "directional discrimination of keep_half and biggest_only"),
    ThresholdSpec(MIN_WORST_OBJECTS_DISCRIMINATION, "min", 0.7,
                  "directional discrimination of worst_objects"),
    ThresholdSpec(MAX_BEST_VIEW_INFLATION, "max", 1.25, "median best-view inflation over scenes"),
    ThresholdSpec(MAX_FAILED_SHARE, "max", 0.01, "fraction of records with status failed"),
    ThresholdSpec(MAX_CONFIRMED_REVERSALS, "max", 0.0, "reversals confirmed by the simultaneous band"),
    ThresholdSpec(MIN_STRICT_PAIRS, "min", None,
                  "generator pairs strictly ordered over every shared protocol"),
    ThresholdSpec(MAX_SIGN_CROSSINGS, "max", 0.0,
                  "generator pairs whose margin envelope crosses zero"),
    ThresholdSpec(MAX_INTERACTION_SHARE, "max", 0.1,
                  "share of a factorial block's within-scene protocol variance that is not additive",
                  "blocks"),
    ThresholdSpec(MAX_BLOCK_SIGN_CROSSINGS, "max", 0.0,
                  "generator pairs whose margin envelope crosses zero over a factorial block's cells",
                  "blocks"),
    ThresholdSpec(MIN_HUMAN_AGREEMENT, "min", 0.3,
                  "Pearson r of the c0 scores with the mean human rating (--audit-human)", "human"),
    ThresholdSpec(MAX_HUMAN_AGREEMENT_DROP, "max", 0.1,
                  "largest drop of human agreement from c0 over a factor's levels, bootstrap lower bound",
                  "human"),
    ThresholdSpec(MAX_MOVEMENT, "max", None,
                  "protocol movement: a factor's per-scene score movement in c0 within-generator "
                  "standard deviations (every factor and the peak)"),
    ThresholdSpec(MAX_WORST_CASE_RHO, "max", 1.0,
                  "rho of the searched worst configuration against c0 on held-out prompts (lower bound)",
                  "search"),
    ThresholdSpec(MAX_WORST_CASE_RANKING_DISTANCE, "max", 0.0,
                  "Kendall distance of the searched worst ranking from c0's on held-out prompts "
                  "(lower bound)", "search"),
    ThresholdSpec(MAX_WORST_CASE_PAIR_REVERSAL, "max", 0.0,
                  "reversal of a named generator pair at the searched worst configuration on held-out "
                  "prompts (lower bound)", "search"),
    ThresholdSpec(MAX_FLIP_SHARE, "max", 0.0,
                  "share of the protocol space where a pair's order (or the c0 winner) flips (lower bound)",
                  "search"),
):
    THRESHOLDS.register(_threshold)
del _threshold

#: ρ is biased low with few prompts (its denominator holds the generators' per-prompt noise over
#: P): the misses of its interval lie above it. Measured coverage of the expanded percentile
#: interval (docs/intervals.md): ρ 0.865 and peak ρ 0.922 at 6 prompts, 0.949 and 0.961 at 20,
#: so below 20 prompt blocks the upper end of a ρ interval is withheld.
RHO_UPPER_MIN_BLOCKS = 20
#: Protocol movement is biased high with few prompts (the square root of a ratio over a noisy
#: c0 spread): its interval misses below. Measured coverage of the expanded percentile interval
#: on the calibration model, 200 replications: 0.745 at 6 prompts (every miss below), 0.87 at
#: 20, 0.925 at 50; so below 50 prompt blocks the lower end of a movement interval is withheld.
MOVEMENT_LOWER_MIN_BLOCKS = 50
#: The module of the study's estimator groups (a row names its group "module:NAME").
_ESTIMATORS = "harness.stats.estimators:"
#: The module of protocol movement, a built-in row with its own ``compute`` and ``draws``.
_MOVEMENT = "harness.stats.movement:"
#: Protocol movement has its own columns in the report's tables and the terminal, not the grid of
#: registered statistics.
_MOVEMENT_PLACES = frozenset({"summary", "check", "card", "compare"})
_NO_COMPARE = frozenset({"summary", "check", "card", "report"})
_HUMAN = frozenset({"check", "card", "report", "compare"})  # not in summary.json's entry

for _metric in (
    MetricSpec(RHO, "ρ", "ratio", +1, "factor", PEAK_RHO_MAX, margin=0.10,
               description="configuration/generator variance ratio",
               estimator=_ESTIMATORS + "factor_levels", upper_min_blocks=RHO_UPPER_MIN_BLOCKS),
    MetricSpec(DISPERSION, "dispersion", "fraction", +1, "factor", margin=0.02,
               description="mean normalised score range",
               estimator=_ESTIMATORS + "factor_levels"),
    MetricSpec(KENDALL_W, "Kendall's W", "coefficient", -1, "shared factor", MIN_KENDALL_W,
               margin=0.05, description="rank agreement over levels",
               estimator=_ESTIMATORS + "factor_levels", bounds=(0.0, 1.0)),
    MetricSpec(TOP1_COUNT, "distinct winners", "count", +1, "shared factor", MAX_TOP1_COUNT,
               margin=1.0, description="distinct unique winners over levels",
               estimator=_ESTIMATORS + "factor_levels"),
    MetricSpec(DISCRIMINATION, "discrimination", "fraction", -1, "probe", margin=0.05,
               description="tie-adjusted directional discrimination",
               estimator=_ESTIMATORS + "probes", bounds=(0.0, 1.0)),
    MetricSpec(PEAK_RHO, "peak ρ", "ratio", +1, None, PEAK_RHO_MAX, margin=0.10,
               description="largest rho over factors",
               estimator=_ESTIMATORS + "factor_levels", upper_min_blocks=RHO_UPPER_MIN_BLOCKS),
    MetricSpec(TEMPLATE_RHO, "template ρ", "ratio", +1, None, PEAK_RHO_MAX, places=_NO_COMPARE,
               description="rho of the caption template factor",
               estimator=_ESTIMATORS + "factor_levels", upper_min_blocks=RHO_UPPER_MIN_BLOCKS),
    MetricSpec(MIN_W, "min W", "coefficient", -1, None, MIN_KENDALL_W, places=_NO_COMPARE,
               description="smallest Kendall's W over the shared factors",
               estimator=_ESTIMATORS + "factor_levels", bounds=(0.0, 1.0)),
    MetricSpec(MAX_TOP1, "max winners", "count", +1, None, MAX_TOP1_COUNT, places=_NO_COMPARE,
               description="largest top1_count over the shared factors",
               estimator=_ESTIMATORS + "factor_levels"),
    MetricSpec(BEST_VIEW_INFLATION, "best-view inflation", "ratio", +1, None, MAX_BEST_VIEW_INFLATION,
               margin=0.05, description="median best-view / default-view score",
               estimator=_ESTIMATORS + "best_view"),
    MetricSpec(CONTENT_ACCURACY, "content accuracy", "fraction", -1, None, places=_NO_COMPARE,
               description="mean discrimination over the probes",
               estimator=_ESTIMATORS + "probes", bounds=(0.0, 1.0)),
    MetricSpec(FAILED_SHARE, "failed share", "fraction", +1, None, MAX_FAILED_SHARE, margin=0.01,
               key_labels={"": "failed share"}, description="share of records that failed",
               estimator=_ESTIMATORS + "failed_records", bounds=(0.0, 1.0)),
    MetricSpec(INTERACTION_SHARE, "interaction share", "fraction", +1, "block", MAX_INTERACTION_SHARE,
               margin=0.05, summary_path=("blocks",),
               description="non-additive share of a factorial block's protocol variance",
               estimator=_ESTIMATORS + "factorial_blocks", bounds=(0.0, 1.0)),
    MetricSpec(BLOCK_SIGN_CROSSINGS, "block sign crossings", "count", +1, "block",
               MAX_BLOCK_SIGN_CROSSINGS, margin=1.0, summary_path=("blocks",),
               description="pairs whose margin envelope crosses 0 over a block's cells",
               estimator=_ESTIMATORS + "factorial_blocks"),
    MetricSpec(ENVELOPES, "envelope counts", "count", +1, "envelope count",
               key_thresholds={"strict": MIN_STRICT_PAIRS, "sign_crossing": MAX_SIGN_CROSSINGS},
               key_labels={"strict": "strictly ordered pairs", "sign_crossing": "sign-crossing pairs",
                           "tie_boundary": "tie-boundary pairs"},
               places=_NO_COMPARE, description="margin-envelope counts of the generator pairs",
               estimator=_ESTIMATORS + "protocol_envelopes"),
    MetricSpec(SIGN_CROSSINGS, "sign-crossing pairs", "count", +1, None, MAX_SIGN_CROSSINGS,
               margin=1.0, key_labels={"": "sign-crossing pairs"}, summary_path=(ENVELOPES, "sign_crossing"),
               description="pairs whose margin envelope crosses 0",
               estimator=_ESTIMATORS + "protocol_envelopes"),
    MetricSpec(STRICT_PAIRS, "strictly ordered pairs", "count", -1, None, MIN_STRICT_PAIRS,
               margin=1.0, key_labels={"": "strictly ordered pairs"}, summary_path=(ENVELOPES, "strict"),
               description="pairs strictly ordered over every shared protocol",
               estimator=_ESTIMATORS + "protocol_envelopes"),
    MetricSpec(HUMAN_AGREEMENT, "human agreement", "coefficient", -1, None, MIN_HUMAN_AGREEMENT,
               margin=0.05, places=_HUMAN,
               description="Pearson r of the c0 scores with the mean human rating (with human ratings)",
               estimator=_ESTIMATORS + "human_agreement", bounds=(-1.0, 1.0)),
    MetricSpec(HUMAN_AGREEMENT_DROP, "human agreement drop", "coefficient", +1, "factor",
               MAX_HUMAN_AGREEMENT_DROP, margin=0.05, places=_HUMAN,
               description="largest drop of human agreement from c0 over the factor's levels "
               "(with human ratings)",
               estimator=_ESTIMATORS + "human_agreement"),
    MetricSpec(MOVEMENT, "protocol movement", "ratio", +1, "factor", MAX_MOVEMENT, margin=0.5,
               description="a factor's per-scene score movement over its levels, in c0 "
               "within-generator standard deviations (not changed by how far apart the generators are)",
               compute=_MOVEMENT + "movement", draws=_MOVEMENT + "movement_draws", bounds=(0.0, math.inf),
               places=_MOVEMENT_PLACES, lower_min_blocks=MOVEMENT_LOWER_MIN_BLOCKS),
    MetricSpec(PEAK_MOVEMENT, "peak movement", "ratio", +1, None, MAX_MOVEMENT, margin=0.5,
               description="largest protocol movement over the factors",
               compute=_MOVEMENT + "peak_movement", draws=_MOVEMENT + "peak_movement_draws",
               bounds=(0.0, math.inf), places=_MOVEMENT_PLACES, lower_min_blocks=MOVEMENT_LOWER_MIN_BLOCKS),
):
    METRICS.register(_metric)
del _metric

PANEL_METRICS.register(
    MetricSpec(REVERSALS, "reversals", "count", +1, "reversal count",
               key_thresholds={"simultaneous": MAX_CONFIRMED_REVERSALS},
               key_labels={"descriptive": "descriptive reversals", "pointwise": "pointwise reversals",
                           "simultaneous": "confirmed reversals (simultaneous band)"},
               places=frozenset({"summary", "check", "report"}),
               description="winner reversals over every (evaluator, shared factor)")
)


#: The presentation probes' threshold (scope ``presentation``: only an audit under a
#: protocol preset, ``--audit-view-policy=preset:NAME``). The statistic, *presentation
#: agreement*, is the share of (generator pair, prompt) comparisons whose order a presentation
#: change (``harness.peers.presentation_probes``) leaves unchanged.
PRESENTATION_AGREEMENT = "presentation_agreement"
MIN_PRESENTATION_AGREEMENT = "min_presentation_agreement"
THRESHOLDS.register(
    ThresholdSpec(MIN_PRESENTATION_AGREEMENT, "min", 0.8,
                  "share of (generator pair, prompt) orders a presentation probe (untextured, normal map, "
                  "tiled, points) leaves unchanged", "presentation")
)


#: The repeatability check (``audit_tests/test_repeatability.py``, harness/measure/repeatability.py):
#: the largest absolute difference between one sample of c0 inputs scored in batches of 1, in
#: a batch of N and in a fresh process. 0 by default (bit for bit); a project sets a tolerance,
#: e.g. for a GPU scorer, like any threshold (``[tool.t3d-audit.thresholds]`` or ``overrides``).
REPEATABILITY = "repeatability"
MAX_REPEATABILITY_DIFF = "max_repeatability_diff"
THRESHOLDS.register(
    ThresholdSpec(MAX_REPEATABILITY_DIFF, "max", 0.0,
                  "largest absolute score difference when the same c0 inputs are scored again "
                  "(batches of 1 and N, a fresh process)")
)
