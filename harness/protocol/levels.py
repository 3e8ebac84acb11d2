"""Which levels a record may carry, and the factorial blocks' cells and ids.

A factor's level is a Table 11 level of it, ``c0`` for ``baseline``, a probe name for
``probe``, or a block cell for ``block``: ``factor=level`` pairs of 2 or 3 crossable factors in
record order (``lighting=night,pitch=45``). A block (:class:`Block`) is a profile's full cross
of such factors, named by its id (``lighting:pitch``).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.errors import ProtocolError
from harness.protocol.configurations import (
    BASELINE,
    BLOCK,
    C0,
    block_factors,
    factors,
    record_factors,
)
from harness.vocab.probes import probe_names

BLOCK_SEPARATOR = ":"  # block id: its factors in record order, "lighting:pitch"


def check_level(factor: str, level: str) -> None:
    """Raise :class:`ProtocolError` unless ``level`` is a Table 11 level of ``factor``.

    ``baseline`` takes ``c0``; ``probe`` takes a probe name; ``block`` a cell
    (:func:`parse_cell`).
    """
    if factor == BASELINE:
        ok = level == C0
        allowed: tuple[str, ...] = (C0,)
    elif factor == "probe":
        allowed = probe_names()
        ok = level in allowed
    elif factor == BLOCK:
        parse_cell(level)
        return
    elif factor in factors():
        allowed = factors()[factor].levels
        ok = level in allowed
    else:
        raise ProtocolError(
            f"unknown factor {factor!r}",
            where="factor",
            hint=f"use one of {', '.join(record_factors())}, {BLOCK}",
        )
    if not ok:
        shown = ", ".join(allowed[:12]) + (" ..." if len(allowed) > 12 else "")
        raise ProtocolError(
            f"unknown level {level!r} for factor {factor!r}",
            where="level",
            hint=f"use one of {shown}",
        )


def cell_level(pairs: tuple[tuple[str, str], ...]) -> str:
    """The record level of a block cell: ``factor=level`` pairs joined by ``,``, factors in
    record order (``lighting=night,pitch=45``). Raises :class:`ProtocolError` (see
    :func:`parse_cell`) for anything :func:`parse_cell` would not read back."""
    text = ",".join(f"{f}={lv}" for f, lv in pairs)
    parse_cell(text)
    return text


def parse_cell(level: str) -> tuple[tuple[str, str], ...]:
    """The ``(factor, level)`` pairs of a block cell's record level (strict).

    ``level`` is 2 or 3 ``factor=level`` pairs joined by ``,`` with no spaces; factors are
    distinct :func:`block_factors` in record order (one spelling per cell), each level a
    Table 11 level of its factor. Raises :class:`ProtocolError` naming what is wrong.
    """
    where = "level"
    hint = "write a block cell as factor=level pairs in record order, e.g. lighting=night,pitch=45"
    if not isinstance(level, str) or not level or level != level.strip() or " " in level:
        raise ProtocolError(f"malformed block cell {level!r}", where=where, hint=hint)
    pairs: list[tuple[str, str]] = []
    for part in level.split(","):
        name, sep, value = part.partition("=")
        if not sep or not name or not value or "=" in value:
            raise ProtocolError(f"malformed block cell {level!r}: {part!r}", where=where, hint=hint)
        if name not in block_factors():
            raise ProtocolError(
                f"block cell {level!r}: factor {name!r} cannot be crossed",
                where=where,
                hint=f"block factors: {', '.join(block_factors())}",
            )
        check_level(name, value)
        pairs.append((name, value))
    names = [f for f, _ in pairs]
    if not 2 <= len(pairs) <= 3:
        raise ProtocolError(
            f"block cell {level!r} crosses {len(pairs)} factor(s)", where=where,
            hint="a block crosses 2 or 3 factors",
        )
    order = [record_factors().index(f) for f in names]
    if len(set(names)) != len(names) or order != sorted(order):
        raise ProtocolError(
            f"block cell {level!r}: factors repeated or out of record order", where=where, hint=hint
        )
    return tuple(pairs)


def block_id(factor_names: tuple[str, ...]) -> str:
    """The id of the block crossing ``factor_names`` (record order): ``lighting:pitch``."""
    return BLOCK_SEPARATOR.join(factor_names)


def parse_block_id(text: str) -> tuple[str, ...]:
    """The factors of block id ``text`` (strict: distinct block factors in record order)."""
    names = tuple(text.split(BLOCK_SEPARATOR)) if isinstance(text, str) else ()
    record = record_factors()
    ok = 2 <= len(names) <= 3 and all(n in block_factors() for n in names)
    ok = ok and len(set(names)) == len(names)
    ok = ok and [record.index(n) for n in names] == sorted(record.index(n) for n in names)
    if not ok:
        raise ProtocolError(
            f"malformed block id {text!r}",
            where="block",
            hint="2 or 3 distinct block factors in record order joined by ':', e.g. lighting:pitch",
        )
    return names


@dataclass(frozen=True)
class Block:
    """A factorial block: 2 or 3 factors (record order) and the levels of each, rendered as
    the full cross. ``levels[i]`` are the levels of ``factors[i]`` in declaration order."""

    factors: tuple[str, ...]
    levels: tuple[tuple[str, ...], ...]

    @property
    def id(self) -> str:
        return block_id(self.factors)

    def cells(self) -> list[tuple[tuple[str, str], ...]]:
        """Every cell of the cross, the last factor varying fastest."""
        from itertools import product

        return [tuple(zip(self.factors, combo, strict=True)) for combo in product(*self.levels)]

    def to_dict(self) -> dict[str, list[str]]:
        return {f: list(lv) for f, lv in zip(self.factors, self.levels, strict=True)}
