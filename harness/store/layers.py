"""Store wrappers: read-only, and a local layer over a shared one (after Hypothesis's example
databases: ``ReadOnlyDatabase`` and ``MultiplexedDatabase`` over a
``DirectoryBasedExampleDatabase``).

:class:`ReadOnlyStore`
    Reads pass through; every write (``write``, ``write_entry``, ``delete``,
    ``delete_entry``) raises :class:`~harness.store.stores.StoreReadOnly`. Hypothesis's
    read-only database drops writes silently because its writes are an optimisation; here a
    write that did not happen would let ``t3d-audit materialize`` or a run with
    ``--audit-store-fill`` believe the store was filled, so the refusal is loud and typed.
    Callers that may meet a read-only store ask :attr:`Store.read_only` first (a cache that
    finds a damaged entry in one reports it and leaves it for a writer instead of deleting
    it: a reader without the cache secret would otherwise wipe a keyed shared store).

:class:`LayeredStore`
    ``local`` is read first, then ``shared``. Writes go to ``local`` and, with
    ``write_through``, to ``shared`` as well (which must then be writable). With ``promote``
    a hit found only in ``shared`` is copied into ``local`` (an object by :meth:`read`, an
    entry whole by :meth:`read_entry`: read entry files with :meth:`read_entry`, never one by
    one, or a lone file would stand in the local layer for an entry). A delete removes the
    key from ``local`` and, with ``write_through``, from ``shared``; without it the shared
    copy is *hidden* from this object for the rest of its life (it is not deleted), so the
    layered view behaves like one mapping: after ``write(k, v)``, ``read(k) == v``; after
    ``delete(k)``, ``read(k) is None``. ``read_only`` is the local layer's.

Both keep the wrapped stores' guarantees (whole-or-nothing publication, create-only writes);
neither verifies content: the caches built on them do (:mod:`harness.core.cacheseal`).
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.store.stores import Store, StoreError, StoreReadOnly


class ReadOnlyStore:
    """``inner`` with every write refused (:class:`StoreReadOnly`); reads pass through."""

    def __init__(self, inner: Store):
        self.inner = inner
        self.url = inner.url

    def __repr__(self) -> str:
        return f"ReadOnlyStore({self.inner!r})"

    @property
    def read_only(self) -> bool:
        return True

    def _refuse(self, what: str, key: str) -> StoreReadOnly:
        return StoreReadOnly(f"read-only store: not {what} {key}", where=self.url,
                             hint="open the store writable to fill it (t3d-audit materialize "
                             "--store URL, or pytest --audit-store-fill=local)")  # fmt: skip

    def read(self, key: str) -> bytes | None:
        return self.inner.read(key)

    def read_entry(self, prefix: str, names: list[str], commit: str) -> dict[str, bytes] | None:
        return self.inner.read_entry(prefix, names, commit)

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def list(self, prefix: str) -> list[str]:
        return self.inner.list(prefix)

    def write(self, key: str, data: bytes, *, if_absent: bool = False) -> bool:
        raise self._refuse("writing", key)

    def write_entry(
        self, prefix: str, files: Mapping[str, bytes], commit: str, *, replace_uncommitted: bool = False
    ) -> bool:
        raise self._refuse("publishing", prefix)

    def delete(self, key: str) -> bool:
        raise self._refuse("deleting", key)

    def delete_entry(self, prefix: str, names: list[str], commit: str) -> None:
        raise self._refuse("deleting", prefix)

    def prune_tmp(self, max_age_s: float = 3600.0) -> int:
        return 0  # removing a writer's temp files is a write


def writable(store: Store) -> Store:
    """``store`` without its :class:`ReadOnlyStore` wrapper (itself when it has none)."""
    while isinstance(store, ReadOnlyStore):
        store = store.inner
    return store


class LayeredStore:
    """``local`` read first, then ``shared``; writes to ``local`` (and ``shared`` with
    ``write_through``); see the module docstring."""

    def __init__(self, local: Store, shared: Store, *, write_through: bool = False, promote: bool = True):
        if write_through and shared.read_only:
            raise StoreError(f"cannot write through to the read-only store {shared.url}",
                             where=local.url)  # fmt: skip
        self.local = local
        self.shared = shared
        self.write_through = write_through
        self.promote = promote
        self.url = f"{local.url} over {shared.url}"
        self._hidden: set[str] = set()  # keys deleted from this view but kept in ``shared``

    def __repr__(self) -> str:
        return (f"LayeredStore({self.local!r}, {self.shared!r}, write_through={self.write_through}, "
                f"promote={self.promote})")  # fmt: skip

    @property
    def read_only(self) -> bool:
        return self.local.read_only

    # -- reading ---------------------------------------------------------------------------

    def _shared_has(self, key: str) -> bool:
        return key not in self._hidden and self.shared.exists(key)

    def read(self, key: str) -> bytes | None:
        data = self.local.read(key)
        if data is not None or key in self._hidden:
            return data
        data = self.shared.read(key)
        if data is not None and self.promote and not self.local.read_only:
            self.local.write(key, data, if_absent=True)
        return data

    def read_entry(self, prefix: str, names: list[str], commit: str) -> dict[str, bytes] | None:
        files = self.local.read_entry(prefix, names, commit)
        if files is not None or f"{prefix}/{commit}" in self._hidden:
            return files
        files = self.shared.read_entry(prefix, names, commit)
        if (files is not None and self.promote and not self.local.read_only
                and all(n in files for n in names)):  # fmt: skip
            self.local.write_entry(prefix, files, commit)
        return files

    def exists(self, key: str) -> bool:
        return self.local.exists(key) or self._shared_has(key)

    def list(self, prefix: str) -> list[str]:
        shared = (k for k in self.shared.list(prefix) if k not in self._hidden)
        return sorted(set(self.local.list(prefix)).union(shared))

    # -- writing ---------------------------------------------------------------------------

    def write(self, key: str, data: bytes, *, if_absent: bool = False) -> bool:
        if if_absent and not self.local.exists(key) and self._shared_has(key):
            return False  # present in this view (in the shared layer)
        wrote = self.local.write(key, data, if_absent=if_absent)
        if wrote and self.write_through:
            self.shared.write(key, data, if_absent=if_absent)
            self._hidden.discard(key)
        return wrote

    def write_entry(
        self, prefix: str, files: Mapping[str, bytes], commit: str, *, replace_uncommitted: bool = False
    ) -> bool:
        if self.exists(f"{prefix}/{commit}"):
            return False
        wrote = self.local.write_entry(prefix, files, commit, replace_uncommitted=replace_uncommitted)
        if wrote and self.write_through:
            self.shared.write_entry(prefix, files, commit, replace_uncommitted=replace_uncommitted)
            self._hidden.difference_update(f"{prefix}/{n}" for n in files)
        return wrote

    def delete(self, key: str) -> bool:
        removed = self.local.delete(key)
        if self.write_through:
            removed = self.shared.delete(key) or removed
        elif key not in self._hidden and self.shared.exists(key):
            self._hidden.add(key)
            removed = True
        return removed

    def delete_entry(self, prefix: str, names: list[str], commit: str) -> None:
        self.local.delete_entry(prefix, names, commit)
        if self.write_through:
            self.shared.delete_entry(prefix, names, commit)
        else:
            self._hidden.update(f"{prefix}/{n}" for n in {*names, commit})

    def prune_tmp(self, max_age_s: float = 3600.0) -> int:
        pruned = self.local.prune_tmp(max_age_s)
        return pruned + (self.shared.prune_tmp(max_age_s) if self.write_through else 0)
