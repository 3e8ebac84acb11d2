"""What the importers read of a glTF 2.0 / GLB file themselves: the JSON, never the geometry.

Geometry, materials and textures are read by Blender's glTF importer only
(``harness.render.gltfscene``), so what is measured is what is rendered. This module checks
the container and the JSON, the glTF version, ``extensionsRequired`` (an extension Blender
cannot decode is an error that names it and says what to do), bounds the JSON before parsing
it (:class:`GltfLimits`, whose other fields ``harness.scenes.gltf_limits`` checks), and lists
the files a
``.gltf`` pulls in (buffers and images beside it, which become part of the asset). Every
malformed input raises :class:`harness.core.errors.ImportError_` naming the file and a JSON pointer.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import NoReturn

from harness.core import bounded_input
from harness.core.errors import AuditError, ImportError_
from harness.render.gltfscene import SUPPORTED_EXTENSIONS
from harness.scenes.meshbytes import mesh_bytes, mesh_head

_GLB_MAGIC = 0x46546C67  # "glTF"
_CHUNK_JSON = 0x4E4F534A  # "JSON"
_CHUNK_BIN = 0x004E4942  # "BIN\0"
GLB_MAX_CHUNKS = 1024  # a GLB holds a JSON and a BIN chunk; extensions may add a few more

# What to do about a required extension Blender's importer cannot decode.
_EXTENSION_HINTS = {
    "EXT_meshopt_compression": "decompress meshopt first, e.g. "
    "`npx @gltf-transform/cli copy in.glb out.glb` (it decodes meshopt on read), "
    "then import out.glb",
    "KHR_texture_basisu": "convert the KTX2/Basis textures to PNG or JPEG first, e.g. "
    "`npx @gltf-transform/cli png in.glb out.glb`, then import out.glb",
}


@dataclass(frozen=True)
class Gltf:
    """A parsed glTF asset: ``doc`` (the JSON) and ``path``."""

    doc: dict[str, object]
    path: Path

    def fail(self, what: str, pointer: str = "", hint: str | None = None) -> ImportError_:
        return ImportError_(what, path=self.path, pointer=pointer, hint=hint)

    def items(self, key: str) -> list[object]:
        value = self.doc.get(key, [])
        if not isinstance(value, list):
            raise self.fail(f"{key} must be an array", f"/{key}")
        return value

    def item(self, key: str, index: object, where: str) -> dict[str, object]:
        arr = self.items(key)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(arr):
            raise self.fail(f"invalid {key} index {index!r}", where)
        value = arr[index]
        if not isinstance(value, dict):
            raise self.fail(f"{key}[{index}] must be an object", f"/{key}/{index}")
        return value


LIMITS_ENV = "T3D_AUDIT_GLTF_LIMITS"


@dataclass(frozen=True)
class GltfLimits:
    """What a glTF file may declare (counts, elements, bytes, pixels), checked by
    ``harness.scenes.gltf_limits``; ``json_containers`` is checked here, before parsing."""

    json_containers: int = 2_000_000  # objects and arrays in the JSON (parsed: ~0.5 GB)
    nodes: int = 20_000
    meshes: int = 20_000
    primitives: int = 50_000  # over all meshes
    accessors: int = 100_000
    images: int = 1_000
    entries: int = 100_000  # any other top-level array (materials, textures, ...)
    node_depth: int = 1_000  # levels of the node hierarchy
    accessor_count: int = 1 << 24  # elements of one accessor (16,777,216)
    decoded_bytes: int = 2 << 30  # all accessors decoded: 2 GiB
    texture_side: int = 16_384  # pixels
    texture_pixels: int = 8_192 * 8_192  # one image: 67,108,864 pixels (256 MiB as RGBA8)
    total_texture_pixels: int = 4 * 8_192 * 8_192  # all images together

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> GltfLimits:
        """The defaults, overridden by ``$T3D_AUDIT_GLTF_LIMITS`` (``field=value,...``)."""
        raw = (environ if environ is not None else os.environ).get(LIMITS_ENV, "").strip()
        if not raw:
            return cls()
        names = {f.name for f in fields(cls)}
        changes: dict[str, int] = {}
        for item in raw.split(","):
            key, sep, value = (part.strip() for part in item.partition("="))
            try:  # ASCII decimal, a whole number ("1e6" yes; "1.9", "٣", "1_0" no)
                whole = sep and key in names and value.isascii() and "_" not in value
                real = float(value) if whole else -1.0
                number = int(real) if real.is_integer() else -1
            except (ValueError, OverflowError):
                number = -1
            if number < 1:
                raise AuditError(
                    f"{item.strip()!r} is not field=positive number",
                    where=LIMITS_ENV,
                    hint=f"fields: {', '.join(sorted(names))}",
                )
            changes[key] = number
        return replace(cls(), **changes)


def check_json_size(data: bytes, path: Path, limits: GltfLimits | None = None) -> None:
    """Refuse JSON with more objects and arrays than ``limits.json_containers`` before
    parsing it (a brace inside a string counts too: the bound is conservative)."""
    limit = (limits or GltfLimits.from_env()).json_containers
    n = data.count(b"{") + data.count(b"[")
    if n > limit:
        raise ImportError_(
            f"the glTF JSON holds {n} objects and arrays, over the limit of {limit}",
            path=path,
            hint=f"a limit against runaway imports; raise it with "
            f"{LIMITS_ENV}=json_containers=N if the file is genuine",
        )


def _reject_constant(literal: str) -> NoReturn:
    raise ValueError(f"non-finite number {literal}")


def read_gltf(path: Path | str) -> Gltf:
    """Read a ``.glb`` (binary) or ``.gltf`` (JSON) file: its JSON only (a GLB's chunk
    headers are walked, its BIN chunk is not read). The file is sized on its opened handle and
    refused above the input bound (``harness.scenes.meshbytes``) before any byte of its body
    is read."""
    path = Path(path)
    head, size = mesh_head(path, 20, "glTF file")
    if head[:4] == struct.pack("<I", _GLB_MAGIC):
        json_bytes = _glb_json(path, head, size)
    else:
        json_bytes = mesh_bytes(path, "glTF file")
    check_json_size(json_bytes, path)
    try:
        doc = bounded_input.loads(json_bytes.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ImportError_(f"malformed glTF JSON: {exc}", path=path) from None
    if not isinstance(doc, dict):
        raise ImportError_("glTF JSON must be an object", path=path)
    version = doc.get("asset", {}).get("version") if isinstance(doc.get("asset"), dict) else None
    if not (isinstance(version, str) and version.startswith("2.")):
        raise ImportError_(
            f"unsupported glTF version {version!r}",
            path=path,
            pointer="/asset/version",
            hint="glTF 2.x only",
        )
    g = Gltf(doc, path)
    check_extensions(g)
    return g


def check_extensions(g: Gltf) -> None:
    """Raise for an ``extensionsRequired`` entry Blender's glTF importer cannot decode."""
    required = g.doc.get("extensionsRequired", [])
    if not isinstance(required, list) or not all(isinstance(e, str) for e in required):
        raise g.fail("extensionsRequired must be an array of names", "/extensionsRequired")
    for k, name in enumerate(required):
        if name not in SUPPORTED_EXTENSIONS:
            raise g.fail(
                f"the file requires the glTF extension {name}, which Blender's importer "
                "cannot decode",
                f"/extensionsRequired/{k}",
                hint=_EXTENSION_HINTS.get(
                    name, f"re-export the asset without {name} (glTF 2.0 core), then import it"
                ),
            )


def dependencies(g: Gltf) -> list[str]:
    """POSIX paths, relative to the glTF's folder, of the buffer and image files it uses.

    ``data:`` URIs and the GLB's own BIN chunk are not files. A URI that leaves the folder, is
    absolute or remote, or names a missing file raises ImportError_.
    """
    from urllib.parse import unquote

    base = g.path.parent.resolve()
    out: list[str] = []
    for key in ("buffers", "images"):
        for i, item in enumerate(g.items(key)):
            where = f"/{key}/{i}/uri"
            uri = item.get("uri") if isinstance(item, dict) else None
            if uri is None or (isinstance(uri, str) and uri.startswith("data:")):
                continue
            if not isinstance(uri, str):
                raise g.fail(f"{key[:-1]} uri must be a string", where)
            name = unquote(uri)
            shown = uri if len(uri) <= 80 else uri[:77] + "..."
            target = (base / name).resolve()
            if "://" in uri or name.startswith("/") or not target.is_relative_to(base):
                raise g.fail(f"{key[:-1]} uri {shown!r} leaves the glTF folder", where)
            try:
                found = target.is_file()
            except OSError:  # a name too long for the file system names no file
                found = False
            if not found:
                raise g.fail(
                    f"{key[:-1]} file {shown!r} not found",
                    where,
                    hint="a .gltf needs its .bin and image files beside it",
                )
            rel = target.relative_to(base).as_posix()
            if rel not in out:
                out.append(rel)
    return out


def _glb_json(path: Path, head: bytes, size: int) -> bytes:
    """The JSON chunk of the GLB ``path`` whose first 20 bytes are ``head`` and whose size is
    ``size``; every chunk header is checked to lie inside the file, no chunk body is read but
    the JSON's."""
    if len(head) < 20:
        raise ImportError_("truncated GLB header", path=path)
    _, version, length = struct.unpack_from("<III", head, 0)
    if version != 2:
        raise ImportError_(f"unsupported GLB container version {version}", path=path)
    if length != size:
        raise ImportError_(f"GLB length field {length} != file size {size}", path=path)
    offset, first = 12, None
    with path.open("rb") as handle:
        for _ in range(GLB_MAX_CHUNKS):
            if offset >= size:
                break
            handle.seek(offset)
            chunk = handle.read(8)
            if len(chunk) < 8:
                raise ImportError_("truncated GLB chunk header", path=path)
            chunk_size, kind = struct.unpack_from("<II", chunk)
            if offset + 8 + chunk_size > size:
                raise ImportError_("GLB chunk runs past the end of the file", path=path)
            first = first or (kind, offset + 8, chunk_size)
            offset += 8 + chunk_size
        else:
            if offset < size:
                raise ImportError_(f"GLB holds more than {GLB_MAX_CHUNKS} chunks", path=path,
                                   hint="a GLB holds a JSON chunk and at most a few others")
        if first is None or first[0] != _CHUNK_JSON:
            raise ImportError_("GLB does not start with a JSON chunk", path=path)
        handle.seek(first[1])
        data = handle.read(first[2])
    if len(data) != first[2]:
        raise ImportError_("the GLB file shrank while it was read", path=path)
    return data
