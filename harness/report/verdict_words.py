"""The words of the report's verdict: checks as rules, counts of what ran, why a dash.

Shared by ``report.html`` (:mod:`harness.report.html.page`) and the terminal table
(:mod:`harness.report.terminal`) so that both say the same thing: a failing check reads as a
rule and its result (``harness.checks.wording``), the headline counts the evaluators that ran
(panel-wide checks are counted apart, never as an evaluator), and a "—" in the c0 columns says
why there is no agreement. Every value is escaped where it enters HTML.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from harness.checks.wording import rule

PANEL = "panel"
e = html.escape


def no_agreement_reason(card: Mapping[str, object] | None) -> str:
    """Why an evaluator has no c0 agreement with the companion (for a "—" cell)."""
    group = card.get("companion_check") if isinstance(card, Mapping) else None
    if not isinstance(card, Mapping):
        return "no card"
    if not isinstance(group, Mapping) or group.get("kind") == "not_reported":
        return "no companion in this run"
    if str(group.get("details", "")).startswith("this evaluator is the symbolic companion"):
        return "it is the companion"
    return "agreement undefined"


def prompt_blocks(card: Mapping[str, object] | None) -> int | None:
    """The prompt blocks an evaluator's bootstrap resampled, from its card (``None``: unknown)."""
    source = card.get("scene_artifact_source") if isinstance(card, Mapping) else None
    n = source.get("n_prompts") if isinstance(source, Mapping) else None
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def small_sample_banner_html(cards: Mapping[str, Mapping[str, object]]) -> str:
    """A warning paragraph when the report's intervals come from a small sample, else ``""``."""
    from harness.checks.wording import SMALL_SAMPLE_BLOCKS, is_small_sample

    counts = sorted({n for n in map(prompt_blocks, cards.values()) if is_small_sample(n)})
    if not counts:
        return ""
    blocks = " or ".join(str(n) for n in counts)
    return (
        f'<p class="warn small-sample">⚠ Small sample: the intervals of this report come from {e(blocks)} '
        f"prompt blocks, under {SMALL_SAMPLE_BLOCKS}. A percentile bootstrap over so few prompts can be "
        "very wide or end at its own estimate: read every interval and verdict here as indicative.</p>"
    )


def card_sample_html(card: object) -> str:
    """`` ⚠ small sample: …`` after a card's name when its intervals come from a small sample."""
    from harness.checks.wording import small_sample_note

    note = small_sample_note(prompt_blocks(card if isinstance(card, Mapping) else None))
    return f' <span class="warn-inline">⚠ {e(note)}: its intervals are indicative</span>' if note else ""


def check_item_html(check: Mapping[str, object], test: str) -> str:
    """One failing check of the verdict as a list item: the rule, then its card and test."""
    card = str(check.get("card_id") or "")
    card_html = f'card <code title="{e(card)}">{e(card[:24] + "…")}</code>' if card else "no card (a panel check)"
    return (
        f"<li>{e(rule(check, evaluator=False))}"
        f'<br><span class="muted">{card_html} · test <code>{e(test)}</code></span></li>'
    )


def headline_text(outcomes: Mapping[str, Sequence[str]]) -> str:
    """The verdict's sentence: ``outcomes`` maps an evaluator (or ``panel``) to its tests' outcomes.

    ``1 of 1 evaluator fails at least one check: x; panel checks: 1 failed`` — the evaluators
    counted are those that ran; panel-wide checks are reported on their own."""
    evaluators = sorted(ev for ev in outcomes if ev != PANEL)
    failing = [ev for ev in evaluators if "failed" in outcomes[ev]]
    noun = "evaluator" if len(evaluators) == 1 else "evaluators"
    verb = "fails" if len(failing) == 1 or len(evaluators) == 1 else "fail"
    text = f"{len(failing)} of {len(evaluators)} {noun} {verb} at least one check"
    if failing:
        text += ": " + ", ".join(failing)
    panel = outcomes.get(PANEL)
    if panel:
        bad = sum(o == "failed" for o in panel)
        text += f"; panel checks (across the selected evaluators): {bad} of {len(panel)} failed"
    return text


def bundled_panel() -> frozenset[str]:
    """The bundled evaluators the main job audits (the ``default`` profile's list: the
    reference models and the companion). The report may not import the evaluators, so the
    ``planted-*`` ones are added by the caller that can (``t3d-audit audit``)."""
    from harness.protocol.profiles import get_profile

    return frozenset(get_profile("default").evaluators)


def expected_verdict_note(evaluators: Sequence[str], failing: bool,
                          bundled: frozenset[str] | None = None) -> str:
    """Said beside a FAIL when only bundled evaluators were audited (``bundled``, default
    :func:`bundled_panel`): that FAIL is their expected verdict; ``""`` otherwise (a user's
    own evaluator gets no excuse)."""
    audited = {ev for ev in evaluators if ev != PANEL}
    if not failing or not audited or not audited <= (bundled_panel() if bundled is None else bundled):
        return ""
    return ("FAIL is the expected verdict of the bundled evaluators: they are weak on purpose "
            "(small reference models) or carry planted effects, so the audit has fragility to "
            "catch (docs/reference-evaluators.md); a PASS here would mean the audit stopped "
            "finding it")
