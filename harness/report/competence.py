"""Competence at c0 next to fragility across the protocol, per evaluator (terminal and HTML).

An evaluator that ranks generators badly even at the default view is not an interesting
finding about protocols; one that agrees with the symbolic companion at c0 and still changes
its winner when the render protocol moves is. This module puts the two side by side from what
a report already holds: each card's companion check (c0 agreement, see
:mod:`harness.stats.companion_agreement`) and ``summary.json``'s fragility numbers (peak ρ,
min Kendall W, most distinct top-1 generators over one factor's levels).

Competent at c0 means at least :data:`COMPETENT_AGREEMENT` of the companion's within-prompt
generator pairs ordered the same way (the reference models' quality bar); the protocol moves
the winner when some factor has two or more distinct top-1 generators.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.core.numbers import finite_or_none
from harness.vocab.metrics import MAX_TOP1, MIN_W, PEAK_RHO

COMPETENT_AGREEMENT = 0.75


def agreement_of(card: Mapping[str, object] | None) -> Mapping[str, object] | None:
    """The agreement numbers of a card's ``companion_check`` group, if it has them."""
    group = card.get("companion_check") if isinstance(card, Mapping) else None
    data = group.get("agreement") if isinstance(group, Mapping) else None
    return data if isinstance(data, Mapping) and "pair_agreement" in data else None


def contrast(entry: Mapping[str, object], agreement: Mapping[str, object] | None) -> dict[str, object]:
    """Competence and fragility of one evaluator.

    ``entry``: its ``summary.json`` evaluator entry; ``agreement``: :func:`agreement_of` its
    card (``None`` without a companion). Returns ``{pair_agreement, ranking_tau, winner,
    companion_winner, competent, peak_rho, min_w, max_top1, winner_moves, headline, terms}``;
    ``competent`` / ``winner_moves`` are ``None`` when unknown."""
    a = agreement or {}
    pair = finite_or_none(a.get("pair_agreement"))
    top1 = entry.get(MAX_TOP1)
    out = {
        "pair_agreement": pair,
        "ranking_tau": finite_or_none(a.get("ranking_tau")),
        "winner": a.get("winner"),
        "companion_winner": a.get("companion_winner"),
        "competent": None if pair is None else pair >= COMPETENT_AGREEMENT,
        PEAK_RHO: finite_or_none(entry.get(PEAK_RHO)),
        MIN_W: finite_or_none(entry.get(MIN_W)),
        MAX_TOP1: top1 if isinstance(top1, int) else None,
        "winner_moves": None if not isinstance(top1, int) else top1 >= 2,
    }
    out["headline"] = headline(out)
    out["terms"] = terms(out)
    return out


def headline(c: Mapping[str, object]) -> str:
    """One sentence in plain words (no c0, tau-b, rho or W: :func:`terms` gives those, for a
    tooltip): how the evaluator ranks generators at the default view, then whether changing
    the protocol changes its winner."""
    if c["competent"] is None:
        first = "not compared with the symbolic companion in this run"
    else:
        like = "like" if c["competent"] else "unlike"
        first = (f"ranks generators {like} the symbolic companion at the default view "
                 f"({c['pair_agreement']:.0%} of generator pairs in the same order; its winner "
                 f"{c['winner'] or 'tied'}, the companion's {c['companion_winner'] or 'tied'})")
    top1 = c[MAX_TOP1]
    if c["winner_moves"] is None:
        second = "its sensitivity to the protocol was not measured"
    elif c["winner_moves"]:
        second = (("yet" if c["competent"] else "and") + " changing the camera, lighting, "
                  f"background or caption wording changes its winner ({top1} different winners "
                  "across the levels of one setting)")
    else:
        second = "and changing the protocol keeps its winner"
    return f"{first}, {second}"


def terms(c: Mapping[str, object]) -> str:
    """The headline's numbers by their technical names (a tooltip beside :func:`headline`)."""

    def f(x: object, fmt: str) -> str:
        return "n/a" if x is None else fmt.format(x)

    return (f"c0 (default configuration) pair agreement {f(c['pair_agreement'], '{:.0%}')}, "
            f"Kendall tau-b {f(c['ranking_tau'], '{:+.2f}')}; peak rho {f(c[PEAK_RHO], '{:.2f}')}, "
            f"min Kendall W {f(c[MIN_W], '{:.2f}')}, {f(c[MAX_TOP1], '{}')} distinct top-1 "
            "generators over one factor")


def contrasts(summary: Mapping[str, object], cards: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, object]]:
    """:func:`contrast` of every evaluator in ``summary`` that has a companion agreement on its
    card (the companion itself and runs without one are left out)."""
    out = {}
    for ev, entry in sorted((summary.get("evaluators") or {}).items()):
        agreement = agreement_of(cards.get(ev))
        if agreement is not None:
            out[ev] = contrast(entry, agreement)
    return out
