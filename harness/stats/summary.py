"""The one typed form of the audit's statistics: :class:`PanelSummary`, :class:`EvaluatorSummary`.

The computation builds it (``AuditResult.summary()``), ``summary.json`` is its serialisation
(:meth:`PanelSummary.to_summary`, :meth:`EvaluatorSummary.to_entry`) and it reads itself back
(``from_summary``/``from_entry``); fixtures, cards, the report and the terminal read it. An
evaluator's summary is a frozen object with one attribute per statistic::

    summary.rho["pitch"]                  # float | None, a ratio
    summary.interval("rho", "pitch")      # Interval(low, high) | None, 95 % bootstrap
    summary.metric("discrimination", "scrambled")   # a Metric: value, interval, default threshold

:meth:`EvaluatorSummary.metric` names every gated statistic once: it returns the value, its
interval, the threshold that gates it by default and whether it was measured at all
(:class:`Status`). ``AuditCheck.metric`` (``harness.checks.assertions``) turns that into a check.
Values that are NaN or missing in the entry are ``None`` here. Pure: no I/O, no pytest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import NamedTuple

from harness.core.errors import AuditError
from harness.core.numbers import count_or_none, finite_or_none
from harness.stats.confirmation import FamilyConfirmation
from harness.vocab import metrics as m
from harness.vocab.factors import factor_names, shared_factor_names
from harness.vocab.metrics import METRICS, PANEL_METRICS, MetricSpec
from harness.vocab.probes import probe_names, probe_threshold
from harness.vocab.registry_type import closest

ENVELOPE_COUNTS = ("strict", "sign_crossing", "tie_boundary")
REGISTERED = "registered"  # an evaluator entry's key of the registered statistics
INTERVAL_METRICS = (m.RHO, m.DISPERSION, m.DISCRIMINATION)  # keyed metrics with bootstrap intervals
REVERSAL_COUNTS = ("descriptive", "pointwise", "simultaneous")
RegisteredValue = float | None | Mapping[str, float | None]


class MetricError(AuditError):
    """An audit test names a metric, or a factor/probe of a metric, that does not exist."""


class Interval(NamedTuple):
    """A 95 % prompt-bootstrap percentile interval; an end is ``None`` where undefined."""

    low: float | None
    high: float | None


class Status(Enum):
    """Whether a metric was measured: the one missing-data rule of audit checks.

    ``MEASURED``: a finite value. ``NOT_IN_PROFILE``: this run's profile does not measure it
    (a factor or probe it does not have): the check is skipped. ``NO_DATA``: measured but
    undefined (NaN/None, e.g. every record failed): the check fails.
    """

    MEASURED = "measured"
    NOT_IN_PROFILE = "not in profile"
    NO_DATA = "no data"


@dataclass(frozen=True)
class Metric:
    """One statistic looked up by name (and factor/probe/count key) in a summary.

    ``label`` is how checks and ``results.json`` name it (``rho[pitch]``); ``threshold`` the
    name of the threshold that gates it by default (``None``: the check must name one);
    ``reason`` says why ``value`` is ``None`` (empty when measured).
    """

    name: str
    key: str | None
    label: str
    value: float | None
    interval: Interval | None
    threshold: str | None
    status: Status
    reason: str = ""


@dataclass(frozen=True)
class EnvelopeCounts:
    """Margin envelopes of the generator pairs over every shared protocol (counts of pairs).

    ``strict``: pairs whose envelope excludes zero (order settled); ``sign_crossing``: pairs
    whose order flips with the protocol; ``tie_boundary``: envelopes that only touch zero.
    ``None`` when the evaluator was never measured. ``stable_winner``: the generator that
    beats every other at every protocol, or ``None``.
    """

    strict: int | None = None
    sign_crossing: int | None = None
    tie_boundary: int | None = None
    stable_winner: str | None = None


RegisteredInterval = Interval | None | Mapping[str, Interval | None]


def as_interval(value: object) -> Interval | None:
    """``[low, high]`` (or a pair) as an :class:`Interval`; ``None`` for anything else."""
    if value is None or isinstance(value, str | bytes | Mapping):
        return None
    ends = list(value)
    if len(ends) != 2:
        return None
    return Interval(finite_or_none(ends[0]), finite_or_none(ends[1]))


def as_floats(value: object) -> Mapping[str, float | None]:
    """A mapping key → finite float or ``None`` (read-only); empty for a non-mapping."""
    items = value.items() if isinstance(value, Mapping) else ()
    return MappingProxyType({str(k): finite_or_none(v) for k, v in items})


def as_counts(value: object) -> Mapping[str, int | None]:
    items = value.items() if isinstance(value, Mapping) else ()
    return MappingProxyType({str(k): count_or_none(v) for k, v in items})


def as_intervals(value: object) -> Mapping[str, Interval | None]:
    items = value.items() if isinstance(value, Mapping) else ()
    return MappingProxyType({str(k): as_interval(v) for k, v in items})


def _empty() -> Mapping[str, object]:
    return MappingProxyType({})


@dataclass(frozen=True)
class BlockSummary:
    """One factorial block of one evaluator (``summary.json#/evaluators/<id>/blocks/<block>``).

    ``interaction_share``: the non-additive fraction of the block's pooled within-scene
    protocol sum of squares (η², 0 when the block moves no score), with its 95 % bootstrap
    interval; ``main_share`` per factor likewise; ``rho_interaction``: the interaction's
    variance over the generator signal (a ratio, like ρ); ``sign_crossings``: generator pairs
    whose margin envelope over the block's cells crosses zero (``new_sign_crossings``: of
    those, the pairs strictly ordered over the OFAT protocols); ``winner_count``: distinct
    unique winners over the cells; ``additivity_rmse``: RMS of observed − OFAT-additive cell
    means, score units.
    """

    factors: tuple[str, ...] = ()
    interaction_share: float | None = None
    interaction_share_ci: Interval | None = None
    main_share: Mapping[str, float | None] = field(default_factory=_empty)
    rho_interaction: float | None = None
    sign_crossings: int | None = None
    new_sign_crossings: int | None = None
    winner_count: int | None = None
    additivity_rmse: float | None = None
    levels: tuple[tuple[str, ...], ...] = ()
    main_share_ci: Mapping[str, Interval | None] = field(default_factory=_empty)
    rho_interaction_ci: Interval | None = None
    rho_block: float | None = None
    strict: int | None = None
    max_additivity_error: float | None = None
    n_scenes: int | None = None

    @classmethod
    def from_entry(cls, entry: Mapping[str, object]) -> BlockSummary:
        return cls(
            factors=tuple(str(f) for f in entry.get("factors") or ()),
            interaction_share=finite_or_none(entry.get("interaction_share")),
            interaction_share_ci=as_interval(entry.get("interaction_share_ci")),
            main_share=as_floats(entry.get("main_share")),
            rho_interaction=finite_or_none(entry.get("rho_interaction")),
            sign_crossings=count_or_none(entry.get("sign_crossings")),
            new_sign_crossings=count_or_none(entry.get("new_sign_crossings")),
            winner_count=count_or_none(entry.get("winner_count")),
            additivity_rmse=finite_or_none(entry.get("additivity_rmse")),
            levels=tuple(tuple(str(lv) for lv in levels) for levels in entry.get("levels") or ()),
            main_share_ci=as_intervals(entry.get("main_share_ci")),
            rho_interaction_ci=as_interval(entry.get("rho_interaction_ci")),
            rho_block=finite_or_none(entry.get("rho_block")),
            strict=count_or_none(entry.get("strict")),
            max_additivity_error=finite_or_none(entry.get("max_additivity_error")),
            n_scenes=count_or_none(entry.get("n_scenes")),
        )

    def to_entry(self) -> dict[str, object]:
        """The ``summary.json`` block entry (docs/formats.md): the inverse of :meth:`from_entry`."""
        return {
            "factors": list(self.factors),
            "levels": [list(lv) for lv in self.levels],
            "main_share": dict(self.main_share),
            "main_share_ci": {f: _pair(ci) for f, ci in self.main_share_ci.items()},
            "interaction_share": self.interaction_share,
            "interaction_share_ci": _pair(self.interaction_share_ci),
            "rho_interaction": self.rho_interaction,
            "rho_interaction_ci": _pair(self.rho_interaction_ci),
            "rho_block": self.rho_block,
            "sign_crossings": self.sign_crossings,
            "strict": self.strict,
            "new_sign_crossings": self.new_sign_crossings,
            "winner_count": self.winner_count,
            "additivity_rmse": self.additivity_rmse,
            "max_additivity_error": self.max_additivity_error,
            "n_scenes": self.n_scenes,
        }


def _pair(ci: Interval | None) -> list[float | None] | None:
    return None if ci is None else [ci.low, ci.high]


def as_registered(value: object) -> Mapping[str, RegisteredValue]:
    out: dict[str, RegisteredValue] = {}
    for name, v in (value.items() if isinstance(value, Mapping) else ()):
        out[str(name)] = as_floats(v) if isinstance(v, Mapping) else finite_or_none(v)
    return MappingProxyType(out)


def as_registered_intervals(value: object) -> Mapping[str, RegisteredInterval]:
    """name → ``[lo, hi]`` (a scalar statistic) or key → ``[lo, hi]`` (a keyed one) as
    :class:`Interval` values (read-only)."""
    out: dict[str, RegisteredInterval] = {}
    for name, v in (value.items() if isinstance(value, Mapping) else ()):
        out[str(name)] = as_intervals(v) if isinstance(v, Mapping) else as_interval(v)
    return MappingProxyType(out)


def _keys(spec: MetricSpec) -> tuple[str, ...] | None:
    """The vocabulary of keys of a metric (``None`` for a scalar; ``()``: any well-formed key,
    as block ids, or whatever a registered keyed statistic measured)."""
    kind = spec.key
    if kind is None:
        return None
    if kind == "factor":
        return factor_names()
    if kind == "shared factor":
        return shared_factor_names()
    if kind == "probe":
        return probe_names()
    if kind == "envelope count":
        return ENVELOPE_COUNTS
    if kind == "reversal count":
        return REVERSAL_COUNTS
    return ()


def threshold_of(spec: MetricSpec, key: str | None) -> str | None:
    """The threshold gating ``spec`` (at ``key``) by default: the key's own (a probe's from the
    probe registry), else the metric's; ``None`` when nothing gates it by default."""
    if key is not None and key in spec.key_thresholds:
        return spec.key_thresholds[key]
    if spec.key_thresholds:
        return None  # keyed gates only: an ungated key (tie_boundary) has none
    if spec.key == "probe":
        return probe_threshold(key) if key is not None else None
    return spec.threshold


def _spec(registry: object, name: str, key: str | None, where: str) -> MetricSpec:
    """The spec of ``name``; a :class:`MetricError` for an unknown name or a misplaced key."""
    if name not in registry:
        close = closest(name, registry.names())
        raise MetricError(
            f"unknown metric {name!r}" + (f" (did you mean {close}?)" if close else ""),
            where=where,
            hint=f"metrics: {', '.join(registry.names())}",
        )
    spec = registry.get(name)
    if "summary" not in spec.places and spec.compute is None:
        raise MetricError(
            f"metric {name!r} is not a statistic of the evaluator summary", where=where,
            hint="human agreement is checked through the audit_human_agreement fixture",
        )
    keys = _keys(spec)
    if keys is None and key is not None:
        raise MetricError(f"metric {name!r} takes no key, got {key!r}", where=where)
    if keys is not None and key is None:
        raise MetricError(f"metric {name!r} needs a {spec.key}", where=where, hint=", ".join(keys))
    return spec


def _lookup(spec: MetricSpec, name: str, key: str, values: Mapping[str, object], where: str) -> tuple[bool, object]:
    """``(present, value)`` of a keyed metric; an unknown key (a typo) is a MetricError."""
    if key in values:
        return True, values[key]
    known = _keys(spec) or ()
    if key not in known and (known or spec.compute is None):
        close = closest(key, known)
        raise MetricError(
            f"{name} has no {spec.key} {key!r}" + (f" (did you mean {close}?)" if close else ""),
            where=where,
            hint=f"{spec.key}s: {', '.join(known)}",
        )
    return False, None


def metric_kind(name: str) -> str:
    """What the key of metric ``name`` is: ``factor``, ``shared factor``, ``probe``, ``block``,
    ... (``""`` for an unknown name or one without keys)."""
    return (METRICS.get(name).key or "") if name in METRICS else ""


def _metric(
    spec: MetricSpec,
    name: str,
    key: str | None,
    present: bool,
    raw: object,
    interval: Interval | None,
    threshold: str | None,
    no_data: str,
) -> Metric:
    label = spec.label_of(key)
    value = finite_or_none(raw)
    if not present:
        status, reason = Status.NOT_IN_PROFILE, f"{label} is not measured in this run: its profile has no {spec.key} {key}"
    elif value is None:
        status, reason = Status.NO_DATA, no_data
    else:
        status, reason = Status.MEASURED, ""
    return Metric(name, key, label, value, interval, threshold, status, reason)


@dataclass(frozen=True)
class EvaluatorSummary:
    """Every statistic of one evaluator in one run (the ``audit_summary`` fixture).

    Per-factor and per-probe mappings hold only what this run's profile measured; a value
    is ``None`` where it was measured but is undefined (NaN: e.g. every record failed).
    Intervals are pointwise 95 % prompt-bootstrap percentile intervals (``None`` where the
    bootstrap was off or the entry carries none, e.g. an entry read from ``summary.json``).
    """

    evaluator: str
    rho: Mapping[str, float | None] = field(default_factory=_empty)
    """ρ(f) per factor: configuration variance over generator variance, a ratio (> 1: the
    protocol moves scores more than the generator does)."""
    dispersion: Mapping[str, float | None] = field(default_factory=_empty)
    """D(f) per factor: mean over scenes of the normalised score range, a fraction (0.05 = 5 %)."""
    kendall_w: Mapping[str, float | None] = field(default_factory=_empty)
    """Kendall's W per shared factor, levels as raters of the generators, in [0, 1]."""
    top1_count: Mapping[str, int | None] = field(default_factory=_empty)
    """Distinct unique winners across the levels of each shared factor, a count."""
    discrimination: Mapping[str, float | None] = field(default_factory=_empty)
    """Tie-adjusted directional discrimination per content probe, a fraction (chance 0.5)."""
    peak_rho: float | None = None
    """max over factors of ρ, a ratio."""
    peak_rho_ci: Interval | None = None
    """95 % bootstrap interval of ``peak_rho``."""
    template_rho: float | None = None
    """ρ of the template factor, a ratio."""
    min_w: float | None = None
    """Smallest Kendall's W over the shared factors."""
    max_top1: int | None = None
    """Largest ``top1_count`` over the shared factors."""
    best_view_inflation: float | None = None
    """Median over scenes of the best pose's score over the default view's, a ratio (≥ 1)."""
    content_accuracy: float | None = None
    """Mean discrimination over the probes, a fraction."""
    envelopes: EnvelopeCounts = EnvelopeCounts()
    """Margin envelope counts of the generator pairs (see :class:`EnvelopeCounts`)."""
    logo_peak_rho_range: Interval | None = None
    """[min, max] of ``peak_rho`` leaving one generator out, ratios."""
    failed: int = 0
    """Records with status ``failed``, a count."""
    failed_share: float | None = None
    """``failed`` over all the evaluator's records, a fraction (``None``: no records)."""
    intervals: Mapping[str, Mapping[str, Interval | None]] = field(default_factory=_empty)
    """Bootstrap intervals of ``rho``, ``dispersion`` (per factor), ``discrimination`` (per probe)."""
    blocks: Mapping[str, BlockSummary] = field(default_factory=_empty)
    """Per factorial block id (``lighting:pitch``): :class:`BlockSummary`; empty without blocks."""
    registered: Mapping[str, RegisteredValue] = field(default_factory=_empty)
    """Statistics registered with a ``compute`` (:func:`harness.vocab.metrics.register_metric`):
    name → value (a mapping key → value for a keyed one); empty when none is registered."""
    registered_intervals: Mapping[str, RegisteredInterval] = field(default_factory=_empty)
    """The 95 % bootstrap intervals of the ``registered`` statistics, from the metric engine's
    draws (:mod:`harness.stats.engine`): name → interval, or key → interval for a keyed one;
    serialised beside ``rho``'s under ``intervals``."""
    confirmation: FamilyConfirmation | None = None
    """The confirmed tier's intervals of the gated interval estimates, read at one family-wise
    level (:mod:`harness.stats.confirmation`); ``None`` when the bootstrap is off."""

    def __repr__(self) -> str:
        # short: pytest prints fixture values in a traceback, and the full field dump runs
        # to screens of mappingproxy reprs
        return f"EvaluatorSummary(evaluator={self.evaluator!r}, peak_rho={self.peak_rho!r}, ...)"

    @classmethod
    def from_entry(cls, evaluator: str, entry: Mapping[str, object]) -> EvaluatorSummary:
        """Build from the evaluator's summary entry (``summary.json#/evaluators/<id>``, the cached summary)."""
        envelopes = entry.get(m.ENVELOPES) or {}
        winner = envelopes.get("stable_winner")
        intervals = entry.get("intervals") or {}
        return cls(
            evaluator=evaluator,
            rho=as_floats(entry.get(m.RHO)),
            dispersion=as_floats(entry.get(m.DISPERSION)),
            kendall_w=as_floats(entry.get(m.KENDALL_W)),
            top1_count=as_counts(entry.get(m.TOP1_COUNT)),
            discrimination=as_floats(entry.get(m.DISCRIMINATION)),
            peak_rho=finite_or_none(entry.get(m.PEAK_RHO)),
            peak_rho_ci=as_interval(entry.get("peak_rho_ci")),
            template_rho=finite_or_none(entry.get(m.TEMPLATE_RHO)),
            min_w=finite_or_none(entry.get(m.MIN_W)),
            max_top1=count_or_none(entry.get(m.MAX_TOP1)),
            best_view_inflation=finite_or_none(entry.get(m.BEST_VIEW_INFLATION)),
            content_accuracy=finite_or_none(entry.get(m.CONTENT_ACCURACY)),
            envelopes=EnvelopeCounts(
                strict=count_or_none(envelopes.get("strict")),
                sign_crossing=count_or_none(envelopes.get("sign_crossing")),
                tie_boundary=count_or_none(envelopes.get("tie_boundary")),
                stable_winner=None if winner is None else str(winner),
            ),
            logo_peak_rho_range=as_interval(entry.get("logo_peak_rho_range")),
            failed=count_or_none(entry.get("failed")) or 0,
            failed_share=finite_or_none(entry.get(m.FAILED_SHARE)),
            intervals=MappingProxyType(
                {name: as_intervals(intervals.get(name)) for name in INTERVAL_METRICS}
                if isinstance(entry.get("intervals"), Mapping) else {}
            ),
            blocks=MappingProxyType(
                {
                    str(b): BlockSummary.from_entry(e)
                    for b, e in (entry.get("blocks") or {}).items()
                    if isinstance(e, Mapping)
                }
            ),
            registered=as_registered(entry.get(REGISTERED)),
            registered_intervals=as_registered_intervals(
                {k: v for k, v in intervals.items() if k not in INTERVAL_METRICS}
                if isinstance(intervals, Mapping) else {}
            ),
            confirmation=FamilyConfirmation.from_entry(entry.get("confirmation")),
        )

    def to_entry(self) -> dict[str, object]:
        """The evaluator's ``summary.json`` entry (docs/formats.md "summary.json"), key for key
        and in order: the inverse of :meth:`from_entry`. ``blocks``, ``registered``,
        ``intervals`` and ``confirmation`` appear only when the summary has them."""
        env = self.envelopes
        entry: dict[str, object] = {
            m.DISPERSION: dict(self.dispersion),
            m.RHO: dict(self.rho),
            m.TEMPLATE_RHO: self.template_rho,
            m.PEAK_RHO: self.peak_rho,
            "peak_rho_ci": _pair(self.peak_rho_ci),
            m.KENDALL_W: dict(self.kendall_w),
            m.TOP1_COUNT: dict(self.top1_count),
            m.MIN_W: self.min_w,
            m.MAX_TOP1: self.max_top1,
            m.BEST_VIEW_INFLATION: self.best_view_inflation,
            m.DISCRIMINATION: dict(self.discrimination),
            m.CONTENT_ACCURACY: self.content_accuracy,
            m.ENVELOPES: {
                "strict": env.strict,
                "sign_crossing": env.sign_crossing,
                "tie_boundary": env.tie_boundary,
                "stable_winner": env.stable_winner,
            },
            "logo_peak_rho_range": _pair(self.logo_peak_rho_range),
            "failed": self.failed,
            m.FAILED_SHARE: self.failed_share,
        }
        if self.blocks:
            entry["blocks"] = {b: st.to_entry() for b, st in self.blocks.items()}
        if self.registered:
            entry[REGISTERED] = {
                k: dict(v) if isinstance(v, Mapping) else v for k, v in self.registered.items()
            }
        if self.intervals or self.registered_intervals:
            entry["intervals"] = {
                name: {k: _pair(ci) for k, ci in values.items()} for name, values in self.intervals.items()
            } | {
                name: {k: _pair(ci) for k, ci in v.items()} if isinstance(v, Mapping) else _pair(v)
                for name, v in self.registered_intervals.items()
            }
        if self.confirmation is not None:
            entry["confirmation"] = self.confirmation.to_entry()
        return entry

    def interval(self, name: str, key: str | None = None) -> Interval | None:
        """The 95 % interval of a metric (``interval("rho", "pitch")``), ``None`` when it has none."""
        spec = _spec(METRICS, name, key, self.evaluator)
        if spec.compute is not None:
            found = self.registered_intervals.get(name)
            if key is None:
                return None if isinstance(found, Mapping) else found
            return found.get(str(key)) if isinstance(found, Mapping) else None
        if name == m.PEAK_RHO:
            return self.peak_rho_ci
        if name == m.INTERACTION_SHARE:
            block = self.blocks.get(str(key))
            return None if block is None else block.interaction_share_ci
        if spec.key is None or name not in self.intervals:
            return None
        return self.intervals[name].get(str(key))

    def no_data_reason(self) -> str:
        """Why a measured statistic of this evaluator can be undefined (for failure messages)."""
        if self.failed_share == 1.0:
            return f"no successful records: all {self.failed} measurements failed"
        if self.failed:
            return f"undefined on this run's records ({self.failed} failed)"
        return "undefined on this run's records"

    def metric(self, name: str, key: str | None = None) -> Metric:
        """Look up a gated statistic: ``metric("rho", "pitch")``, ``metric("peak_rho")``,
        ``metric("envelopes", "strict")``, a registered statistic by its name. Raises
        :class:`MetricError` for an unknown metric, or for a factor/probe that no profile has
        (a typo must not become a skip)."""
        spec = _spec(METRICS, name, key, self.evaluator)
        if spec.compute is not None:
            present, raw = self._registered_value(spec, key)
        elif spec.key == "block":
            present, raw = self._block_value(name, str(key))
        elif spec.summary_path[:1] == (m.ENVELOPES,):
            present, raw = True, getattr(self.envelopes, spec.summary_path[1])
        elif spec.key is None:
            present, raw = True, getattr(self, name)
        elif name == m.ENVELOPES:
            counts = {k: getattr(self.envelopes, k) for k in ENVELOPE_COUNTS}
            present, raw = _lookup(spec, name, str(key), counts, self.evaluator)
        else:
            present, raw = _lookup(spec, name, str(key), getattr(self, name), self.evaluator)
        return _metric(
            spec, name, key, present, raw, self.interval(name, key), threshold_of(spec, key),
            self.no_data_reason(),
        )

    def _registered_value(self, spec: MetricSpec, key: str | None) -> tuple[bool, object]:
        """``(present, value)`` of a registered statistic: absent when this run's summary was
        computed without it (registered after, or read from an older summary.json)."""
        if spec.name not in self.registered:
            return False, None
        value = self.registered[spec.name]
        if key is None:
            return True, value
        if not isinstance(value, Mapping):
            return False, None
        return _lookup(spec, spec.name, str(key), value, self.evaluator)

    def _block_value(self, name: str, key: str) -> tuple[bool, object]:
        """``(present, value)`` of a block metric; a malformed block id is a MetricError."""
        from harness.protocol.levels import parse_block_id

        try:
            parse_block_id(key)
        except AuditError as exc:
            raise MetricError(f"{name} has no block {key!r}: {exc.what}", where=self.evaluator,
                              hint=exc.hint) from None
        block = self.blocks.get(key)
        if block is None:
            return False, None
        return True, block.interaction_share if name == m.INTERACTION_SHARE else block.sign_crossings


@dataclass(frozen=True)
class Reversals:
    """Winner reversals over every (evaluator, shared factor), counts: ``descriptive`` (distinct
    unique winners), ``pointwise`` (pair intervals exclude zero) and ``simultaneous``
    (confirmed by the simultaneous band: the gated count)."""

    descriptive: int | None = None
    pointwise: int | None = None
    simultaneous: int | None = None


@dataclass(frozen=True)
class Band:
    """The simultaneous band: its 95 % max-|t| quantile (``None``: bootstrap off), the number
    of contrasts it covers, bootstrap replicates B and seed."""

    q95: float | None = None
    contrasts: int = 0
    bootstrap: int = 0
    seed: int = 0


@dataclass(frozen=True)
class PanelSummary:
    """The summary over every selected evaluator (the ``audit_panel_summary`` fixture)."""

    evaluators: Mapping[str, EvaluatorSummary] = field(default_factory=_empty)
    reversals: Reversals = Reversals()
    band: Band = Band()

    def __repr__(self) -> str:
        return f"PanelSummary(evaluators={sorted(self.evaluators)!r}, ...)"

    @classmethod
    def from_summary(cls, summary: Mapping[str, object]) -> PanelSummary:
        """Build from the full summary (the contents of ``summary.json``)."""
        reversals = summary.get("reversals") or {}
        band = summary.get("simultaneous") or {}
        return cls(
            evaluators=MappingProxyType(
                {
                    str(name): EvaluatorSummary.from_entry(str(name), entry)
                    for name, entry in (summary.get("evaluators") or {}).items()
                }
            ),
            reversals=Reversals(*(count_or_none(reversals.get(k)) for k in REVERSAL_COUNTS)),
            band=Band(
                q95=finite_or_none(band.get("q95")),
                contrasts=count_or_none(band.get("contrasts")) or 0,
                bootstrap=count_or_none(band.get("B")) or 0,
                seed=count_or_none(band.get("seed")) or 0,
            ),
        )

    def to_summary(self) -> dict[str, object]:
        """The ``summary.json`` document (docs/formats.md): the inverse of :meth:`from_summary`."""
        return {
            "evaluators": {name: ev.to_entry() for name, ev in self.evaluators.items()},
            "simultaneous": {
                "q95": self.band.q95,
                "contrasts": self.band.contrasts,
                "B": self.band.bootstrap,
                "seed": self.band.seed,
            },
            "reversals": {k: getattr(self.reversals, k) for k in REVERSAL_COUNTS},
        }

    def metric(self, name: str, key: str | None = None) -> Metric:
        """Look up a panel statistic: ``metric("reversals", "simultaneous")``."""
        spec = _spec(PANEL_METRICS, name, key, "panel")
        counts = {k: getattr(self.reversals, k) for k in REVERSAL_COUNTS}
        present, raw = _lookup(spec, name, str(key), counts, "panel")
        return _metric(
            spec, name, key, present, raw, None, threshold_of(spec, key),
            "undefined on this run's records",
        )
