"""An ordered, typed table of named entries, and a lazy ``"module:function"`` reference.

A :class:`Registry` is the one shape of every open table of the harness: metrics,
thresholds, factors, settings and probes (``harness.vocab``), evaluator families
(``harness.evaluators.families``) and evaluator specs (``harness.evaluators.registry``). It
keeps its entries in registration order (the order tables, cards and reports list them in),
refuses a second entry under a taken name unless ``replace=True`` (the same entry again is
accepted, keeping its first source), and answers an unknown name with an error that names the
closest known ones. Reading is lock-free; registration takes a lock, so a plugin registering
at import on one thread never tears a read on another.

Nothing derived from a registry is kept past a change: :attr:`Registry.version` counts the
changes, and a cache of a derived value keys on it. :meth:`Registry.scoped` (and
:func:`scoped` for several) restores a registry's entries on exit, which is how a test
registers names that never reach another test or the product.

:class:`Lazy` is the one ``"module:function"`` reference: a probe's edit, a family's build,
a statistic's ``compute``; the module is imported on first use, so a registry row can point
at code that sits above the vocabulary in the data flow without importing it.
"""

from __future__ import annotations

import difflib
import importlib
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, TypeVar

from harness.core.errors import AuditError


class VocabularyError(AuditError):
    """A metric, factor, probe or threshold name is unknown, or registered twice."""


T = TypeVar("T")


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


def _name_of(entry: object) -> str:
    return entry.name


@dataclass(frozen=True)
class RegistryState:
    """What :meth:`Registry.snapshot` saves: the entries, their sources, whether loaded."""

    entries: tuple[tuple[str, object], ...]
    sources: tuple[tuple[str, str], ...]
    loaded: bool


_ALL: weakref.WeakSet[Registry[object]] = weakref.WeakSet()


class Registry(Generic[T]):
    """Entries of one kind (``what``: "metric", "factor", "adapter", ...) by name, in
    registration order.

    ``key``: an entry's name (default: its ``name`` attribute). ``error``: the error class
    raised (default :class:`VocabularyError`). ``hint``: added to the hint of an unknown name
    (where else a name may come from). ``loader``: called once, with the registry, before the
    first read (a table whose built-in rows are costly to build, or come from entry points).
    """

    def __init__(
        self,
        what: str,
        *,
        key: Callable[[T], str] = _name_of,
        error: type[AuditError] = VocabularyError,
        hint: str = "",
        loader: Callable[[Registry[T]], None] | None = None,
    ) -> None:
        self.what = what
        self._key = key
        self._error = error
        self._hint = hint
        self._loader = loader
        self._entries: dict[str, T] = {}
        self._sources: dict[str, str] = {}
        self._loaded = loader is None
        self._after_load: RegistryState | None = None
        self._version = 0
        self._lock = threading.RLock()
        _ALL.add(self)

    # -- loading -------------------------------------------------------------------------------

    def _ready(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            self._loaded = True  # before the loader: its own registrations read the table
            assert self._loader is not None
            self._loader(self)
            if self._after_load is None:  # the first load's rows: what an unloaded state means
                self._after_load = self.snapshot()

    # -- writing -------------------------------------------------------------------------------

    def register(self, entry: T, *, replace: bool = False, source: str | None = None) -> T:
        """Add ``entry``; a taken name is an error unless ``replace`` or the entry is the same
        (which keeps its first ``source``). ``source``: where it came from, named in a clash."""
        name = self._key(entry)
        if not isinstance(name, str) or not name.strip():
            raise self._error(f"a {self.what} needs a non-empty name, got {name!r}")
        self._ready()
        with self._lock:
            old = self._entries.get(name)
            if old is not None and old != entry and not replace:
                by = self._sources.get(name)
                raise self._error(
                    f"{self.what} {name!r} is already registered" + (f" (by {by})" if by else ""),
                    hint=f"pick another name, or pass replace=True to redefine the {self.what}",
                )
            if old is None or old != entry:
                if source is None:
                    self._sources.pop(name, None)
                else:
                    self._sources[name] = source
            self._entries[name] = entry
            self._version += 1
        return entry

    def unregister(self, name: str) -> None:
        """Remove ``name`` (a plugin undoing its own registration; tests use :meth:`scoped`)."""
        self._ready()
        with self._lock:
            self._entries.pop(name, None)
            self._sources.pop(name, None)
            self._version += 1

    def reset(self) -> None:
        """Empty the registry; one with a ``loader`` loads again on the next read (a test of
        the loading itself, inside :meth:`scoped`)."""
        with self._lock:
            self._entries = {}
            self._sources = {}
            self._loaded = self._loader is None
            self._version += 1

    # -- reading -------------------------------------------------------------------------------

    def get(self, name: str, *, where: str | None = None) -> T:
        """The entry ``name``; an unknown name is an error naming the closest known ones."""
        self._ready()
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            known = list(self._entries)
            near = closest(str(name), known)
            hint = f"known {self.what}s: {', '.join(known)}" + (f"; {self._hint}" if self._hint else "")
            raise self._error(
                f"unknown {self.what} {name!r}" + (f" (did you mean {near}?)" if near else ""),
                where=where,
                hint=hint,
            ) from None

    def find(self, name: str) -> T | None:
        """The entry ``name``, or ``None``."""
        self._ready()
        return self._entries.get(name)

    def source_of(self, name: str) -> str | None:
        """Where ``name``'s entry came from, as its registration said (``None``: not said)."""
        self._ready()
        return self._sources.get(name) if name in self._entries else None

    def __contains__(self, name: object) -> bool:
        self._ready()
        return name in self._entries

    def __iter__(self) -> Iterator[T]:
        self._ready()
        return iter(tuple(self._entries.values()))

    def __len__(self) -> int:
        self._ready()
        return len(self._entries)

    def names(self) -> tuple[str, ...]:
        """Every name, in registration order."""
        self._ready()
        return tuple(self._entries)

    def where(self, predicate: Callable[[T], bool]) -> tuple[T, ...]:
        """The entries ``predicate`` accepts, in registration order."""
        return tuple(e for e in self if predicate(e))

    @property
    def loaded(self) -> bool:
        """Whether the ``loader`` has run (always, for a registry without one)."""
        return self._loaded

    @property
    def version(self) -> int:
        """A number that changes whenever the entries do: the key of a derived value's cache."""
        return self._version

    # -- scoping -------------------------------------------------------------------------------

    def snapshot(self) -> RegistryState:
        """The registry's state now (no loading: an unloaded registry stays unloaded)."""
        with self._lock:
            return RegistryState(tuple(self._entries.items()), tuple(self._sources.items()),
                                 self._loaded)

    def restore(self, state: RegistryState) -> None:
        """Put back a :meth:`snapshot`. An unloaded state restored after the registry loaded
        gives the state it had right after loading (so the load is not repeated)."""
        with self._lock:
            if not state.loaded and self._loaded and self._after_load is not None:
                state = self._after_load
            if state == self.snapshot():
                return  # unchanged: derived caches (keyed on the version) stay valid
            self._entries = dict(state.entries)
            self._sources = dict(state.sources)
            self._loaded = state.loaded or self._loaded
            self._version += 1

    @contextmanager
    def scoped(self) -> Iterator[Registry[T]]:
        """Registrations inside the ``with`` block are undone on exit (and removals put back)."""
        state = self.snapshot()
        try:
            yield self
        finally:
            self.restore(state)

    def __repr__(self) -> str:
        shown = ", ".join(self._entries) if self._loaded else "not loaded"
        return f"Registry[{self.what}]({shown})"


def all_registries() -> tuple[Registry[object], ...]:
    """Every registry alive in this process."""
    return tuple(_ALL)


@contextmanager
def scoped(*registries: Registry[object]) -> Iterator[None]:
    """:meth:`Registry.scoped` for ``registries`` (default: every registry alive now)."""
    chosen = registries or all_registries()
    states = [(r, r.snapshot()) for r in chosen]
    try:
        yield
    finally:
        for registry, state in states:
            registry.restore(state)


F = TypeVar("F", bound=Callable[..., object])


@dataclass(frozen=True)
class Lazy(Generic[F]):
    """A callable named ``"module:function"``: the module is imported on the first call (an
    :class:`ImportError` reaches the caller, which names the missing extra)."""

    path: str

    def __post_init__(self) -> None:
        module, _, func = self.path.partition(":")
        if not module or not func or ":" in func:
            raise VocabularyError(f"{self.path!r} is not 'module:function'")

    def resolve(self) -> F:
        """The function (importing its module)."""
        module, _, func = self.path.partition(":")
        return getattr(importlib.import_module(module), func)

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self.resolve()(*args, **kwargs)
