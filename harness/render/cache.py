"""The render cache: verified, immutable, content-addressed renders in a store.

One implementation, :class:`RenderCacheBase`, on any :class:`harness.store.Store`; what
differs between a local cache directory, a shared store and a local layer over a shared one is
only the store and how writers coordinate:

* :class:`RenderCache` (``RenderCache(dir)``, the zero-config default): a
  :class:`~harness.store.LocalStore` at ``dir``, entries at ``<dir>/objects/<key[:2]>/<key>/``,
  per-key file locks under ``<dir>/locks`` (released by the OS when a process dies).
* :class:`harness.render.store_cache.StoreRenderCache` (``StoreRenderCache(store)``): any
  store (``file://``, ``s3://``, a :class:`~harness.store.ReadOnlyStore`, a
  :class:`~harness.store.LayeredStore`), entries under ``renders/``, lease markers with an
  expiry between machines (:mod:`harness.store.leases`).

Entry layout (unchanged): ``objects/<key[:2]>/<key>/{image.png, meta.json}``. Publication is
the store's (one directory rename locally; image then ``meta.json`` as the commit object,
created only if absent, on object stores), so readers see a whole entry or none. The lock or
lease only avoids duplicate work; correctness comes from publication and verified reads:
``meta.json`` (canonical JSON) names the key it was published under and carries the PNG's
sha256 and shape, plus ``meta_sha256``, the sha256 of its own other fields (and, with the
user's cache secret, ``meta_hmac``: the HMAC-SHA256 of the rest of ``meta.json``,
:mod:`harness.core.cacheseal`). An entry that fails any check (truncated, edited, half-deleted,
swapped with or copied from another key's directory, or written before ``meta_sha256``
existed) is discarded, warned about and counted (``harness.core.cacheseal.discarded``), and rendered
again; in a read-only store it is reported the same way but left for a writer to replace.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from filelock import FileLock
from PIL import Image

from harness.core.cacheseal import CorruptEntry, check_mac, discarded, mac, secret
from harness.core.errors import RenderError
from harness.core.hashing import canonical_json, sha256_bytes, sha256_json
from harness.core.paths import default_cache_dir
from harness.protocol.configurations import RenderConfig
from harness.render.settings import RENDERER_REVISION, blender_version
from harness.store import LocalStore, ReadOnlyStore, Store, leases, writable

IMAGE = "image.png"
META = "meta.json"
PREFIX = "renders"  # a store's renders (and the lease names of renders: ``renders/<key>``)
LEASE_MARGIN_S = 120.0  # added to the render timeout: the lease outlives any live render
POLL_S = 0.25

#: what :meth:`RenderCacheBase.try_render` did
RENDERED, CACHED, BUSY = "rendered", "cached", "busy"


class _Corrupt(CorruptEntry):
    """An entry exists but fails verification."""


class StoreMissing(RenderError):
    """A read-only store lacks an entry (``--audit-store`` without ``--audit-store-fill``)."""


def default_render_cache_dir() -> Path:
    """``<default cache dir>/renders`` (``$T3D_AUDIT_CACHE_DIR`` or the per-user cache dir)."""
    return default_cache_dir() / "renders"


def encode_png(rgba: np.ndarray) -> bytes:
    """Lossless PNG bytes of an (H, W, 4) uint8 image, without metadata (deterministic)."""
    buf = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buf, format="PNG", compress_level=4)
    return buf.getvalue()


def decode_png(data: bytes) -> np.ndarray:
    """(H, W, 4) uint8 array from PNG bytes (RGB PNGs get an opaque alpha)."""
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGBA")).copy()


def key_inputs(scene_identity: str, cfg: RenderConfig, device: str = "cpu") -> dict[str, object]:
    """The hashed content of a render-cache key (also stored in ``meta.json``)."""
    out: dict[str, object] = {
        "scene": scene_identity,
        "render": cfg.to_dict(),
        "blender": blender_version(),
        "renderer": RENDERER_REVISION,
    }
    if device != "cpu":  # GPU renders differ in the last bits: never mix them with CPU ones
        out["device"] = device
    return out


def render_key(scene_identity: str, cfg: RenderConfig, device: str = "cpu") -> str:
    """sha256 of the canonical JSON of {scene identity, render config, Blender, revision}."""
    return sha256_json(key_inputs(scene_identity, cfg, device))


class _FileLocks:
    """Per-key file locks under ``<root>/locks/<key[:2]>/<key>.lock`` (one machine)."""

    def __init__(self, root: Path):
        self.root = root

    def _lock(self, key: str) -> FileLock:
        locks = self.root / "locks" / key[:2]
        locks.mkdir(parents=True, exist_ok=True)
        return FileLock(str(locks / f"{key}.lock"))

    @contextmanager
    def hold(self, key: str) -> Iterator[bool]:
        """Hold the key's lock (waits for it): yields ``True``."""
        with self._lock(key):
            yield True

    guard = hold  # re-checking and discarding a damaged entry happens under the lock too


class _Leases:
    """Lease markers ``leases/renders/<key>.lease`` in ``store`` (any number of machines)."""

    def __init__(self, store: Store, ttl_s: float):
        self.store = store
        self.ttl_s = ttl_s

    @contextmanager
    def hold(self, key: str) -> Iterator[bool]:
        """Take the key's lease without waiting: yields whether we hold it."""
        lease = leases.acquire(self.store, f"{PREFIX}/{key}", self.ttl_s)
        if lease is None:
            yield False
            return
        try:
            yield True
        finally:
            leases.release(self.store, lease)

    @contextmanager
    def guard(self, key: str) -> Iterator[None]:
        yield  # discarding a damaged entry needs no lease (any reader may, and the next writes)


class RenderCacheBase:
    """Verified, immutable, content-addressed RGBA renders in ``store`` under ``prefix``
    (``""``: at the store's root). ``lock_root``: coordinate writers with file locks under
    ``<lock_root>/locks`` (one machine); else with leases in ``lease_store`` (default: the
    store, unwrapped of :class:`~harness.store.ReadOnlyStore`), ``lease_ttl_s`` bounding how
    long a dead renderer's lease blocks others. Blender's output goes to ``log_dir``.

    A read-only store (``store.read_only``) serves what it has; a miss raises
    :class:`StoreMissing` (and is remembered in :attr:`missing`) instead of rendering.
    """

    key = staticmethod(render_key)

    def __init__(
        self,
        store: Store,
        *,
        prefix: str = PREFIX,
        lock_root: Path | None = None,
        lease_store: Store | None = None,
        lease_ttl_s: float = 600.0 + LEASE_MARGIN_S,
        log_dir: Path | None = None,
    ):
        self.store = store
        self.prefix = prefix
        self.lease_ttl_s = lease_ttl_s
        self._coord: _FileLocks | _Leases = (
            _FileLocks(lock_root) if lock_root is not None
            else _Leases(lease_store or writable(store), lease_ttl_s)
        )  # fmt: skip
        self._log_dir = log_dir
        self.missing: set[str] = set()  # keys found absent in a read-only store

    @property
    def url(self) -> str:
        return f"{self.store.url}/{self.prefix}" if self.prefix else self.store.url

    @property
    def read_only(self) -> bool:
        """Whether the store takes no writes (then a miss raises :class:`StoreMissing`)."""
        return self.store.read_only

    @read_only.setter
    def read_only(self, value: bool) -> None:
        """Wrap the store in (or unwrap it of) :class:`~harness.store.ReadOnlyStore`."""
        base = writable(self.store)
        self.store = ReadOnlyStore(base) if value else base

    @property
    def log_dir(self) -> Path:
        """Where the render service writes Blender's output (always on this machine)."""
        return self._log_dir if self._log_dir is not None else default_cache_dir() / "logs"

    def _prefix(self, key: str) -> str:
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise RenderError(f"malformed render-cache key {key!r}", where=self.url)
        entry = f"objects/{key[:2]}/{key}"
        return f"{self.prefix}/{entry}" if self.prefix else entry

    def _where(self, key: str) -> str:
        return f"{self.url}/objects/{key[:2]}/{key}"

    # -- reading ---------------------------------------------------------------------------

    def contains(self, key: str) -> bool:
        """Whether a published entry exists (its commit file; unverified: cheap, for planning
        and progress)."""
        return self.store.exists(f"{self._prefix(key)}/{META}")

    def _read(self, key: str) -> np.ndarray | None:
        files = self.store.read_entry(self._prefix(key), [IMAGE, META], META)
        if files is None:
            return None
        if IMAGE not in files:
            raise _Corrupt("meta.json without image.png")
        return verify_entry(key, files[META], files[IMAGE])

    def get(self, key: str) -> np.ndarray | None:
        """The cached (H, W, 4) uint8 image, or ``None`` if absent or found damaged (then
        discarded and reported)."""
        try:
            return self._read(key)
        except CorruptEntry:
            with self._coord.guard(key):
                return self._get_checked(key)  # another process may have replaced it meanwhile

    def _get_checked(self, key: str) -> np.ndarray | None:
        """:meth:`get` for a caller holding the key's lock or lease (file locks do not nest)."""
        try:
            return self._read(key)
        except CorruptEntry as exc:
            self._discard(key, str(exc))
            return None

    def _discard(self, key: str, reason: str) -> None:
        if self.store.read_only:  # a reader never deletes: leave it to a writer
            discarded("render", self._where(key), f"{reason}; left in the read-only store")
            return
        self.store.delete_entry(self._prefix(key), [IMAGE, META], META)
        discarded("render", self._where(key), reason)

    def meta(self, key: str) -> dict[str, object] | None:
        """The entry's ``meta.json`` content, or ``None`` if absent/unreadable (unverified)."""
        files = self.store.read_entry(self._prefix(key), [IMAGE, META], META)
        try:
            return None if files is None else json.loads(files[META])
        except ValueError:
            return None

    # -- writing ---------------------------------------------------------------------------

    def _publish(
        self, key: str, image: np.ndarray, meta: dict[str, object] | None, *, leased: bool = False
    ) -> None:
        """Publish ``image``; ``leased``: we hold the key's lease, so uncommitted files of
        another writer are a dead writer's and may be replaced (else they are left alone)."""
        check_image(image, key)
        self.store.write_entry(self._prefix(key), entry_files(key, image, meta), META,
                               replace_uncommitted=leased)  # fmt: skip

    def put(self, key: str, image: np.ndarray, meta: dict[str, object] | None = None) -> None:
        """Publish ``image`` under ``key`` unless a valid entry already exists."""
        check_image(image, key)
        with self._coord.guard(key):
            if self._get_checked(key) is None:
                self._publish(key, image, meta)

    def try_render(
        self, key: str, fn: Callable[[], np.ndarray], meta: dict[str, object] | None = None
    ) -> tuple[str, np.ndarray | None]:
        """Render ``key`` unless it is cached (or, with leases, leased by another machine:
        then this never waits). Returns ``(CACHED, image)``, ``(RENDERED, image)`` or
        ``(BUSY, None)``. Exceptions from ``fn`` propagate; nothing is stored (failures are
        never cached) and the lock or lease is released."""
        image = self.get(key)
        if image is not None:
            return CACHED, image
        if self.read_only:
            self.missing.add(key)
            raise StoreMissing(f"render {key[:16]}... is not in the store", where=self.url,
                               hint="fill the store first (t3d-audit warm --store ...)")  # fmt: skip
        with self._coord.hold(key) as held:
            if not held:
                return BUSY, None
            image = self._get_checked(key)  # published by the previous holder meanwhile
            if image is not None:
                return CACHED, image
            image = fn()
            check_image(image, key)
            self._publish(key, image, meta, leased=True)
            return RENDERED, image

    def get_or_render(
        self,
        key: str,
        fn: Callable[[], np.ndarray],
        meta: dict[str, object] | None = None,
    ) -> np.ndarray:
        """The cached image, or ``fn()`` rendered once (across processes, or across machines
        sharing a store: waits while another holds the key's lease), published and returned.

        Exceptions from ``fn`` propagate and nothing is stored: failures are never cached.
        """
        while True:
            status, image = self.try_render(key, fn, meta)
            if status != BUSY:
                assert image is not None
                return image
            time.sleep(POLL_S)

    def prune_tmp(self, max_age_s: float = 3600.0) -> int:
        """Delete temp files older than ``max_age_s`` (left by killed writers); returns how
        many. Young ones may belong to a live writer and are kept."""
        return self.store.prune_tmp(max_age_s)


class RenderCache(RenderCacheBase):
    """The render cache in a local directory ``root`` (default ``<cache dir>/renders``):
    entries at ``<root>/objects/``, file locks under ``<root>/locks``, Blender's output under
    ``<root>/logs``."""

    def __init__(self, root: Path | str | None = None):
        self.root = Path(root) if root is not None else default_render_cache_dir()
        super().__init__(LocalStore(self.root), prefix="", lock_root=self.root,
                         log_dir=self.root / "logs")  # fmt: skip

    def entry_dir(self, key: str) -> Path:
        """``<root>/objects/<key[:2]>/<key>``."""
        return self.root / self._prefix(key)

    def _where(self, key: str) -> str:
        return str(self.entry_dir(key))


def entry_files(key: str, image: np.ndarray, meta: dict[str, object] | None) -> dict[str, bytes]:
    """The files of the entry of ``image`` under ``key``: ``image.png`` and ``meta.json``
    (``meta`` plus the key, the PNG's sha256 and shape, ``meta_sha256`` and, with the user's
    cache secret, ``meta_hmac``), commit file last."""
    png = encode_png(image)
    record = {**(meta or {}), "key": key, "png_sha256": sha256_bytes(png), "shape": list(image.shape)}
    record.pop("meta_sha256", None)
    record.pop("meta_hmac", None)
    record["meta_sha256"] = sha256_json(record)
    k = secret()
    if k is not None:
        record["meta_hmac"] = mac(canonical_json(record), k)
    return {IMAGE: png, META: canonical_json(record)}


def verify_entry(key: str, raw_meta: bytes, data: bytes) -> np.ndarray:
    """The (H, W, 4) image of an entry read as ``meta.json`` bytes and ``image.png`` bytes;
    raises :class:`harness.core.cacheseal.CorruptEntry` unless both are intact and for ``key``."""
    try:
        meta = json.loads(raw_meta)
    except ValueError as exc:
        raise _Corrupt(f"unreadable entry: {exc}") from exc
    _check_meta(raw_meta, meta, key)
    if sha256_bytes(data) != meta.get("png_sha256"):
        raise _Corrupt("image.png does not match the sha256 in meta.json")
    try:
        image = decode_png(data)
    except Exception as exc:
        raise _Corrupt(f"image.png does not decode: {exc}") from exc
    if list(image.shape) != meta.get("shape"):
        raise _Corrupt(f"image shape {image.shape} differs from meta {meta.get('shape')}")
    return image


def _check_meta(raw: bytes, meta: object, key: str) -> None:
    """Raise :class:`_Corrupt` unless ``meta.json`` is intact and was written for ``key``."""
    if not isinstance(meta, dict):
        raise _Corrupt("meta.json is not a JSON object")
    rest = {k: v for k, v in meta.items() if k not in ("meta_sha256", "meta_hmac")}
    if "meta_sha256" not in meta:
        raise _Corrupt("meta.json has no meta_sha256 (written by an older version)")
    if meta["meta_sha256"] != sha256_json(rest) or canonical_json(meta) != raw:
        raise _Corrupt("meta.json differs from what was published (meta_sha256 mismatch)")
    sealed_part = {k: v for k, v in meta.items() if k != "meta_hmac"}
    try:
        check_mac(meta.get("meta_hmac"), canonical_json(sealed_part), secret(), "meta.json")
    except CorruptEntry as exc:
        raise _Corrupt(str(exc)) from exc
    if meta.get("key") != key:
        raise _Corrupt(f"meta.json was written for key {str(meta.get('key'))[:80]!r}, not this one")


def check_image(image: np.ndarray, key: str) -> None:
    if not (
        isinstance(image, np.ndarray)
        and image.dtype == np.uint8
        and image.ndim == 3
        and image.shape[2] == 4
        and image.shape[0] > 0
        and image.shape[1] > 0
    ):
        raise RenderError(
            f"render function returned {getattr(image, 'shape', type(image))}, "
            "expected an (H, W, 4) uint8 array",
            where=f"render cache key {key}",
        )
