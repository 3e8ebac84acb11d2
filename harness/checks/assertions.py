"""Assertion helpers for audit tests: compare an estimate with a threshold and say why it failed.

A failing check raises ``AssertionError`` whose one-line message reads the check as a rule:
the metric, the evaluator, the estimate, its interval when known (flagged when it comes from
fewer than 10 prompt blocks), the threshold (value and name), the result and the card id, e.g.::

    peak ρ of clip-vit-b32 1.42 (95% CI [1.05, 2.10]), must be ≤ 1.00 (peak_rho_max): fails [card ecc-v1-sha256:3f...]

The helpers hide their own frames (``__tracebackhide__``) so pytest shows the test's line.
A missing estimate (NaN/None) fails: "not measured" is never a pass. Each check returns the
outcome as a JSON-ready dict; :class:`AuditCheck` also hands it to a recorder (the plugin
attaches it to the test report so the xdist controller can aggregate it).

:meth:`AuditCheck.metric` checks a statistic of a typed summary (``harness.stats.summary``)
by name, with its interval and default threshold, under one rule for missing data:

- a metric this run's profile does not measure (an absent factor or probe): skipped, with why;
- a known threshold that is not declared for the evaluator: skipped, with why;
- a threshold name neither known nor declared custom, or an unknown metric: fails (a typo);
- a measured metric that is undefined (NaN/None, e.g. every record failed): fails, with why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, NoReturn

from harness.checks.evidence import DEFAULT_EVIDENCE, check_evidence, confirmed_level, gated_pass
from harness.core.numbers import finite_or_none

if TYPE_CHECKING:
    from harness.stats.confirmation import FamilyConfirmation
    from harness.stats.summary import EvaluatorSummary, PanelSummary

Outcome = dict[str, object]


class Bound(StrEnum):
    """What a check compares with the threshold: the point estimate, or one end of its
    95 % bootstrap interval (``LOWER``: "even the lower bound exceeds the limit")."""

    ESTIMATE = "estimate"
    LOWER = "lower"
    UPPER = "upper"


class CheckSkipped(Exception):
    """A check that cannot gate (undeclared threshold, metric not in the profile), outside pytest."""


def _bound(bound: Bound | str) -> Bound:
    """``bound`` as a :class:`Bound`."""
    try:
        return Bound(bound)
    except ValueError:
        raise ValueError(f"bound must be one of {', '.join(b.value for b in Bound)}, got {bound!r}") from None


def _interval(interval: Sequence[object] | None) -> list[float | None] | None:
    if interval is None or isinstance(interval, str):
        return None
    values = list(interval)
    if len(values) != 2:
        return None
    return [finite_or_none(values[0]), finite_or_none(values[1])]


def check(
    metric: str,
    estimate: object,
    op: str,
    threshold: float,
    *,
    threshold_name: str = "",
    interval: Sequence[object] | None = None,
    evaluator: str = "",
    card_id: str = "",
    bound: Bound | str = Bound.ESTIMATE,
) -> Outcome:
    """Evaluate ``estimate <op> threshold`` (``op`` is ``"<="`` or ``">="``) without raising.

    ``bound=Bound.LOWER`` / ``Bound.UPPER`` tests that end of ``interval`` instead of the
    estimate (e.g. "the bootstrap lower bound of peak rho stays at or below 1"). The outcome
    records it under ``"compare"`` (``"estimate"``, ``"lower"``, ``"upper"``).
    """
    if op not in ("<=", ">="):
        raise ValueError(f"op must be '<=' or '>=', got {op!r}")
    which = _bound(bound)
    est = finite_or_none(estimate)
    ci = _interval(interval)
    tested = est
    if which is not Bound.ESTIMATE:
        tested = None if ci is None else ci[0 if which is Bound.LOWER else 1]
    passed = tested is not None and (tested <= threshold if op == "<=" else tested >= threshold)
    return {
        "metric": metric,
        "evaluator": evaluator,
        "estimate": est,
        "interval": ci,
        "compare": which.value,
        "tested": tested,
        "op": op,
        "threshold_name": threshold_name or metric,
        "threshold": float(threshold),
        "passed": bool(passed),
        "card_id": card_id,
    }


def message(outcome: Outcome) -> str:
    """The readable failure message of an outcome: one line, the check as a rule and its result,
    then the card (``harness.checks.wording``)."""
    from harness.checks.wording import rule_with_card

    return rule_with_card(outcome)


def _require(outcome: Outcome) -> Outcome:
    """``outcome`` if it passed, else an AssertionError carrying its :func:`message`."""
    __tracebackhide__ = True
    if not outcome["passed"]:
        raise AssertionError(message(outcome))
    return outcome


def assert_at_most(metric: str, estimate: object, threshold: float, **kw: object) -> Outcome:
    """Fail unless ``estimate <= threshold`` (see :func:`check` for keywords)."""
    __tracebackhide__ = True
    return _require(check(metric, estimate, "<=", threshold, **kw))


def assert_at_least(metric: str, estimate: object, threshold: float, **kw: object) -> Outcome:
    """Fail unless ``estimate >= threshold`` (see :func:`check` for keywords)."""
    __tracebackhide__ = True
    return _require(check(metric, estimate, ">=", threshold, **kw))


class AuditCheck:
    """Threshold checks bound to one evaluator, its thresholds and card (the ``audit_check`` fixture).

    ``thresholds`` maps names (``peak_rho_max``, ...) to values; the direction comes from
    :mod:`harness.checks.thresholds`. Every outcome goes to ``record`` before the assertion.
    """

    def __init__(
        self,
        *,
        evaluator: str,
        thresholds: dict[str, float],
        card_id: Callable[[], str] | str = "",
        record: Callable[[Outcome], None] | None = None,
        skip: Callable[[str], object] | None = None,
        declared: Callable[[str], bool] | None = None,
        no_data: Callable[[], str | None] | None = None,
        blocks: Callable[[], int | None] | None = None,
        absent: Callable[[str, str | None], str] | None = None,
        evidence: str = DEFAULT_EVIDENCE,
    ):
        self.evaluator = evaluator
        self._declared = declared
        self._no_data = no_data
        self.thresholds = thresholds
        self._card_id = card_id
        self._record = record
        self._skip = skip
        self._blocks = blocks
        self._absent = absent  # (metric name, key) -> why this run does not measure it
        self.evidence = check_evidence(evidence, "evidence")  # which level gates (harness.checks.evidence)

    @property
    def card_id(self) -> str:
        return self._card_id() if callable(self._card_id) else self._card_id

    def threshold(self, name: str) -> float | None:
        """The threshold value, or ``None`` when it is not declared for this evaluator."""
        return self.thresholds.get(name)

    def __call__(
        self,
        metric: str,
        estimate: object,
        threshold_name: str,
        *,
        interval: Sequence[object] | None = None,
        bound: Bound | str = Bound.ESTIMATE,
        interval_kind: str | None = None,
    ) -> Outcome:
        """Check a value of your own (``metric`` names it) against the named threshold in its
        declared direction; for a statistic of the summary prefer :meth:`metric`.

        A known threshold that is not set skips the test (through ``skip``) rather than passing
        it; a name that is neither known nor declared custom fails it (a typo in a test file
        must not turn a check into a skip). ``bound``: see :func:`check`. ``interval_kind``
        names an interval that is not a prompt bootstrap (e.g. ``"Wilson interval over 64
        Sobol points"``): the outcome records it and reads so, without the prompt-block note.
        """
        __tracebackhide__ = True
        which = _bound(bound)
        value = self._threshold_value(threshold_name)
        reason = None
        if finite_or_none(estimate) is None and self._no_data is not None:
            reason = self._no_data()
        return self._gate(metric, estimate, interval, threshold_name, value, which, reason, interval_kind)

    def metric(
        self,
        summary: EvaluatorSummary | PanelSummary,
        name: str,
        key: str | None = None,
        *,
        threshold: str | None = None,
        bound: Bound | str = Bound.ESTIMATE,
    ) -> Outcome:
        """Check the statistic ``name`` (per ``key``: a factor, probe or count) of ``summary``.

        ``audit_check.metric(audit_summary, "rho", "pitch")`` checks ``rho[pitch]`` and its
        interval against ``peak_rho_max``; ``threshold`` names another (a custom one) and is
        required for metrics no known threshold gates (``dispersion``). Missing data follows
        the one rule of this module's docstring.
        """
        __tracebackhide__ = True
        from harness.stats.summary import MetricError, Status

        which = _bound(bound)
        try:
            found = summary.metric(name, key)
        except MetricError as exc:
            raise AssertionError(f"audit check of {self.evaluator}: {exc}") from None
        threshold_name = threshold or found.threshold
        if threshold_name is None:
            raise AssertionError(
                f"{found.label} has no default threshold: name one, "
                f"e.g. metric(..., threshold='max_{name}') declared under [tool.t3d-audit.thresholds.custom]"
            )
        value = self._threshold_value(threshold_name)
        if found.status is Status.NOT_IN_PROFILE:
            self._skip_with(self._absent(name, key) if self._absent is not None else found.reason)
        reason = found.reason or None
        if found.status is Status.MEASURED and which is not Bound.ESTIMATE:
            reason = "the bootstrap is off or undefined for it"
        elif reason is None and self._no_data is not None:
            reason = self._no_data()
        confirmation = getattr(summary, "confirmation", None)  # an evaluator's; a panel has none
        return self._gate(found.label, found.value, found.interval, threshold_name, value, which, reason,
                          confirmed_of=(confirmation, name, key))  # fmt: skip

    def _threshold_value(self, name: str) -> float:
        """The threshold's value; fails for an unknown name, skips for an undeclared known one."""
        __tracebackhide__ = True
        from harness.vocab.registry_type import closest

        value = self.thresholds.get(name)
        if value is None and self._declared is not None and not self._declared(name):
            close = closest(name, self.thresholds)
            raise AssertionError(
                f"unknown threshold {name!r} in an audit check of {self.evaluator}"
                + (f" (did you mean {close}?)" if close else "")
                + "; declare custom thresholds under [tool.t3d-audit.thresholds.custom]"
            )
        if value is None:
            self._skip_with(f"no threshold {name} declared for {self.evaluator}")
        return value

    def _skip_with(self, reason: str) -> NoReturn:
        if self._skip is not None:
            self._skip(reason)
        raise CheckSkipped(reason)

    def _gate(
        self,
        label: str,
        estimate: object,
        interval: Sequence[object] | None,
        threshold_name: str,
        value: float,
        bound: Bound,
        reason: str | None,
        interval_kind: str | None = None,
        confirmed_of: tuple[FamilyConfirmation | None, str, str | None] | None = None,
    ) -> Outcome:
        """Check, attach ``reason`` when nothing could be tested, record, then assert. A check
        on an end of a prompt-bootstrap interval over fewer prompt blocks than the interval
        policy's minimum is skipped, "not confirmable" (docs/intervals.md): such a bound
        confirms nothing at the nominal level."""
        __tracebackhide__ = True
        from harness.checks.thresholds import direction

        if bound is not Bound.ESTIMATE and interval_kind is None and self._blocks is not None:
            from harness.stats.intervals import DEFAULT_POLICY

            blocks = self._blocks()
            why = DEFAULT_POLICY.not_confirmable(blocks) if isinstance(blocks, int) else ""
            if why:
                self._skip_with(f"{why}: the {bound.value} bound of an interval over so few prompts confirms nothing")

        op = "<=" if direction(threshold_name) == "max" else ">="
        outcome = check(
            label,
            estimate,
            op,
            value,
            threshold_name=threshold_name,
            interval=interval,
            evaluator=self.evaluator,
            card_id=self.card_id,
            bound=bound,
        )
        if outcome["tested"] is None and reason:
            outcome["reason"] = reason
        confirmation, name, key = confirmed_of or (None, None, None)
        confirmed = confirmed_level(op, value, confirmation, name, key)
        outcome["descriptive"] = "holds" if outcome["passed"] else "fails"
        outcome["confirmed"] = confirmed
        outcome["evidence"] = self.evidence
        if outcome["tested"] is not None:  # not measured fails under either evidence
            outcome["passed"] = gated_pass(self.evidence, bool(outcome["passed"]), confirmed)
        if interval_kind:  # not a prompt bootstrap: no prompt-block count
            outcome["interval_kind"] = interval_kind
        elif outcome["interval"] is not None and self._blocks is not None:
            outcome["blocks"] = self._blocks()  # prompt blocks the bootstrap resampled
        if self._record is not None:
            self._record(outcome)
        return _require(outcome)
