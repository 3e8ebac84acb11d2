"""An ordered, typed table of named entries: the one shape of every vocabulary registry.

A :class:`Registry` keeps its entries in registration order (the order tables, cards and
reports list them in), refuses a second entry under a taken name unless ``replace=True``,
and answers an unknown name with a :class:`VocabularyError` that names the closest known
one. Reading is lock-free; registration takes a lock, so a plugin registering at import on
one thread never tears a read on another.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, Protocol, TypeVar

from harness.core.errors import AuditError


class VocabularyError(AuditError):
    """A metric, factor, probe or threshold name is unknown, or registered twice."""


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``name``: the same ``_``-separated words in another order
    (``max_peak_rho`` → ``peak_rho_max``), else by spelling; ``None`` when nothing is close."""
    known = sorted(known)
    words = sorted(name.lower().split("_"))
    for candidate in known:
        if sorted(candidate.split("_")) == words:
            return candidate
    close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.5)
    return close[0] if close else None


class Registry(Generic[T]):
    """Entries of one kind (``what``: "metric", "factor", ...) by name, in registration order."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: dict[str, T] = {}
        self._lock = threading.RLock()

    def register(self, entry: T, *, replace: bool = False) -> T:
        """Add ``entry``; a taken name is a :class:`VocabularyError` unless ``replace``."""
        name = entry.name
        if not isinstance(name, str) or not name:
            raise VocabularyError(f"a {self.what} needs a non-empty name, got {name!r}")
        with self._lock:
            if name in self._entries and not replace and self._entries[name] != entry:
                raise VocabularyError(
                    f"{self.what} {name!r} is already registered",
                    hint=f"pick another name, or pass replace=True to redefine the {self.what}",
                )
            self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests, and a plugin undoing its own registration)."""
        with self._lock:
            self._entries.pop(name, None)

    def get(self, name: str, *, where: str | None = None) -> T:
        """The entry ``name``; an unknown name is a :class:`VocabularyError` with a suggestion."""
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            known = list(self._entries)
            near = closest(str(name), known)
            raise VocabularyError(
                f"unknown {self.what} {name!r}" + (f" (did you mean {near}?)" if near else ""),
                where=where,
                hint=f"known {self.what}s: {', '.join(known)}",
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[T]:
        return iter(tuple(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> tuple[str, ...]:
        """Every name, in registration order."""
        return tuple(self._entries)

    def where(self, predicate: Callable[[T], bool]) -> tuple[T, ...]:
        """The entries ``predicate`` accepts, in registration order."""
        return tuple(e for e in self if predicate(e))
