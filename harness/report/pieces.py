"""Cached report pieces: what the report writer made before, reused while its inputs are equal.

A warm audit run measures nothing new, so the report it writes is the one the last run wrote.
The writer therefore keeps, in the audit cache, the pieces that cost time to make, each under
a key that hashes *every* input of the piece (data, the code that makes it, the versions of the
libraries that draw or encode it), and reuses the stored bytes on a hit. A piece is stored
exactly as it was written, so a report assembled from cached pieces is byte-identical to one
computed afresh. Layout under the cache dir (docs/formats.md#cache-layout)::

    thumbs/<key[:2]>/<key>.jpg                  sealed thumbnail (harness.measure.thumbs)
    report_pieces/<kind>/<key[:2]>/<key>.bin    sealed piece (a file bundle or page fragment)

Every entry is a sealed file (:mod:`harness.core.cacheseal`: seal line, ``\\n``, payload) published
with :func:`harness.core.fileio.write_bytes_atomic`, so readers see a whole entry or none; a read
checks the seal against the key, and an entry that fails is deleted, counted and recomputed.
No file lock: two writers of one key write equal bytes, and the rename makes either win whole.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from harness.core import cacheseal
from harness.core.fileio import write_bytes_atomic
from harness.core.hashing import canonical_json, sha256_json

THUMBS_DIR = "thumbs"
PIECES_DIR = "report_pieces"
BUNDLE_FORMAT = "t3d-audit-report-piece/1"


class SealedEntries:
    """Sealed files ``<root>/<key[:2]>/<key><suffix>``, counted as cache ``kind`` on discard."""

    def __init__(self, root: Path, kind: str, suffix: str = ".bin", seal_prefix: str = ""):
        self.root = Path(root)
        self.kind = kind
        self.suffix = suffix
        self.seal_prefix = seal_prefix

    def path(self, key: str) -> Path:
        """Where the entry of ``key`` lives (a lowercase hex key)."""
        if len(key) < 3 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"malformed {self.kind} cache key {key!r}")
        return self.root / key[:2] / f"{key}{self.suffix}"

    def seal_key(self, key: str) -> str:
        """The key written in the entry's seal (its cache-relative name, so a moved entry fails)."""
        return f"{self.seal_prefix}{key}"

    def get(self, key: str) -> bytes | None:
        """The verified payload of ``key``; ``None`` when absent or (discarded as) corrupt."""
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            return cacheseal.read_sealed(path, self.seal_key(key))
        except cacheseal.CorruptEntry as exc:
            path.unlink(missing_ok=True)
            cacheseal.discarded(self.kind, path, str(exc))
            return None

    def put(self, key: str, payload: bytes) -> None:
        """Publish ``payload`` under ``key`` (atomically; an equal entry may be replaced)."""
        write_bytes_atomic(self.path(key), cacheseal.sealed(self.seal_key(key), payload))


def thumb_entries(cache_dir: Path) -> SealedEntries:
    """The thumbnail cache under ``cache_dir`` (payload: the JPEG bytes of one thumbnail)."""
    return SealedEntries(Path(cache_dir) / THUMBS_DIR, "thumbs", ".jpg", f"{THUMBS_DIR}/")


def piece_entries(cache_dir: Path, kind: str) -> SealedEntries:
    """The report pieces of ``kind`` (``derived``, ``html-sections``) under ``cache_dir``."""
    return SealedEntries(
        Path(cache_dir) / PIECES_DIR / kind, f"report pieces ({kind})", ".bin", f"{PIECES_DIR}/{kind}/"
    )


# ----------------------------------------------------------------------------- key material


def report_sources() -> list[Path]:
    """Every module and asset of ``harness/report/`` plus the records reader: the code a
    report piece may be made with (hashed whole, so a new import between them is covered)."""
    here = Path(__file__).parent
    assets = here / "html_assets"
    return [*sorted(here.rglob("*.py")), *sorted(p for p in assets.rglob("*") if p.is_file()),
            here.parent / "protocol" / "records.py"]


def piece_key(kind: str, inputs: Mapping[str, object]) -> str:
    """The cache key of a piece of ``kind`` made from ``inputs`` (JSON-ready)."""
    return sha256_json({"format": BUNDLE_FORMAT, "kind": kind, "inputs": dict(inputs)})


# ----------------------------------------------------------------------------- file bundles


def pack_files(files: Mapping[str, bytes]) -> bytes:
    """One payload holding ``{relative path: bytes}`` (canonical JSON, bytes as base64)."""
    return canonical_json(
        {"format": BUNDLE_FORMAT,
         "files": {k: base64.b64encode(files[k]).decode("ascii") for k in sorted(files)}}
    )


def unpack_files(payload: bytes) -> dict[str, bytes]:
    """The files of a :func:`pack_files` payload; ``ValueError`` if it is not one."""
    doc = json.loads(payload)
    if not isinstance(doc, dict) or doc.get("format") != BUNDLE_FORMAT or not isinstance(doc.get("files"), dict):
        raise ValueError("not a report-piece bundle")
    out = {}
    for rel, data in doc["files"].items():
        if not isinstance(rel, str) or rel.startswith("/") or ".." in Path(rel).parts:
            raise ValueError(f"bundle path {rel!r} leaves its directory")
        out[rel] = base64.b64decode(data, validate=True)
    return out


def read_files(directory: Path, names: Iterable[str] | None = None) -> dict[str, bytes]:
    """``{relative POSIX path: bytes}`` of the files under ``directory`` (all, or ``names``)."""
    directory = Path(directory)
    if names is None:
        names = sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())
    return {n: (directory / n).read_bytes() for n in names}


def write_files(directory: Path, files: Mapping[str, bytes]) -> None:
    """Write each ``{relative path: bytes}`` under ``directory`` (parents created)."""
    directory = Path(directory)
    for rel in sorted(files):
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(files[rel])
