"""Assertion helpers for audit tests: compare an estimate with a threshold and say why it failed.

A failing check raises ``AssertionError`` whose message gives the metric, the evaluator, the
estimate, its interval when known, the threshold (name and value) and the card id, e.g.::

    peak_rho of clip-vit-b32 = 1.42 (95% CI [1.05, 2.1]) exceeds peak_rho_max = 1
    [card ecc-v1-sha256:3f...]

The helpers hide their own frames (``__tracebackhide__``) so pytest shows the test's line.
A missing estimate (NaN/None) fails: "not measured" is never a pass. Each check returns the
outcome as a JSON-ready dict; :class:`AuditCheck` also hands it to a recorder (the plugin
attaches it to the test report so the xdist controller can aggregate it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

Outcome = dict[str, Any]


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _interval(interval: Sequence[Any] | None) -> list[float | None] | None:
    if interval is None or isinstance(interval, str):
        return None
    values = list(interval)
    if len(values) != 2:
        return None
    return [_finite(values[0]), _finite(values[1])]


def check(
    metric: str,
    estimate: Any,
    op: str,
    threshold: float,
    *,
    threshold_name: str = "",
    interval: Sequence[Any] | None = None,
    evaluator: str = "",
    card_id: str = "",
    compare: str = "estimate",
) -> Outcome:
    """Evaluate ``estimate <op> threshold`` (``op`` is ``"<="`` or ``">="``) without raising.

    ``compare="lower"`` / ``"upper"`` tests that end of ``interval`` instead of the estimate
    (e.g. "the bootstrap lower bound of peak rho stays at or below 1").
    """
    if op not in ("<=", ">="):
        raise ValueError(f"op must be '<=' or '>=', got {op!r}")
    est = _finite(estimate)
    ci = _interval(interval)
    tested = est
    if compare in ("lower", "upper"):
        tested = None if ci is None else ci[0 if compare == "lower" else 1]
    passed = tested is not None and (tested <= threshold if op == "<=" else tested >= threshold)
    return {
        "metric": metric,
        "evaluator": evaluator,
        "estimate": est,
        "interval": ci,
        "compare": compare,
        "tested": tested,
        "op": op,
        "threshold_name": threshold_name or metric,
        "threshold": float(threshold),
        "passed": bool(passed),
        "card_id": card_id,
    }


def message(outcome: Outcome) -> str:
    """The readable failure message of an outcome."""
    who = f" of {outcome['evaluator']}" if outcome["evaluator"] else ""
    ci = outcome["interval"]
    ci_text = f" (95% CI [{_fmt(ci[0])}, {_fmt(ci[1])}])" if ci is not None else " (no interval)"
    name = outcome["threshold_name"]
    card = f"\n[card {outcome['card_id']}]" if outcome["card_id"] else ""
    if outcome["tested"] is None:
        what = "bootstrap interval" if outcome["compare"] != "estimate" else "estimate"
        why = outcome.get("reason") or "not measured or all records failed"
        return (
            f"{outcome['metric']}{who}: {what} not available ({why})"
            f"{ci_text}; threshold {name} = {_fmt(outcome['threshold'])}{card}"
        )
    verb = "exceeds" if outcome["op"] == "<=" else "falls below"
    subject = {
        "estimate": "",
        "lower": " bootstrap lower bound",
        "upper": " bootstrap upper bound",
    }[outcome["compare"]]
    estimate = "" if outcome["compare"] == "estimate" else f" (estimate {_fmt(outcome['estimate'])})"
    return (
        f"{outcome['metric']}{who}{subject} = {_fmt(outcome['tested'])}{estimate}{ci_text} "
        f"{verb} {name} = {_fmt(outcome['threshold'])}{card}"
    )


def _require(outcome: Outcome) -> Outcome:
    """``outcome`` if it passed, else an AssertionError carrying its :func:`message`."""
    __tracebackhide__ = True
    if not outcome["passed"]:
        raise AssertionError(message(outcome))
    return outcome


def assert_at_most(metric: str, estimate: Any, threshold: float, **kw: Any) -> Outcome:
    """Fail unless ``estimate <= threshold`` (see :func:`check` for keywords)."""
    __tracebackhide__ = True
    return _require(check(metric, estimate, "<=", threshold, **kw))


def assert_at_least(metric: str, estimate: Any, threshold: float, **kw: Any) -> Outcome:
    """Fail unless ``estimate >= threshold`` (see :func:`check` for keywords)."""
    __tracebackhide__ = True
    return _require(check(metric, estimate, ">=", threshold, **kw))


class AuditCheck:
    """Threshold checks bound to one evaluator, its thresholds and card (the ``audit_check`` fixture).

    ``thresholds`` maps names (``peak_rho_max``, ...) to values; the direction comes from
    :mod:`harness.thresholds`. Every outcome goes to ``record`` before the assertion.
    """

    def __init__(
        self,
        *,
        evaluator: str,
        thresholds: dict[str, float],
        card_id: Callable[[], str] | str = "",
        record: Callable[[Outcome], None] | None = None,
        skip: Callable[[str], Any] | None = None,
        declared: Callable[[str], bool] | None = None,
        no_data: Callable[[], str | None] | None = None,
    ):
        self.evaluator = evaluator
        self._declared = declared
        self._no_data = no_data
        self.thresholds = thresholds
        self._card_id = card_id
        self._record = record
        self._skip = skip

    @property
    def card_id(self) -> str:
        return self._card_id() if callable(self._card_id) else self._card_id

    def threshold(self, name: str) -> float | None:
        """The threshold value, or ``None`` when it is not declared for this evaluator."""
        return self.thresholds.get(name)

    def __call__(
        self,
        metric: str,
        estimate: Any,
        threshold_name: str,
        *,
        interval: Sequence[Any] | None = None,
        compare: str = "estimate",
    ) -> Outcome:
        """Check ``estimate`` against the named threshold in its declared direction.

        A known threshold that is not set skips the test (through ``skip``) rather than passing
        it; a name that is neither known nor declared custom fails it (a typo in a test file
        must not turn a check into a skip).
        """
        __tracebackhide__ = True
        from harness.thresholds import closest_name, direction

        value = self.thresholds.get(threshold_name)
        if value is None and self._declared is not None and not self._declared(threshold_name):
            close = closest_name(threshold_name, self.thresholds)
            raise AssertionError(
                f"unknown threshold {threshold_name!r} in an audit check of {self.evaluator}"
                + (f" (did you mean {close}?)" if close else "")
                + "; declare custom thresholds under [tool.t3d-audit.thresholds.custom]"
            )
        if value is None:
            if self._skip is not None:
                self._skip(f"no threshold {threshold_name} declared for {self.evaluator}")
            raise KeyError(threshold_name)
        op = "<=" if direction(threshold_name) == "max" else ">="
        outcome = check(
            metric,
            estimate,
            op,
            value,
            threshold_name=threshold_name,
            interval=interval,
            evaluator=self.evaluator,
            card_id=self.card_id,
            compare=compare,
        )
        if outcome["tested"] is None and self._no_data is not None:
            reason = self._no_data()
            if reason:
                outcome["reason"] = reason
        if self._record is not None:
            self._record(outcome)
        return _require(outcome)
