"""How a threshold check reads, everywhere a person sees it: as a rule and its result.

One wording for the failure message of an audit check, the terminal's one line per failing
check and the report's verdict, e.g.::

    ρ[pitch] of clip-vit-b32 2.44 (95% CI [1.05, 2.10]), must be ≤ 1.00 (peak_rho_max): fails

The small-sample rule lives here too: a bootstrap interval over fewer than
:data:`SMALL_SAMPLE_BLOCKS` prompt blocks is marked (``small sample: 2 prompt blocks``), because
a percentile interval over a handful of resampled prompts can be wildly wide or sit on its own
estimate; a verdict drawn from it is indicative, not confirmed. A leaf but for the metric
registry (``harness.vocab.metrics``), which gives the metrics' labels.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

# Bootstrap intervals over fewer prompt blocks than this are flagged "small sample".
SMALL_SAMPLE_BLOCKS = 10

_SYMBOLS = {"<=": "≤", ">=": "≥"}


def number(value: object) -> str:
    """``value`` for a person: two decimals in the usual range, else three significant digits;
    ``n/a`` when missing or not finite."""
    if value is None or isinstance(value, bool):
        return "n/a"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(x):
        return "n/a"
    if x == 0 or 0.01 <= abs(x) < 10_000:
        return f"{x:.2f}"
    return f"{x:.3g}"


def count(value: object) -> str:
    """A count for a person: ``12``, not ``12.00`` (a non-integral value, e.g. a bootstrap
    bound, keeps :func:`number`'s form)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return number(value)
    return str(int(x)) if math.isfinite(x) and x.is_integer() else number(value)


def counts_things(threshold_name: object) -> bool:
    """Whether the metric a threshold gates is a count (unit ``count`` in the registry)."""
    from harness.vocab.metrics import METRICS

    if not threshold_name:
        return False
    return any(
        spec.unit == "count" and (spec.threshold == threshold_name or threshold_name in spec.key_thresholds.values())
        for spec in METRICS
    )


def is_small_sample(blocks: object) -> bool:
    """Whether an interval over ``blocks`` prompt blocks is flagged (unknown counts are not)."""
    return isinstance(blocks, int) and not isinstance(blocks, bool) and 0 < blocks < SMALL_SAMPLE_BLOCKS


def small_sample_note(blocks: object) -> str:
    """``small sample: 2 prompt blocks`` for a flagged count, else ``""``."""
    if not is_small_sample(blocks):
        return ""
    return f"small sample: {blocks} prompt block{'s' if blocks != 1 else ''}, under {SMALL_SAMPLE_BLOCKS}"


def metric_name(label: str) -> str:
    """A metric label with its Greek letters (``rho[pitch]`` → ``ρ[pitch]``, ``peak_rho`` →
    ``peak ρ``): every registered metric whose label is not plain ASCII
    (:data:`harness.vocab.metrics.METRICS`) is named by its label, other names stay as written."""
    from harness.vocab.metrics import METRICS

    for spec in METRICS:
        if spec.label.isascii():
            continue
        after = r"(?=\[)" if spec.key is not None else r"(?!\w)"  # rho[...], peak_rho
        label = re.sub(r"(?<!\w)" + re.escape(spec.name) + after, lambda _, s=spec: s.label, label)
    return label


def interval_text(interval: object, blocks: object = None, fmt: Callable[[object], str] = number) -> str:
    """``95% CI [1.05, 2.10]`` (plus the small-sample note), or ``no interval``; ``fmt``
    writes the bounds (:func:`count` for a count)."""
    if not isinstance(interval, list | tuple) or len(interval) != 2:
        return "no interval"
    text = f"95% CI [{fmt(interval[0])}, {fmt(interval[1])}]"
    note = small_sample_note(blocks)
    return f"{text}; {note}" if note else text


def rule(outcome: Mapping[str, object], *, evaluator: bool = True) -> str:
    """One check as a rule and its result (no card): see the module docstring.

    ``outcome``: a check outcome (``harness.checks.assertions.check``; ``results.json`` checks)."""
    who = f" of {outcome['evaluator']}" if evaluator and outcome.get("evaluator") else ""
    name = metric_name(str(outcome.get("metric", "")))
    op = _SYMBOLS.get(str(outcome.get("op")), str(outcome.get("op")))
    fmt = count if counts_things(outcome.get("threshold_name")) else number  # 12, not 12.00
    threshold = f"must be {op} {fmt(outcome.get('threshold'))} ({outcome.get('threshold_name', '')})"
    kind = outcome.get("interval_kind")  # an interval that is not a prompt bootstrap (Wilson...)
    ci = interval_text(outcome.get("interval"), outcome.get("blocks"), fmt)
    if kind:
        ci = ci.replace("95% CI", f"95% {kind}", 1)
    which = outcome.get("compare", "estimate")
    if outcome.get("tested") is None:
        what = (f"its {kind}" if kind else "its bootstrap interval") if which != "estimate" else "its estimate"
        why = outcome.get("reason") or "not measured or all records failed"
        return f"{name}{who}: {what} is not available ({why}; {ci}); {threshold}: fails"
    verdict = "holds" if outcome.get("passed") else "fails"
    if which == "estimate":
        return f"{name}{who} {fmt(outcome['tested'])} ({ci}), {threshold}: {verdict}"
    end = "lower" if which == "lower" else "upper"
    return (
        f"{name}{who}: the {'' if kind else 'bootstrap '}{end} bound {fmt(outcome['tested'])} "
        f"(estimate {fmt(outcome.get('estimate'))}, {ci}), {threshold}: {verdict}"
    )


def rule_with_card(outcome: Mapping[str, object]) -> str:
    """:func:`rule` followed by ``[card <id>]`` when the check names a card (one line); a check
    gated on confirmed evidence also says what the confirmed level found."""
    from harness.checks.evidence import confirmed_words

    card = outcome.get("card_id")
    confirmed = outcome.get("confirmed")
    tier = ""
    if outcome.get("evidence") == "confirmed" and isinstance(confirmed, dict):
        tier = f" (gated on confirmed evidence; {confirmed_words(confirmed)})"
    return rule(outcome) + tier + (f" [card {card}]" if card else "")
