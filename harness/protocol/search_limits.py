"""The ranges of a search's numbers and the form of its objective: one table read by ``t3d-audit search``'s options, a
profile's ``search`` block and :func:`harness.search.pipeline.run_search` (docs/search.md "Limits").

Each bound keeps a search's memory and files small whatever the user types: the optimiser's
state and the trial log grow with the budget (about 500 bytes of log per configuration), the
Sobol sample with the flip points (88 bytes per point on the 11-axis smoke space), and a split
beyond any scene set is refused before anything is loaded.
"""

from __future__ import annotations

import math
import re

from harness.core.errors import AuditError

MAX_BUDGET = 100_000  # configurations: a trial log of about 50 MB
MAX_BATCH = 4096  # points asked at once (and nevergrad's worker count)
MAX_SEED = 2**63 - 1  # the audit's own seed range (--audit-seed)
MAX_FLIP_POINTS = 65_536  # Sobol points: a 2**16 sample, 5.8 MB on 11 axes
MAX_SPLIT_PROMPTS = 100_000  # discovery or held-out prompts
MIN_HELD_OUT = 2  # a held-out interval needs two prompts to resample
MAX_WALL_TIME_S = 31_536_000.0  # one year, in seconds
MAX_BOOTSTRAP = 100_000  # replicates: harness.stats.bootstrap's bound, a later stage than this one

#: name → (lowest, highest) of each whole-number setting.
INT_RANGES: dict[str, tuple[int, int]] = {
    "budget": (1, MAX_BUDGET),
    "batch": (1, MAX_BATCH),
    "seed": (0, MAX_SEED),
    "flip_points": (0, MAX_FLIP_POINTS),
    "discovery": (1, MAX_SPLIT_PROMPTS),
    "held_out": (MIN_HELD_OUT, MAX_SPLIT_PROMPTS),
    "bootstrap": (1, MAX_BOOTSTRAP),
}


def range_text(name: str) -> str:
    """``name``'s range as users read it, e.g. ``an integer in [1, 100000]``."""
    low, high = INT_RANGES[name]
    return f"a whole number in [{low}, {high}]"


def check_int(name: str, value: object, where: str) -> int:
    """``value`` when it is a whole number (not a bool) in ``name``'s range; else
    :class:`~harness.core.errors.AuditError` naming the range."""
    low, high = INT_RANGES[name]
    if type(value) is not int or not low <= value <= high:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise AuditError(f"'{name}' must be {range_text(name)}, got {shown}", where=where)
    return value


def check_wall_time(value: object, where: str) -> float:
    """A wall-time limit in seconds: a finite number in ``(0, MAX_WALL_TIME_S]``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not 0 < value <= MAX_WALL_TIME_S:  # type: ignore[operator]
        raise AuditError(f"the wall time must be a number of seconds in (0, {MAX_WALL_TIME_S:g}], "
                         f"got {value!r}", where=where)  # fmt: skip
    return float(value)  # type: ignore[arg-type]


#: A generator name as a scene file may write it (harness.scenes.load), at most 100 characters.
_GENERATOR = r"[A-Za-z0-9][A-Za-z0-9._~+-]{0,99}"
#: ``shift``, ``ranking`` or ``pair:A,B``: all an objective may be, wherever it is written
#: (so no markup, formula or control character reaches a card, a report or a test id).
OBJECTIVE_FORM = re.compile(rf"shift|ranking|pair:[ \t]*{_GENERATOR}[ \t]*,[ \t]*{_GENERATOR}[ \t]*")


def check_objective_form(text: object, where: str) -> str:
    """``text`` when it has the form of an objective (:data:`OBJECTIVE_FORM`; two distinct
    names for a pair); else :class:`~harness.core.errors.AuditError`."""
    ok = isinstance(text, str) and OBJECTIVE_FORM.fullmatch(text) is not None
    if ok and str(text).startswith("pair:"):
        first, second = (n.strip() for n in str(text)[5:].split(","))
        ok = first != second
    if not ok:
        shown = repr(text) if len(repr(text)) <= 60 else repr(text)[:57] + "..."
        raise AuditError(f"objective {shown} is not shift, ranking or pair:A,B (two distinct generator "
                         "names: letters, digits, '.', '_', '~', '+', '-')", where=where)  # fmt: skip
    return str(text)
