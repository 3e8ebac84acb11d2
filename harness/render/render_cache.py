"""Content-addressed render cache shared by any number of processes (xdist workers, warm jobs).

Layout: ``<root>/objects/<key[:2]>/<key>/{image.png, meta.json}``. Entries are immutable:
a render is written to a temp dir under ``<root>/tmp`` (same filesystem) and published with
one ``os.rename``, so readers see a whole entry or none. The per-key file lock under
``<root>/locks`` only avoids duplicate work; correctness comes from the rename. Reads are
verified: ``meta.json`` (canonical JSON) names the key of the directory it was published as
and carries the PNG's sha256 and shape, plus ``meta_sha256``, the sha256 of its own other
fields (and, with the user's cache secret, ``meta_hmac``: the HMAC-SHA256 of the rest of
``meta.json``, :mod:`harness.cacheseal`). An entry that fails any check (truncated, edited,
half-deleted, swapped with or copied from another key's directory, or written before ``meta_sha256`` existed) is discarded, warned
about and counted (``harness.cacheseal.discarded``), and rendered again.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock
from PIL import Image

from harness.cacheseal import CorruptEntry, check_mac, discarded, mac, secret
from harness.errors import RenderError
from harness.fileio import prune_stale
from harness.hashing import canonical_json, sha256_bytes, sha256_json
from harness.paths import default_cache_dir
from harness.protocol import RenderConfig
from harness.render.settings import RENDERER_REVISION, blender_version

IMAGE = "image.png"
META = "meta.json"


class _Corrupt(CorruptEntry):
    """An entry exists but fails verification."""


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


def key_inputs(scene_identity: str, cfg: RenderConfig, device: str = "cpu") -> dict[str, Any]:
    """The hashed content of a render-cache key (also stored in ``meta.json``)."""
    out: dict[str, Any] = {
        "scene": scene_identity,
        "render": cfg.to_dict(),
        "blender": blender_version(),
        "renderer": RENDERER_REVISION,
    }
    if device != "cpu":  # GPU renders differ in the last bits: never mix them with CPU ones
        out["device"] = device
    return out


class RenderCache:
    """Verified, immutable, content-addressed store of RGBA renders under ``root``."""

    def __init__(self, root: Path | str | None = None):
        self.root = Path(root) if root is not None else default_render_cache_dir()

    # -- keys and paths --------------------------------------------------------------------

    @staticmethod
    def key(scene_identity: str, cfg: RenderConfig, device: str = "cpu") -> str:
        """sha256 of the canonical JSON of {scene identity, render config, Blender, revision}."""
        return sha256_json(key_inputs(scene_identity, cfg, device))

    def entry_dir(self, key: str) -> Path:
        """``<root>/objects/<key[:2]>/<key>``."""
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise RenderError(f"malformed render-cache key {key!r}", where=str(self.root))
        return self.root / "objects" / key[:2] / key

    def _lock(self, key: str) -> FileLock:
        locks = self.root / "locks" / key[:2]
        locks.mkdir(parents=True, exist_ok=True)
        return FileLock(str(locks / f"{key}.lock"))

    # -- reading ---------------------------------------------------------------------------

    def _read(self, key: str) -> np.ndarray | None:
        entry = self.entry_dir(key)
        if not entry.is_dir():
            return None
        try:
            raw = (entry / META).read_bytes()
            data = (entry / IMAGE).read_bytes()
        except OSError as exc:
            raise _Corrupt(f"unreadable entry: {exc}") from exc
        return verify_entry(key, raw, data)

    def _discard(self, key: str) -> None:
        """Move a bad entry aside atomically, then delete it (readers never see half of it)."""
        entry = self.entry_dir(key)
        trash = self.root / "tmp" / f"trash-{uuid.uuid4().hex}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(entry, trash)
        except FileNotFoundError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    @property
    def log_dir(self) -> Path:
        """Where the render service writes Blender's output (``<root>/logs``)."""
        return self.root / "logs"

    def contains(self, key: str) -> bool:
        """Whether a published entry exists (unverified; cheap, for planning and progress)."""
        return (self.entry_dir(key) / META).is_file()

    def get(self, key: str) -> np.ndarray | None:
        """The cached (H, W, 4) uint8 image, or ``None`` if absent or found corrupt (discarded)."""
        try:
            return self._read(key)
        except _Corrupt:
            with self._lock(key):
                return self._get_locked(key)  # another process may have replaced it meanwhile

    def _get_locked(self, key: str) -> np.ndarray | None:
        """:meth:`get` for a caller holding the key's lock (file locks do not nest)."""
        try:
            return self._read(key)
        except _Corrupt as exc:
            self._discard(key)
            discarded("render", self.entry_dir(key), str(exc))
            return None

    def meta(self, key: str) -> dict[str, Any] | None:
        """The entry's ``meta.json`` content, or ``None`` if absent/unreadable."""
        try:
            return json.loads((self.entry_dir(key) / META).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    # -- writing ---------------------------------------------------------------------------

    def _publish(self, key: str, image: np.ndarray, meta: dict[str, Any] | None) -> None:
        files = entry_files(key, image, meta)
        tmp = self.root / "tmp" / f"{key}.{uuid.uuid4().hex}"
        tmp.mkdir(parents=True)
        try:
            for name, data in files.items():
                with open(tmp / name, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
            final = self.entry_dir(key)
            final.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(tmp, final)
            except OSError:
                if not final.is_dir():
                    raise
                # an equal entry was published meanwhile (lock lost or not used): keep it
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def prune_tmp(self, max_age_s: float = 3600.0) -> int:
        """Delete temp dirs older than ``max_age_s`` (left by killed writers); returns how many.

        Young ones may belong to a live writer and are kept.
        """
        return prune_stale(self.root / "tmp", max_age_s)

    def put(self, key: str, image: np.ndarray, meta: dict[str, Any] | None = None) -> None:
        """Publish ``image`` under ``key`` unless a valid entry already exists."""
        check_image(image, key)
        with self._lock(key):
            if self._get_locked(key) is None:
                self._publish(key, image, meta)

    def get_or_render(
        self,
        key: str,
        fn: Callable[[], np.ndarray],
        meta: dict[str, Any] | None = None,
    ) -> np.ndarray:
        """The cached image, or ``fn()`` rendered once (across processes), published and returned.

        Exceptions from ``fn`` propagate and nothing is stored: failures are never cached.
        """
        image = self.get(key)
        if image is not None:
            return image
        with self._lock(key):
            image = self._get_locked(key)  # rendered by another process while we waited
            if image is not None:
                return image
            image = fn()
            check_image(image, key)
            self._publish(key, image, meta)
            return image


def entry_files(key: str, image: np.ndarray, meta: dict[str, Any] | None) -> dict[str, bytes]:
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
    raises :class:`harness.cacheseal.CorruptEntry` unless both are intact and for ``key``."""
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


def _check_meta(raw: bytes, meta: Any, key: str) -> None:
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
