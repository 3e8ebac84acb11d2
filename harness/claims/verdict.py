"""The verdict of "A beats B under evaluator E" in one line, with its evidence level.

One of four, checked in this order:

=========================  ====================================================================
``reversed at c0``         B scores at least as high as A at c0 itself
``depends on the protocol`` A above B at c0, B above A at some grid protocol or preset
``flips off the grid``     A above B at every grid protocol and preset, but the search beyond
                           the grid finds configurations that reverse the pair: "holds on the
                           grid and the presets but flips in X % [interval] of the continuous
                           space", with the region in words
``holds everywhere tested`` none of the above
=========================  ====================================================================

The evidence level: ``confirmed`` when the intervals that decide the verdict are wholly on
its side (the simultaneous band of the grid and presets, at least the interval policy's
minimum of prompts; for ``flips off the grid`` the search's held-out confirmation);
``descriptive`` when only the point margins say so; ``not confirmable: N prompts (needs M)``
when the prompts are too few for any interval to decide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.claims.evidence import GRID, PRESET, PairEvidence, ProtocolGap

HOLDS, OFF_GRID, DEPENDS, REVERSED = "holds", "flips_off_grid", "depends", "reversed"
#: The verdicts in words, by key.
WORDS = {HOLDS: "holds everywhere tested", OFF_GRID: "holds on the grid and the presets but flips off the grid",
         DEPENDS: "depends on the protocol", REVERSED: "reversed at c0"}  # fmt: skip
CONFIRMED, DESCRIPTIVE = "confirmed", "descriptive"
SHOWN = 6  # reversing protocols named in the line before "and N more"


@dataclass(frozen=True)
class SearchFacts:
    """What the verdict reads of the pair's search (plain numbers): whether it ``ran`` (else
    ``skipped`` says why), its ``budget``, the discovery effect (positive: the worst point
    reverses c0's order), the held-out estimate, interval and ``reason`` (not confirmable),
    ``confirmed``, the worst point printed, the flip region (``None`` when not estimated: share,
    interval, flips, points, where) and the attribution in words."""

    ran: bool
    skipped: str = ""
    budget: int = 0
    discovery_effect: float = math.nan
    held_out: tuple[float, float, float] = (math.nan, math.nan, math.nan)
    held_out_prompts: int = 0
    reason: str = ""
    confirmed: bool = False
    worst: str = ""
    flip: tuple[float, float, float, int, int, str] | None = None
    attribution: str = ""

    @property
    def flips(self) -> bool:
        """Whether the search saw the pair reverse anywhere (its worst point on the discovery
        prompts, or a point of the flip region)."""
        if not self.ran:
            return False
        return bool(self.confirmed or self.discovery_effect > 0 or (self.flip is not None and self.flip[3] > 0))


def search_facts(doc: dict[str, object] | None) -> SearchFacts:
    """:class:`SearchFacts` from a search document (``search --json``'s object with ``ran``) or
    ``None`` (no search)."""
    if not doc or not doc.get("ran"):
        return SearchFacts(False, str((doc or {}).get("skipped") or "not run"))
    held = doc.get("held_out") or {}
    interval = held.get("interval") or [None, None]
    flip = doc.get("flip_region")

    def num(x: object) -> float:
        return float(x) if isinstance(x, int | float) else math.nan

    flip_t = None
    if flip:
        lo, hi = flip.get("interval") or [None, None]
        flip_t = (num(flip.get("share")), num(lo), num(hi), int(flip.get("flips") or 0), int(flip.get("points") or 0),
                  str(flip.get("where") or ""))  # fmt: skip
    worst = doc.get("worst") or {}
    return SearchFacts(True, "", int(doc.get("trials") or 0), num((doc.get("discovery") or {}).get("estimate")),
                       (num(held.get("estimate")), num(interval[0]), num(interval[1])), int(held.get("prompts") or 0),
                       str(held.get("reason") or ""), bool(doc.get("confirmed")), str(worst.get("text") or ""),
                       flip_t, str((doc.get("attribution") or {}).get("text") or ""))  # fmt: skip


@dataclass(frozen=True)
class Verdict:
    """``kind`` (a key of :data:`WORDS`), ``line`` (the verdict in one line), ``evidence``
    (``confirmed``, ``descriptive`` or ``not confirmable: ...``), ``scope`` (one sentence of the
    protocols under which the comparison keeps its direction, for the paper) and ``details``."""

    kind: str
    line: str
    evidence: str
    scope: str
    details: tuple[str, ...] = ()

    @property
    def confirmed(self) -> bool:
        return self.evidence == CONFIRMED

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "words": WORDS[self.kind], "line": self.line, "evidence": self.evidence,
                "confirmed": self.confirmed, "scope": self.scope, "details": list(self.details)}  # fmt: skip


def pct(x: float) -> str:
    """A share as a percentage with one decimal (``-`` when undefined)."""
    return "-" if not math.isfinite(x) else f"{100 * x:.1f} %"


def num(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:+.3g}"


def named(gaps: tuple[ProtocolGap, ...]) -> str:
    """The protocols' names, the first :data:`SHOWN` of them, then how many more."""
    names = [g.name for g in gaps]
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return ", ".join(names[:SHOWN]) + more


def _tested(ev: PairEvidence, search: SearchFacts) -> str:
    parts = [f"{len(ev.grid)} grid protocols"]
    if ev.presets:
        parts.append(f"{len(ev.presets)} presets")
    if search.ran:
        parts.append(f"{search.budget} searched configurations")
    return ", ".join(parts)


def decide(ev: PairEvidence, search: SearchFacts, evaluator: str) -> Verdict:
    """The :class:`Verdict` of "``ev.a`` beats ``ev.b``" (module doc)."""
    a, b = ev.a, ev.b
    head = f"{a} beats {b} under {evaluator}"
    gap, c_lo, c_hi = ev.c0
    c0_words = f"gap at c0 {num(gap)} [{num(c_lo)}, {num(c_hi)}]"
    grid_rev, preset_rev = ev.reversing(GRID), ev.reversing(PRESET)
    details = [c0_words, f"grid envelope [{num(ev.envelope[0])}, {num(ev.envelope[1])}] ({ev.envelope[2].replace('_', ' ')})"]
    if not search.ran:
        details.append(f"search {search.skipped}")
    elif search.attribution:
        details.append(f"search: {search.attribution}")
    if not gap > 0:
        evidence = ev.reason or (CONFIRMED if c_hi < 0 else DESCRIPTIVE)
        tie = "ties A with B" if gap == 0 else f"{b} scores higher"
        line = f"{head}: {WORDS[REVERSED]} ({tie}: {c0_words}) [{evidence}]"
        scope = f"Under {evaluator}, {b} scores at least as high as {a} at c0 ({c0_words}): the claim does not hold."
        return Verdict(REVERSED, line, evidence, scope, tuple(details))
    if grid_rev or preset_rev:
        evidence = ev.reason or (CONFIRMED if any(p.confirmed_reversed for p in ev.protocols)
                                 and any(p.confirmed_holds for p in ev.protocols) else DESCRIPTIVE)  # fmt: skip
        where = []
        if grid_rev:
            where.append(f"at grid levels {named(grid_rev)}")
        if preset_rev:
            where.append(f"under presets {named(preset_rev)}")
        reversed_at = " and ".join(where)
        confirmed_at = [p.name for p in ev.protocols if p.confirmed_reversed]
        if confirmed_at and not ev.reason:
            details.append(f"confirmed reversed (band) at {', '.join(confirmed_at[:SHOWN])}"
                           + (f" and {len(confirmed_at) - SHOWN} more" if len(confirmed_at) > SHOWN else ""))
        line = f"{head}: {WORDS[DEPENDS]}: {b} scores higher {reversed_at} [{evidence}]"
        holding = len(ev.protocols) - len(grid_rev) - len(preset_rev)
        scope = (f"Under {evaluator}, {a} scores above {b} at c0 ({c0_words}) and at {holding} of the "
                 f"{len(ev.protocols)} protocols tested, but {b} scores higher {reversed_at}.")
        return Verdict(DEPENDS, line, evidence, scope, tuple(details))
    if search.flips:
        evidence = CONFIRMED if search.confirmed else (search.reason or DESCRIPTIVE)
        if search.flip is not None and search.flip[3] > 0:
            share, lo, hi, _, n, where = search.flip
            amount = f"flips in {pct(share)} [{pct(lo)}, {pct(hi)}] of the continuous space ({where}; {n} points)"
        else:
            amount = f"flips at the searched worst configuration {search.worst}"
        held = search.held_out
        details.append(f"held-out reversal {num(held[0])} [{num(held[1])}, {num(held[2])}] on "
                       f"{search.held_out_prompts} prompts")
        line = f"{head}: holds on the grid and the presets but {amount} [{evidence}]"
        scope = (f"Under {evaluator}, {a} scores above {b} at c0 ({c0_words}) and at every one of the "
                 f"{len(ev.protocols)} grid protocols and presets tested, but the order {amount}.")
        return Verdict(OFF_GRID, line, evidence, scope, tuple(details))
    all_hold = all(p.confirmed_holds for p in ev.protocols)
    evidence = ev.reason or (CONFIRMED if all_hold else DESCRIPTIVE)
    flip = ""
    if search.flip is not None:
        flip = f"; flip region {pct(search.flip[0])} [{pct(search.flip[1])}, {pct(search.flip[2])}] of the space"
    line = f"{head}: {WORDS[HOLDS]} ({_tested(ev, search)}{flip}) [{evidence}]"
    scope = (f"Under {evaluator}, {a} scores above {b} at c0 ({c0_words}) and at every protocol tested "
             f"({_tested(ev, search)}{flip}).")
    if not all_hold and not ev.reason:
        open_at = [p.name for p in ev.protocols if not p.confirmed_holds]
        details.append(f"not confirmed at {len(open_at)} protocols (the band reaches 0): {', '.join(open_at[:SHOWN])}")
    return Verdict(HOLDS, line, evidence, scope, tuple(details))
