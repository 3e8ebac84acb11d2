"""The :class:`Store` protocol and its two implementations: a local directory and fsspec.

Keys are relative ``/``-separated paths (``renders/objects/ab/<key>/meta.json``). Every write
is whole-or-nothing for readers:

* :class:`LocalStore` (a path, or ``file://DIR``) writes to a temp file under ``<root>/tmp``
  (same file system), fsyncs it, then renames it into place (``os.link`` for create-only
  writes, which fails when the name exists); a multi-file entry is written as a temp
  directory and published with one directory rename.
* :class:`FsspecStore` (``s3://``, ``gs://``, ``memory://``, ...) relies on the object store's
  atomic single-object PUT (a reader gets the old object, the whole new one, or none) and on
  conditional create (``If-None-Match: *``, fsspec ``mode="create"``) for create-only writes.
  Object stores have no directory rename, so a multi-file entry is published file by file
  with a *commit* file last (``meta.json`` of a render): an entry exists once its commit file
  does, and readers verify the rest against it.

Every store says whether it takes writes (:attr:`Store.read_only`, typed: callers ask the
store, they never probe for attributes). :mod:`harness.store.layers` wraps stores: a
:class:`~harness.store.layers.ReadOnlyStore` (every write raises :class:`StoreReadOnly`) and a
:class:`~harness.store.layers.LayeredStore` (a local layer read first, over a shared one).

Storage options for fsspec come from ``$T3D_AUDIT_STORE_OPTIONS`` (a JSON object, e.g.
``{"client_kwargs": {"endpoint_url": "http://127.0.0.1:9000"}}``) and from each library's own
environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``GOOGLE_APPLICATION_CREDENTIALS``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

from harness.core.errors import AuditError
from harness.core.fileio import give_plain_file_mode, prune_stale

OPTIONS_ENV = "T3D_AUDIT_STORE_OPTIONS"
INSTALL_HINT = "pip install 't3d-audit[distributed]' (fsspec, s3fs, ray)"


class StoreError(AuditError):
    """A store cannot be opened or used (bad URL, missing library, unreachable bucket)."""


class StoreReadOnly(StoreError):
    """A write (``write``, ``write_entry``, ``delete``, ``delete_entry``) reached a read-only
    store: refused loudly, never dropped silently, so a caller that meant to fill a store
    cannot believe it did."""


class StoreIncomplete(AuditError):
    """A read-only store lacks entries a run needs (reported with the command that fills it)."""


@runtime_checkable
class Store(Protocol):
    """Immutable objects by key at one location (see the module docstring)."""

    url: str

    @property
    def read_only(self) -> bool:
        """Whether every write raises :class:`StoreReadOnly` (reads still work)."""
        ...

    def read(self, key: str) -> bytes | None:
        """The object's bytes, or ``None`` when it does not exist."""
        ...

    def read_entry(self, prefix: str, names: list[str], commit: str) -> dict[str, bytes] | None:
        """The files of the entry under ``prefix/``: ``None`` when its commit file does not
        exist, else name -> bytes for the files found (commit file first read; a payload file
        that is missing is left out, and the caller treats the entry as damaged). Read entry
        files through this, not one by one: a :class:`~harness.store.layers.LayeredStore`
        takes the whole entry from one layer and copies it whole."""
        ...

    def exists(self, key: str) -> bool: ...

    def write(self, key: str, data: bytes, *, if_absent: bool = False) -> bool:
        """Publish ``data`` under ``key`` whole; with ``if_absent`` only when no object has that
        key (atomically). Returns whether this call wrote it."""
        ...

    def delete(self, key: str) -> bool:
        """Remove the object (no error when it is already gone); whether this call removed it
        (on an object store: whether it existed just before)."""
        ...

    def list(self, prefix: str) -> list[str]:
        """Keys under ``prefix`` (a folder-like key ending without ``/``), sorted."""
        ...

    def write_entry(
        self, prefix: str, files: Mapping[str, bytes], commit: str, *, replace_uncommitted: bool = False
    ) -> bool:
        """Publish the files of one entry under ``prefix/`` so that readers see all of them or
        none; ``commit`` names the file whose presence means the entry exists. Returns
        ``False`` (writing nothing new) when the entry exists already, or when another
        writer's uncommitted files differ from ours and ``replace_uncommitted`` (set by a
        writer holding the key's lease, for which they are a dead writer's leftovers) is off."""
        ...

    def delete_entry(self, prefix: str, names: list[str], commit: str) -> None:
        """Remove an entry: its commit file first, so it stops existing before it is gone."""
        ...

    def prune_tmp(self, max_age_s: float = 3600.0) -> int:
        """Delete temp files older than ``max_age_s`` left by killed writers (a local
        directory has them; object stores have none); returns how many."""
        ...


def read_entry_files(store: Store, prefix: str, names: list[str], commit: str) -> dict[str, bytes] | None:
    """:meth:`Store.read_entry` from single reads (commit file first): the two base stores'."""
    head = store.read(f"{prefix}/{commit}")
    if head is None:
        return None
    out = {commit: head}
    for name in names:
        if name != commit:
            data = store.read(f"{prefix}/{name}")
            if data is not None:
                out[name] = data
    return out


def is_url(location: str | Path) -> bool:
    """Whether ``location`` is a URL (``scheme://...``) rather than a plain path."""
    return isinstance(location, str) and "://" in location


def open_store(location: str | Path, **options: object) -> Store:
    """The store at ``location``: a path or ``file://`` URL (:class:`LocalStore`), or any other
    fsspec URL (:class:`FsspecStore`, ``options`` and ``$T3D_AUDIT_STORE_OPTIONS`` passed to
    the file system)."""
    if isinstance(location, Path) or not is_url(location):
        return LocalStore(Path(location))
    scheme, _, rest = location.partition("://")
    if scheme == "file":
        return LocalStore(Path(rest or "/"))
    return FsspecStore(location, **options)


def _check_key(key: str, where: str) -> str:
    parts = key.split("/")
    if not key or key.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise StoreError(f"malformed store key {key!r}", where=where)
    return key


class LocalStore:
    """A store in a local directory (see the module docstring); created when missing."""

    def __init__(self, root: Path | str):
        self.root = Path(root).expanduser().resolve()
        self.url = self.root.as_uri()

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    @property
    def read_only(self) -> bool:
        return False

    def path(self, key: str) -> Path:
        return self.root / _check_key(key, self.url)

    def _tmp(self) -> Path:
        tmp = self.root / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        return tmp

    def read(self, key: str) -> bytes | None:
        try:
            return self.path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def read_entry(self, prefix: str, names: list[str], commit: str) -> dict[str, bytes] | None:
        return read_entry_files(self, prefix, names, commit)

    def write(self, key: str, data: bytes, *, if_absent: bool = False) -> bool:
        final = self.path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="obj.", suffix=".tmp", dir=self._tmp())
        try:
            give_plain_file_mode(fd)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if if_absent:
                try:
                    os.link(tmp, final)  # atomic create-only: fails when the name exists
                except FileExistsError:
                    return False
            else:
                os.replace(tmp, final)
            return True
        finally:
            Path(tmp).unlink(missing_ok=True)

    def delete(self, key: str) -> bool:
        try:
            self.path(key).unlink()
        except FileNotFoundError:
            return False  # another process removed it first
        return True

    def list(self, prefix: str) -> list[str]:
        cut = len(str(self.root)) + 1  # os.walk: one scandir per folder, no stat per file
        return sorted(f"{folder[cut:]}/{name}" for folder, _, names in os.walk(self.path(prefix))
                      for name in names)  # fmt: skip

    def write_entry(
        self, prefix: str, files: Mapping[str, bytes], commit: str, *, replace_uncommitted: bool = False
    ) -> bool:
        final = self.path(prefix)  # one directory rename: nothing is ever half-published here
        if final.exists():
            if (final / commit).exists() or not final.is_dir():
                return False
            # a directory without its commit file is no entry (published entries are renamed
            # in whole): the leftover of a damaged or hand-edited entry, set aside first
            self.delete_entry(prefix, list(files), commit)
        tmp = self._tmp() / f"entry.{uuid.uuid4().hex}"
        tmp.mkdir()
        try:
            for name, data in files.items():
                with open(tmp / name, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
            final.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(tmp, final)  # one rename: readers see the whole entry or none
            except OSError:
                if not final.is_dir():
                    raise
                return False  # published by another writer meanwhile
            return True
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def delete_entry(self, prefix: str, names: list[str], commit: str) -> None:
        entry = self.path(prefix)
        trash = self._tmp() / f"trash.{uuid.uuid4().hex}"
        try:
            os.rename(entry, trash)  # atomic: readers never see half an entry
        except FileNotFoundError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    def prune_tmp(self, max_age_s: float = 3600.0) -> int:
        """Delete temp files/dirs older than ``max_age_s`` (left by killed writers)."""
        return prune_stale(self.root / "tmp", max_age_s)


def _options_from_env() -> dict[str, object]:
    raw = os.environ.get(OPTIONS_ENV, "").strip()
    if not raw:
        return {}
    from harness.core import bounded_input
    try:  # bounded: deep nesting is a JSONDecodeError (a ValueError), not a RecursionError
        value = bounded_input.loads(raw, where=OPTIONS_ENV)
    except ValueError as exc:
        raise StoreError(f"${OPTIONS_ENV} is not JSON: {exc}", where=OPTIONS_ENV) from exc
    if not isinstance(value, dict):
        raise StoreError(f"${OPTIONS_ENV} must be a JSON object", where=OPTIONS_ENV)
    return value


def _protocols(fs: object) -> tuple[str, ...]:
    proto = getattr(fs, "protocol", ())
    return (proto,) if isinstance(proto, str) else tuple(proto)


class FsspecStore:
    """A store at an fsspec URL (object stores and anything else fsspec reaches)."""

    def __init__(self, url: str, **options: object):
        try:
            import fsspec
        except ImportError:
            raise StoreError(
                f"store {url} needs fsspec", where=url, hint=INSTALL_HINT
            ) from None
        merged = {**_options_from_env(), **options}
        # listings are never cached: other machines publish into the same prefixes
        merged.setdefault("use_listings_cache", False)
        merged.setdefault("skip_instance_cache", True)
        try:
            self.fs, root = fsspec.url_to_fs(url, **merged)
        except ImportError as exc:
            raise StoreError(
                f"store {url}: {exc}", where=url, hint=INSTALL_HINT
            ) from None
        except (ValueError, TypeError) as exc:
            raise StoreError(f"cannot open store {url}: {exc}", where=url) from exc
        self.root = root.rstrip("/")
        self.url = url.rstrip("/")

    def __repr__(self) -> str:
        return f"FsspecStore({self.url!r})"

    @property
    def read_only(self) -> bool:
        return False

    def path(self, key: str) -> str:
        return f"{self.root}/{_check_key(key, self.url)}"

    def read(self, key: str) -> bytes | None:
        try:
            return self.fs.cat_file(self.path(key))
        except FileNotFoundError:
            return None

    def exists(self, key: str) -> bool:
        try:
            return bool(self.fs.isfile(self.path(key)))
        except FileNotFoundError:
            return False

    def read_entry(self, prefix: str, names: list[str], commit: str) -> dict[str, bytes] | None:
        return read_entry_files(self, prefix, names, commit)

    def write(self, key: str, data: bytes, *, if_absent: bool = False) -> bool:
        path = self.path(key)
        if not if_absent:
            self.fs.pipe_file(path, data)
            return True
        try:
            self.fs.pipe_file(path, data, mode="create")  # conditional put: If-None-Match: *
        except FileExistsError:
            return False
        except (TypeError, NotImplementedError):
            # a file system without conditional create: check then put (a narrow race left;
            # leases only save work, the content-addressed entries stay correct)
            if self.exists(key):
                return False
            self.fs.pipe_file(path, data)
        return True

    def delete(self, key: str) -> bool:
        if not self.exists(key):  # object stores delete absent keys without an error
            return False
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self.path(key))
        return True

    def list(self, prefix: str) -> list[str]:
        base = self.path(prefix)
        parent, _, name = base.rpartition("/")
        try:
            if "s3" in _protocols(self.fs):  # one LIST request (plain find adds a HEAD + LIST)
                found = self.fs.find(parent, prefix=name + "/")
            else:
                found = self.fs.find(base)
        except FileNotFoundError:
            return []
        cut = len(self.root) + 1
        return sorted(str(p)[cut:] for p in found if str(p).startswith(base + "/"))

    def write_entry(
        self, prefix: str, files: Mapping[str, bytes], commit: str, *, replace_uncommitted: bool = False
    ) -> bool:
        # Payload files are created only if absent (or found equal): a writer must never
        # overwrite the payload another writer is about to commit, or has just committed, with
        # different bytes (renders differ slightly across machines), which would tear the entry.
        if self.exists(f"{prefix}/{commit}"):
            return False
        for name, data in files.items():
            if name == commit:
                continue
            key = f"{prefix}/{name}"
            if self.write(key, data, if_absent=True) or self.read(key) == data:
                continue
            if not replace_uncommitted or self.exists(f"{prefix}/{commit}"):
                return False  # another writer's entry (in progress or published): leave it
            self.write(key, data)  # the lease holder: left by a writer that died uncommitted
        return self.write(f"{prefix}/{commit}", files[commit], if_absent=True)

    def delete_entry(self, prefix: str, names: list[str], commit: str) -> None:
        self.delete(f"{prefix}/{commit}")
        for name in names:
            if name != commit:
                self.delete(f"{prefix}/{name}")

    def prune_tmp(self, max_age_s: float = 3600.0) -> int:
        return 0  # single PUTs are atomic: an object store keeps no temp files
