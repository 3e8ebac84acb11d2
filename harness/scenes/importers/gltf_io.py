"""Minimal glTF 2.0 / GLB reader in plain Python + numpy (no trimesh/pygltflib).

Reads what the importers need: the JSON, buffers (GLB BIN chunk, ``data:`` URIs, files beside
the .gltf that stay inside its folder), accessors (no sparse), node hierarchy transforms and
triangle meshes. Every malformed input raises :class:`harness.errors.ImportError_` naming the
file and a JSON pointer into the glTF JSON.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import ImportError_

_GLB_MAGIC = 0x46546C67  # "glTF"
_CHUNK_JSON = 0x4E4F534A  # "JSON"
_CHUNK_BIN = 0x004E4942  # "BIN\0"

_COMPONENT = {5120: "i1", 5121: "u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_TRIANGLES = 4


@dataclass(frozen=True)
class Gltf:
    """A parsed glTF asset: ``doc`` (the JSON), ``buffers`` (bytes per buffer), ``path``."""

    doc: dict[str, Any]
    buffers: tuple[bytes, ...]
    path: Path

    def fail(self, what: str, pointer: str = "", hint: str | None = None) -> ImportError_:
        return ImportError_(what, path=self.path, pointer=pointer, hint=hint)

    def items(self, key: str) -> list[Any]:
        value = self.doc.get(key, [])
        if not isinstance(value, list):
            raise self.fail(f"{key} must be an array", f"/{key}")
        return value

    def item(self, key: str, index: Any, where: str) -> dict[str, Any]:
        arr = self.items(key)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(arr):
            raise self.fail(f"invalid {key} index {index!r}", where)
        value = arr[index]
        if not isinstance(value, dict):
            raise self.fail(f"{key}[{index}] must be an object", f"/{key}/{index}")
        return value


def _reject_constant(literal: str) -> Any:
    raise ValueError(f"non-finite number {literal}")


def read_gltf(path: Path | str) -> Gltf:
    """Read a ``.glb`` (binary) or ``.gltf`` (JSON) file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ImportError_(f"cannot read glTF file: {exc.strerror or exc}", path=path) from None
    bin_chunk: bytes | None = None
    if raw[:4] == struct.pack("<I", _GLB_MAGIC):
        json_bytes, bin_chunk = _split_glb(raw, path)
    else:
        json_bytes = raw
    try:
        doc = json.loads(json_bytes.decode("utf-8"), parse_constant=_reject_constant)
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
    tmp = Gltf(doc, (), path)
    buffers = []
    for i, buf in enumerate(tmp.items("buffers")):
        buffers.append(_load_buffer(tmp, i, buf, bin_chunk))
    return Gltf(doc, tuple(buffers), path)


def _split_glb(raw: bytes, path: Path) -> tuple[bytes, bytes | None]:
    if len(raw) < 20:
        raise ImportError_("truncated GLB header", path=path)
    _, version, length = struct.unpack_from("<III", raw, 0)
    if version != 2:
        raise ImportError_(f"unsupported GLB container version {version}", path=path)
    if length != len(raw):
        raise ImportError_(f"GLB length field {length} != file size {len(raw)}", path=path)
    offset, chunks = 12, []
    while offset < len(raw):
        if offset + 8 > len(raw):
            raise ImportError_("truncated GLB chunk header", path=path)
        size, kind = struct.unpack_from("<II", raw, offset)
        start, end = offset + 8, offset + 8 + size
        if end > len(raw):
            raise ImportError_("GLB chunk runs past the end of the file", path=path)
        chunks.append((kind, raw[start:end]))
        offset = end
    if not chunks or chunks[0][0] != _CHUNK_JSON:
        raise ImportError_("GLB does not start with a JSON chunk", path=path)
    bin_chunk = chunks[1][1] if len(chunks) > 1 and chunks[1][0] == _CHUNK_BIN else None
    return chunks[0][1], bin_chunk


def _load_buffer(g: Gltf, i: int, buf: Any, bin_chunk: bytes | None) -> bytes:
    where = f"/buffers/{i}"
    if not isinstance(buf, dict):
        raise g.fail("buffer must be an object", where)
    uri = buf.get("uri")
    length = buf.get("byteLength")
    if uri is None:
        if bin_chunk is None or i != 0:
            raise g.fail("buffer without uri needs the GLB BIN chunk", where)
        data = bin_chunk
    elif isinstance(uri, str) and uri.startswith("data:"):
        try:
            data = base64.b64decode(uri.split(",", 1)[1], validate=True)
        except (IndexError, ValueError):
            raise g.fail("malformed data: URI", f"{where}/uri") from None
    elif isinstance(uri, str):
        base = g.path.parent.resolve()
        target = (base / uri).resolve()
        if "://" in uri or not target.is_relative_to(base):
            raise g.fail(f"buffer uri {uri!r} leaves the glTF folder", f"{where}/uri")
        try:
            data = target.read_bytes()
        except OSError as exc:
            raise g.fail(f"cannot read buffer {uri!r}: {exc.strerror}", f"{where}/uri") from None
    else:
        raise g.fail("buffer uri must be a string", f"{where}/uri")
    if not isinstance(length, int) or length > len(data):
        raise g.fail(f"byteLength {length!r} exceeds the {len(data)} bytes available", where)
    return data[:length]


def read_accessor(g: Gltf, index: Any, where: str) -> np.ndarray:
    """Accessor ``index`` as an array of shape (count, width) (float64 or int64)."""
    acc = g.item("accessors", index, where)
    here = f"/accessors/{index}"
    if "sparse" in acc:
        raise g.fail("sparse accessors are not supported", here)
    ctype, kind, count = acc.get("componentType"), acc.get("type"), acc.get("count")
    known = isinstance(ctype, int) and ctype in _COMPONENT
    known = known and isinstance(kind, str) and kind in _WIDTH
    if not known or not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise g.fail("accessor needs componentType, type and count", here)
    width = _WIDTH[kind]
    dtype = np.dtype(_COMPONENT[ctype])
    if "bufferView" not in acc:
        return np.zeros((count, width))
    view = g.item("bufferViews", acc["bufferView"], f"{here}/bufferView")
    vhere = f"/bufferViews/{acc['bufferView']}"
    buf_index = view.get("buffer")
    if not isinstance(buf_index, int) or not 0 <= buf_index < len(g.buffers):
        raise g.fail(f"invalid buffer index {buf_index!r}", f"{vhere}/buffer")
    buf = g.buffers[buf_index]
    v_off, v_len = view.get("byteOffset", 0), view.get("byteLength")
    a_off = acc.get("byteOffset", 0)
    elem = dtype.itemsize * width
    stride = view.get("byteStride", elem)
    ints = (v_off, v_len, a_off, stride)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in ints):
        raise g.fail("bufferView offsets/lengths must be non-negative integers", vhere)
    if stride < elem or v_off + v_len > len(buf):
        raise g.fail("bufferView does not fit its buffer", vhere)
    need = a_off + (stride * (count - 1) + elem if count else 0)
    if need > v_len:
        raise g.fail("accessor runs past its bufferView", here)
    # numpy reads unaligned and strided data in place (the ALIGNED flag is simply off)
    arr = np.ndarray(
        (count, width),
        dtype=dtype,
        buffer=buf,
        offset=v_off + a_off,
        strides=(stride, dtype.itemsize),
    )
    out = arr.astype(np.float64 if dtype.kind == "f" else np.int64)
    if dtype.kind == "f" and not np.all(np.isfinite(out)):
        raise g.fail("accessor holds non-finite numbers", here)
    return out


def _quat_matrix(q: list[float]) -> np.ndarray:
    x, y, z, w = q
    n = x * x + y * y + z * z + w * w
    if n < 1e-12:
        return np.eye(3)
    s = 2.0 / n
    return np.array(
        [
            [1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)],
            [s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)],
            [s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)],
        ]
    )


def _numbers(g: Gltf, value: Any, n: int, where: str) -> list[float]:
    ok = isinstance(value, list) and len(value) == n
    ok = ok and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    if not ok:
        raise g.fail(f"expected {n} numbers", where)
    return [float(v) for v in value]


def local_matrix(g: Gltf, index: int) -> np.ndarray:
    """Node ``index``'s local 4x4 matrix (``matrix``, column-major, or T · R · S)."""
    node = g.item("nodes", index, f"/nodes/{index}")
    here = f"/nodes/{index}"
    if "matrix" in node:
        return np.array(_numbers(g, node["matrix"], 16, f"{here}/matrix")).reshape(4, 4).T
    m = np.eye(4)
    t = _numbers(g, node.get("translation", [0, 0, 0]), 3, f"{here}/translation")
    r = _numbers(g, node.get("rotation", [0, 0, 0, 1]), 4, f"{here}/rotation")
    s = _numbers(g, node.get("scale", [1, 1, 1]), 3, f"{here}/scale")
    m[:3, :3] = _quat_matrix(r) @ np.diag(s)
    m[:3, 3] = t
    return m


def scene_nodes(g: Gltf) -> Iterator[tuple[int, np.ndarray]]:
    """(node index, world matrix) for every node of the default scene, depth first, in order."""
    scenes = g.items("scenes")
    if scenes:
        s_index = g.doc.get("scene", 0)
        roots = g.item("scenes", s_index, "/scene").get("nodes", [])
        where = f"/scenes/{s_index}/nodes"
    else:  # no scenes: every node that is nobody's child is a root
        children = {
            c
            for n in g.items("nodes")
            if isinstance(n, dict) and isinstance(n.get("children"), list)
            for c in n["children"]
            if isinstance(c, int)
        }
        roots = [i for i in range(len(g.items("nodes"))) if i not in children]
        where = "/nodes"
    if not isinstance(roots, list):
        raise g.fail("scene nodes must be an array", where)
    stack = [(r, np.eye(4), 0) for r in reversed(roots)]
    visited: set[int] = set()
    while stack:
        index, parent, depth = stack.pop()
        g.item("nodes", index, f"/nodes/{index}" if isinstance(index, int) else where)
        if index in visited or depth > 256:
            raise g.fail(f"node {index!r} appears twice (cycle or shared child)", "/nodes")
        world = parent @ local_matrix(g, index)
        visited.add(index)
        yield index, world
        kids = g.item("nodes", index, f"/nodes/{index}").get("children", [])
        if not isinstance(kids, list):
            raise g.fail("children must be an array", f"/nodes/{index}/children")
        stack.extend((c, world, depth + 1) for c in reversed(kids))


def _primitives(g: Gltf, mesh: dict[str, Any], mesh_index: Any) -> list[dict[str, Any]]:
    prims = mesh.get("primitives")
    if not isinstance(prims, list) or not prims:
        raise g.fail("mesh needs a non-empty primitives array", f"/meshes/{mesh_index}/primitives")
    for p, prim in enumerate(prims):
        if not isinstance(prim, dict) or not isinstance(prim.get("attributes"), dict):
            raise g.fail("primitive needs attributes", f"/meshes/{mesh_index}/primitives/{p}")
    return prims


def mesh_triangles(g: Gltf, mesh_index: Any, where: str) -> tuple[np.ndarray, np.ndarray]:
    """All triangle primitives of a mesh merged: vertices (N x 3), faces (M x 3, 0-based).

    Non-triangle primitives (points, lines, strips) are skipped; none left is an error.
    """
    mesh = g.item("meshes", mesh_index, where)
    verts, faces, base = [], [], 0
    for p, prim in enumerate(_primitives(g, mesh, mesh_index)):
        here = f"/meshes/{mesh_index}/primitives/{p}"
        if prim.get("mode", _TRIANGLES) != _TRIANGLES:
            continue
        pos = read_accessor(g, prim["attributes"].get("POSITION"), f"{here}/attributes/POSITION")
        if pos.shape[1] != 3:
            raise g.fail("POSITION must be VEC3", f"{here}/attributes/POSITION")
        if "indices" in prim:
            idx = read_accessor(g, prim["indices"], f"{here}/indices").reshape(-1)
            if idx.dtype.kind != "i":
                raise g.fail("indices must be an integer accessor", f"{here}/indices")
        else:
            idx = np.arange(len(pos))
        if len(idx) % 3 or (len(idx) and (idx.min() < 0 or idx.max() >= len(pos))):
            raise g.fail("triangle indices out of range or not a multiple of 3", f"{here}/indices")
        verts.append(pos)
        faces.append(idx.reshape(-1, 3) + base)
        base += len(pos)
    if not faces or base == 0:
        raise g.fail("mesh has no triangles", f"/meshes/{mesh_index}")
    return np.concatenate(verts), np.concatenate(faces)


def triangle_soup(path: Path | str) -> tuple[np.ndarray, np.ndarray]:
    """Every mesh of a glTF/GLB's default scene with node transforms baked in (file's own axes)."""
    g = read_gltf(path)
    verts, faces, base = [], [], 0
    for index, world in scene_nodes(g):
        node = g.item("nodes", index, f"/nodes/{index}")
        if "mesh" not in node:
            continue
        v, f = mesh_triangles(g, node["mesh"], f"/nodes/{index}/mesh")
        verts.append(v @ world[:3, :3].T + world[:3, 3])
        faces.append(f + base)
        base += len(v)
    if not verts:
        raise g.fail("glTF scene has no meshes", "/nodes")
    return np.concatenate(verts), np.concatenate(faces)
