"""Two evidence levels for every check, and which one gates.

*Descriptive*: the point estimate against the threshold, as the study reports it.
*Confirmed*: the check's interval at the evaluator's family-wise level
(:mod:`harness.stats.confirmation`) lies wholly beyond the threshold (``fails``) or wholly
within it (``holds``); straddling it is ``inconclusive``; below the minimum prompt blocks of
that level, or without an interval in the family, it is ``not confirmable`` with the reason.

``--audit-evidence`` (``t3d-audit audit --evidence``) chooses which level gates: under
``descriptive`` (the default) a check fails when its point estimate is beyond the threshold;
under ``confirmed`` a check with an interval in the family fails only when the confirmed level
says ``fails``, and a check without one (counts, W, a project's own value) still gates on its
point estimate. Both levels are recorded in every outcome either way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from harness.core.numbers import finite_or_none

if TYPE_CHECKING:
    from harness.stats.confirmation import FamilyConfirmation

Evidence = Literal["descriptive", "confirmed"]
EVIDENCE_LEVELS: tuple[str, ...] = ("descriptive", "confirmed")
DEFAULT_EVIDENCE: Evidence = "descriptive"

FAILS, HOLDS, INCONCLUSIVE, NOT_CONFIRMABLE = "fails", "holds", "inconclusive", "not confirmable"


def check_evidence(value: object, where: str = "--audit-evidence") -> Evidence:
    """``value`` as an :data:`Evidence`, or ``ValueError`` naming the choices."""
    if value not in EVIDENCE_LEVELS:
        raise ValueError(f"{where} must be one of {', '.join(EVIDENCE_LEVELS)}, got {value!r}")
    return "confirmed" if value == "confirmed" else "descriptive"


def confirmed_level(op: str, threshold: float, confirmation: FamilyConfirmation | None,
                    metric: str | None, key: str | None) -> dict[str, object]:  # fmt: skip
    """The confirmed level of one check: ``status`` (fails, holds, inconclusive, not
    confirmable), and where known the ``interval``, its ``level`` and the ``family`` size; a
    ``reason`` when not confirmable. ``op``: ``"<="`` or ``">="``."""
    found = None if confirmation is None or metric is None else confirmation.interval(metric, key)
    if found is None:
        return {"status": NOT_CONFIRMABLE, "reason": "no interval of this check in the confirmation family"}
    lo, hi = found
    out: dict[str, object] = {
        "interval": [finite_or_none(lo), finite_or_none(hi)],
        "level": confirmation.level, "family": confirmation.family,
    }  # fmt: skip
    if not confirmation.confirmable:
        return {"status": NOT_CONFIRMABLE, "reason": confirmation.reason, **out}
    # an end may be withheld (NaN): a statistic biased low with few prompts keeps only its lower
    # end, which can still confirm a failure of "<=" but never that it holds
    below, above = math.isfinite(lo), math.isfinite(hi)
    if op == "<=":
        status = FAILS if below and lo > threshold else HOLDS if above and hi <= threshold else INCONCLUSIVE
    else:
        status = FAILS if above and hi < threshold else HOLDS if below and lo >= threshold else INCONCLUSIVE
    return {"status": status, **out}


def gated_pass(evidence: str, descriptive_passed: bool, confirmed: dict[str, object]) -> bool:
    """Whether the check passes the gate under ``evidence``. On confirmed evidence a check
    with an interval in the family fails only when confirmed failing; one without (a count, W,
    a check of the project's own value) has nothing to confirm and gates on its point estimate."""
    if evidence == "confirmed" and "interval" in confirmed:
        return confirmed.get("status") != FAILS
    return descriptive_passed


def confirmed_words(confirmed: dict[str, object]) -> str:
    """The confirmed level in a few words, for a check's line (``confirmed: fails, 99.2 %
    interval of 13 [1.20, 3.40]``)."""
    status = str(confirmed.get("status", NOT_CONFIRMABLE))
    if status == NOT_CONFIRMABLE:
        return f"confirmed: {confirmed.get('reason') or status}"
    lo, hi = (confirmed.get("interval") or [None, None])[:2]
    level, family = confirmed.get("level"), confirmed.get("family")

    def num(v: object) -> str:
        return "-" if not isinstance(v, int | float) else f"{v:.3g}"

    return (f"confirmed: {status}, {100 * float(level):.1f} % interval of a family of {family} "
            f"[{num(lo)}, {num(hi)}]")  # fmt: skip


def evidence_summary(checks: Sequence[Mapping[str, object]]) -> str:
    """Both evidence levels over a run's check outcomes in one line: which level gated, how
    many checks fail on descriptive evidence and how many of those the confirmed level
    confirms, and how many checks the confirmed level cannot decide (with the first reason)."""
    gated = "/".join(sorted({str(c.get("evidence", DEFAULT_EVIDENCE)) for c in checks}))
    levels = [c.get("confirmed") if isinstance(c.get("confirmed"), Mapping) else {} for c in checks]
    failing = [lv for c, lv in zip(checks, levels, strict=True) if c.get("descriptive") == FAILS]
    confirmed = sum(lv.get("status") == FAILS for lv in failing)
    in_family = [lv for lv in levels if "interval" in lv]
    undecided = [lv for lv in in_family if lv.get("status") == NOT_CONFIRMABLE]
    why = f" ({undecided[0].get('reason')})" if undecided else ""
    return (f"evidence: {gated} gated the checks; {len(failing)} of {len(checks)} fail on descriptive evidence, "
            f"{confirmed} of them confirmed; {len(in_family)} checks have a confirmation interval"
            + (f", {len(undecided)} of them not confirmable{why}" if undecided else ""))


def check_outcomes(results: object) -> list[Mapping[str, object]]:
    """Every check outcome of a ``results.json`` ``results`` list (or the controller's result
    dicts), in order; anything malformed is left out."""
    if not isinstance(results, Sequence | Iterable) or isinstance(results, str | Mapping):
        return []
    return [c for r in results if isinstance(r, Mapping) for c in r.get("checks") or () if isinstance(c, Mapping)]


def undecided_checks(checks: Sequence[Mapping[str, object]]) -> int:
    """How many checks with an interval in the family the confirmed level could not decide."""
    return sum(isinstance(lv := c.get("confirmed"), Mapping) and "interval" in lv
               and lv.get("status") == NOT_CONFIRMABLE for c in checks)  # fmt: skip
