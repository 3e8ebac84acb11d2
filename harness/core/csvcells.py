"""CSV cells a spreadsheet would run as a formula are written inert.

A spreadsheet program opening a CSV treats a cell that starts with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return (or the full-width ``＝``, ``＋``, ``－``, ``＠``) as a formula (CSV
injection: ``=HYPERLINK(...)`` in a caption, an error message or an evaluator id). Every CSV the harness writes passes its text cells through
:func:`neutral`: such a cell gets a leading ``'`` (the spreadsheet convention for "text"), and
so does a cell that already starts with ``'``, so the change is undone exactly by
:func:`restore` (the records reader applies it to the free-text columns it neutralises; report
tables, the leaderboard and agreement tables are outputs only). A cell that is a plain number
(``-0.5``, ``+3``, ``-1e-05``, ``-12%``) is a number to a spreadsheet, not a formula, and is
left as it is; only ``str`` cells change.
A leaf module: it imports nothing from the harness.
"""

from __future__ import annotations

import re

# the full-width forms too: a spreadsheet in a CJK locale reads "＝1+1" as "=1+1"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
QUOTE = "'"
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?%?", re.ASCII)


def neutral(cell: object) -> object:
    """``cell`` with a leading ``'`` when it is a string starting with a formula character
    (:data:`FORMULA_STARTS`) or with ``'``; any other value unchanged."""
    if isinstance(cell, str) and cell.startswith((*FORMULA_STARTS, QUOTE)) and not _NUMBER.fullmatch(cell):
        return QUOTE + cell
    return cell


def restore(cell: object) -> object:
    """The inverse of :func:`neutral` on what it wrote: one leading ``'`` removed (a plain
    number never starts with ``'``)."""
    if isinstance(cell, str) and cell.startswith(QUOTE):
        return cell[1:]
    return cell
