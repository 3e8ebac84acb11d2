"""Bounds on a glTF 2.0 / GLB file, checked on its JSON and file headers before Blender reads it.

Blender's importer trusts the JSON: an accessor declaring 2**31 - 1 elements over a 36-byte
buffer makes it allocate tens of GB, 200,000 nodes take minutes, a 30000 x 30000 PNG aborts the
renderer. :func:`check_gltf` refuses such files first, reading only the JSON, the GLB chunk
headers, the index buffers (to range-check indices) and the first bytes of each image. Checks,
in order (every violation is one line naming the file, a JSON pointer and the field):

* sizes: each top-level array within :class:`GltfLimits` (nodes, meshes, accessors, images,
  other arrays), and the primitives of all meshes together;
* buffers: the declared ``byteLength`` within the real bytes (the GLB BIN chunk, the external
  ``.bin`` file, the decoded ``data:`` URI);
* bufferViews: inside their buffer; ``byteStride`` a multiple of 4 in [4, 252];
* accessors: a known ``componentType`` and ``type``; ``byteOffset + (count - 1) x stride +
  element size`` inside the bufferView (the element size pads matrix columns to 4 bytes);
  sparse indices and values inside theirs, sparse indices below ``count``; ``count`` at most
  :attr:`GltfLimits.accessor_count`, and all accessors together at most
  :attr:`GltfLimits.decoded_bytes` once decoded (an accessor without a bufferView, e.g. a Draco
  one, is zeros or compressed data of that size);
* meshes: accessor indices valid, a primitive's attributes all as long as its ``POSITION``, and
  every index below that length (read from the index buffer);
* nodes: child and mesh indices valid, each node the child of at most one node, no cycle, a
  hierarchy at most :attr:`GltfLimits.node_depth` deep;
* images: PNG, JPEG, WebP or KTX2 (read from the header, never decoded), each at most
  :attr:`GltfLimits.texture_side` pixels per side and :attr:`GltfLimits.texture_pixels` pixels,
  all together at most :attr:`GltfLimits.total_texture_pixels`.

Before all of these, :func:`~harness.scenes.importers.gltf_io.read_gltf` refuses JSON holding
more than :attr:`GltfLimits.json_containers` objects and arrays, so parsing is bounded too.
Limits (:class:`GltfLimits`, defined beside the reader) are settable with
``T3D_AUDIT_GLTF_LIMITS`` (comma-separated ``field=value``, e.g.
``nodes=50000,texture_pixels=100000000``). Called by the glTF and sceneState importers,
``validate-scenes`` and the renderer's asset import (``harness.render.asset_import``) on every
glTF asset.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import mmap
import struct
from pathlib import Path
from urllib.parse import unquote, unquote_to_bytes

import numpy as np

from harness.core.errors import ImportError_
from harness.scenes.importers.gltf_io import (
    LIMITS_ENV,
    Gltf,
    GltfLimits,
    dependencies,
    read_gltf,
)
from harness.scenes.meshbytes import mesh_size

COMPONENT_BYTES = {5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4}
INDEX_DTYPES = {5121: "<u1", 5123: "<u2", 5125: "<u4"}
TYPE_SHAPE = {  # type -> (columns, rows)
    "SCALAR": (1, 1),
    "VEC2": (1, 2),
    "VEC3": (1, 3),
    "VEC4": (1, 4),
    "MAT2": (2, 2),
    "MAT3": (3, 3),
    "MAT4": (4, 4),
}
_COUNTED = (
    "nodes",
    "meshes",
    "accessors",
    "bufferViews",
    "buffers",
    "images",
    "textures",
    "materials",
    "samplers",
    "skins",
    "animations",
    "cameras",
    "scenes",
)


def _hint(field: str) -> str:
    return f"a limit against runaway imports; raise it with {LIMITS_ENV}={field}=N if the file is genuine"


def check_gltf_file(path: Path | str, limits: GltfLimits | None = None) -> Gltf:
    """:func:`read_gltf` then :func:`check_gltf`; returns the parsed file."""
    g = read_gltf(path)
    check_gltf(g, limits)
    return g


def check_gltf(g: Gltf, limits: GltfLimits | None = None) -> None:
    """Raise :class:`ImportError_` (file, JSON pointer, one line) for the first violation of
    the module docstring's rules. ``limits`` defaults to :meth:`GltfLimits.from_env`."""
    dependencies(g)  # every file it names exists inside its folder
    checker = _Checker(g, limits or GltfLimits.from_env())
    try:
        checker.run()
    finally:
        checker.release()


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def element_size(component_type: int, kind: str) -> int:
    """Bytes of one accessor element; matrix columns start on 4-byte boundaries (glTF 3.6.2.4)."""
    size = COMPONENT_BYTES[component_type]
    columns, rows = TYPE_SHAPE[kind]
    if columns == 1:
        return rows * size
    return columns * (-(-rows * size // 4) * 4)


class _Checker:
    def __init__(self, g: Gltf, limits: GltfLimits):
        self.g, self.lim = g, limits
        self.maps: list[mmap.mmap] = []
        self.glb_bin: tuple[int, int] | None = None  # (offset, length) of the BIN chunk
        self.buffers: list[int] = []  # declared byteLength per buffer
        self.sources: dict[int, object] = {}  # buffer index -> bytes-like of its real bytes

    def release(self) -> None:
        """Unmap the files; a map still borrowed (e.g. by a traceback's frame) is left to the
        garbage collector rather than masking the error being raised."""
        for data in self.sources.values():
            if isinstance(data, memoryview):
                with contextlib.suppress(BufferError):
                    data.release()
        self.sources.clear()
        for mapped in self.maps:
            with contextlib.suppress(BufferError):
                mapped.close()

    def fail(self, what: str, pointer: str, hint: str | None = None) -> ImportError_:
        return self.g.fail(what, pointer, hint)

    def obj(self, key: str, i: int, value: object) -> dict[str, object]:
        if not isinstance(value, dict):
            raise self.fail(f"{key}[{i}] must be an object", f"/{key}/{i}")
        return value

    def index(self, key: str, value: object, field: str, pointer: str) -> int:
        if not (_int(value) and 0 <= value < len(self.g.items(key))):
            raise self.fail(f"{field} {value!r} is not an index into {key}", pointer)
        return value

    def natural(self, value: object, field: str, pointer: str, *, low: int = 0) -> int:
        if not (_int(value) and value >= low):
            raise self.fail(f"{field} {value!r} must be a whole number >= {low}", pointer)
        return value

    def run(self) -> None:
        self.counts()
        self.check_buffers()
        self.check_views()
        self.check_accessors()
        self.check_meshes()
        self.check_nodes()
        self.check_images()

    # -- sizes -------------------------------------------------------------------------------

    def counts(self) -> None:
        for key in _COUNTED:
            n = len(self.g.items(key))
            limit = getattr(self.lim, key, self.lim.entries)
            if n > limit:
                field = key if hasattr(self.lim, key) else "entries"
                raise self.fail(
                    f"{key} has {n} entries, over the limit of {limit}", f"/{key}", _hint(field)
                )
        total = 0
        for i, mesh in enumerate(self.g.items("meshes")):
            prims = self.obj("meshes", i, mesh).get("primitives")
            if not isinstance(prims, list) or not prims:
                raise self.fail(
                    f"meshes[{i}].primitives must be a non-empty array", f"/meshes/{i}/primitives"
                )
            total += len(prims)
        if total > self.lim.primitives:
            raise self.fail(
                f"the meshes have {total} primitives, over the limit of {self.lim.primitives}",
                "/meshes",
                _hint("primitives"),
            )

    # -- buffers and views ---------------------------------------------------------------------

    def _glb_chunk(self) -> tuple[int, int] | None:
        with self.g.path.open("rb") as fh:
            head = fh.read(20)
            if head[:4] != b"glTF" or len(head) < 20:
                return None
            json_len = struct.unpack_from("<I", head, 12)[0]
            fh.seek(20 + json_len)
            chunk = fh.read(8)
        if len(chunk) < 8 or struct.unpack_from("<I", chunk, 4)[0] != 0x004E4942:
            return None
        return 28 + json_len, struct.unpack_from("<I", chunk, 0)[0]

    def _map(self, path: Path) -> object:
        """``path`` mapped (not read) as far as its size within the input bound."""
        size = mesh_size(path, "glTF buffer or image file")
        if size == 0:
            return b""
        try:
            with path.open("rb") as fh:
                self.maps.append(mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_READ))
        except (OSError, ValueError) as exc:  # e.g. it shrank since it was sized
            raise ImportError_(f"cannot map the glTF buffer or image file: {exc}",
                               path=path) from None
        return self.maps[-1]

    def _file(self, uri: str) -> Path:
        return (self.g.path.parent / unquote(uri)).resolve()

    def check_buffers(self) -> None:
        self.glb_bin = self._glb_chunk()
        for i, raw in enumerate(self.g.items("buffers")):
            buf = self.obj("buffers", i, raw)
            where = f"/buffers/{i}/byteLength"
            length = self.natural(buf.get("byteLength"), f"buffers[{i}].byteLength", where, low=1)
            uri = buf.get("uri")
            if uri is None:
                if i != 0 or self.glb_bin is None:
                    raise self.fail(
                        f"buffers[{i}] has no uri and is not the GLB's BIN chunk", f"/buffers/{i}"
                    )
                real, what = self.glb_bin[1], "the GLB BIN chunk"
            elif not isinstance(uri, str):
                raise self.fail(f"buffers[{i}].uri must be a string", f"/buffers/{i}/uri")
            elif uri.startswith("data:"):
                self.sources[i] = self._data_uri(uri, f"/buffers/{i}/uri")
                real, what = len(self.sources[i]), "its data: URI"
            else:
                target = self._file(uri)
                try:
                    target.stat()
                except OSError:
                    raise self.fail(f"buffer file {uri!r} not found", f"/buffers/{i}/uri") from None
                real = mesh_size(target, "glTF buffer file")
                what = f"file {uri!r}"
            if length > real:
                raise self.fail(
                    f"buffers[{i}].byteLength {length} exceeds the {real} bytes of {what}", where
                )
            self.buffers.append(length)

    def _data_uri(self, uri: str, pointer: str) -> bytes:
        header, sep, payload = uri.partition(",")
        if not sep:
            raise self.fail("data: URI without a comma", pointer)
        try:
            if header.endswith(";base64"):
                return base64.b64decode(payload, validate=True)
            return unquote_to_bytes(payload)
        except (binascii.Error, ValueError):
            raise self.fail("data: URI is not valid base64", pointer) from None

    def source(self, index: int) -> object:
        """The real bytes of buffer ``index`` (mapped, not read), at least its byteLength."""
        if index not in self.sources:
            uri = self.g.items("buffers")[index].get("uri")
            if uri is None:
                offset, length = self.glb_bin  # type: ignore[misc]
                data = memoryview(self._map(self.g.path))[offset : offset + length]
            elif uri.startswith("data:"):
                data = self._data_uri(uri, f"/buffers/{index}/uri")
            else:
                data = self._map(self._file(uri))
            self.sources[index] = data
        return self.sources[index]

    def check_views(self) -> None:
        for i, raw in enumerate(self.g.items("bufferViews")):
            view = self.obj("bufferViews", i, raw)
            base = f"/bufferViews/{i}"
            b = self.index(
                "buffers", view.get("buffer"), f"bufferViews[{i}].buffer", f"{base}/buffer"
            )
            off = self.natural(
                view.get("byteOffset", 0), f"bufferViews[{i}].byteOffset", f"{base}/byteOffset"
            )
            length = self.natural(
                view.get("byteLength"), f"bufferViews[{i}].byteLength", f"{base}/byteLength", low=1
            )
            if off + length > self.buffers[b]:
                raise self.fail(
                    f"bufferViews[{i}] byteOffset {off} + byteLength {length} = {off + length} "
                    f"exceeds buffers[{b}].byteLength {self.buffers[b]}",
                    f"{base}/byteLength",
                )
            stride = view.get("byteStride")
            if stride is not None and not (_int(stride) and 4 <= stride <= 252 and stride % 4 == 0):
                raise self.fail(
                    f"bufferViews[{i}].byteStride {stride!r} must be a multiple of 4 in [4, 252]",
                    f"{base}/byteStride",
                )

    # -- accessors ------------------------------------------------------------------------------

    def view(self, index: int) -> dict[str, object]:
        return self.g.items("bufferViews")[index]

    def check_accessors(self) -> None:
        decoded = 0
        for i, raw in enumerate(self.g.items("accessors")):
            acc = self.obj("accessors", i, raw)
            base = f"/accessors/{i}"
            ctype, kind = acc.get("componentType"), acc.get("type")
            if not (_int(ctype) and ctype in COMPONENT_BYTES):
                raise self.fail(
                    f"accessors[{i}].componentType {ctype!r} is not a glTF component type",
                    f"{base}/componentType",
                )
            if not (isinstance(kind, str) and kind in TYPE_SHAPE):
                raise self.fail(
                    f"accessors[{i}].type {kind!r} is not a glTF accessor type", f"{base}/type"
                )
            count = self.natural(acc.get("count"), f"accessors[{i}].count", f"{base}/count", low=1)
            elem = element_size(ctype, kind)
            if "bufferView" in acc:
                v = self.index(
                    "bufferViews",
                    acc["bufferView"],
                    f"accessors[{i}].bufferView",
                    f"{base}/bufferView",
                )
                off = self.natural(
                    acc.get("byteOffset", 0), f"accessors[{i}].byteOffset", f"{base}/byteOffset"
                )
                view = self.view(v)
                stride = view.get("byteStride") or elem
                need = off + stride * (count - 1) + elem
                if need > view["byteLength"]:
                    raise self.fail(
                        self._overrun(i, off, count, stride, elem, v, view["byteLength"]),
                        f"{base}/count",
                    )
            if count > self.lim.accessor_count:
                raise self.fail(
                    f"accessors[{i}].count {count} is over the limit of {self.lim.accessor_count} elements",
                    f"{base}/count",
                    _hint("accessor_count"),
                )
            if "sparse" in acc:
                self.check_sparse(i, acc, count, elem)
            decoded += count * elem
            if decoded > self.lim.decoded_bytes:
                raise self.fail(
                    f"the accessors up to accessors[{i}] decode to {decoded} bytes, over the limit "
                    f"of {self.lim.decoded_bytes}",
                    f"{base}/count",
                    _hint("decoded_bytes"),
                )

    @staticmethod
    def _overrun(i: int, off: int, count: int, stride: int, elem: int, v: int, length: int) -> str:
        if off == 0 and stride == elem:
            return f"accessors[{i}].count {count} × {elem} bytes exceeds bufferViews[{v}].byteLength {length}"
        return (
            f"accessors[{i}] byteOffset {off} + (count {count} - 1) × stride {stride} + {elem} bytes "
            f"= {off + stride * (count - 1) + elem} exceeds bufferViews[{v}].byteLength {length}"
        )

    def check_sparse(self, i: int, acc: dict[str, object], count: int, elem: int) -> None:
        base = f"/accessors/{i}/sparse"
        sparse = acc["sparse"]
        if not isinstance(sparse, dict):
            raise self.fail(f"accessors[{i}].sparse must be an object", base)
        n = self.natural(
            sparse.get("count"), f"accessors[{i}].sparse.count", f"{base}/count", low=1
        )
        if n > count:
            raise self.fail(
                f"accessors[{i}].sparse.count {n} exceeds accessors[{i}].count {count}",
                f"{base}/count",
            )
        parts = {}
        for part in ("indices", "values"):
            item = sparse.get(part)
            if not isinstance(item, dict):
                raise self.fail(f"accessors[{i}].sparse.{part} must be an object", f"{base}/{part}")
            field = f"accessors[{i}].sparse.{part}"
            v = self.index(
                "bufferViews",
                item.get("bufferView"),
                f"{field}.bufferView",
                f"{base}/{part}/bufferView",
            )
            off = self.natural(
                item.get("byteOffset", 0), f"{field}.byteOffset", f"{base}/{part}/byteOffset"
            )
            if part == "indices":
                ctype = item.get("componentType")
                if not (_int(ctype) and ctype in INDEX_DTYPES):
                    raise self.fail(
                        f"{field}.componentType {ctype!r} must be 5121, 5123 or 5125",
                        f"{base}/indices/componentType",
                    )
                size = COMPONENT_BYTES[ctype]
            else:
                size = elem
            length = self.view(v)["byteLength"]
            if off + n * size > length:
                raise self.fail(
                    f"{field} byteOffset {off} + count {n} × {size} bytes exceeds bufferViews[{v}].byteLength {length}",
                    f"{base}/{part}",
                )
            parts[part] = (v, off, item.get("componentType"))
        v, off, ctype = parts["indices"]
        top = self.max_index(v, off, n, INDEX_DTYPES[ctype], COMPONENT_BYTES[ctype])
        if top >= count:
            raise self.fail(
                f"accessors[{i}].sparse.indices holds {top}, not below count {count}",
                f"{base}/indices",
            )

    def max_index(self, v: int, off: int, n: int, dtype: str, stride: int) -> int:
        """Largest of ``n`` unsigned integers at ``off`` in bufferView ``v`` (``stride`` bytes apart)."""
        view = self.view(v)
        data = self.source(view["buffer"])
        start = view.get("byteOffset", 0) + off
        arr = np.ndarray((n,), dtype=dtype, buffer=data, offset=start, strides=(stride,))
        return int(arr.max())

    # -- meshes and nodes -------------------------------------------------------------------------

    def check_meshes(self) -> None:
        accessors = self.g.items("accessors")
        for m, mesh in enumerate(self.g.items("meshes")):
            for p, raw in enumerate(mesh["primitives"]):
                base = f"/meshes/{m}/primitives/{p}"
                field = f"meshes[{m}].primitives[{p}]"
                prim = raw if isinstance(raw, dict) else None
                attrs = prim.get("attributes") if prim is not None else None
                if not isinstance(attrs, dict):
                    raise self.fail(f"{field}.attributes must be an object", f"{base}/attributes")
                lengths = {}
                for name, a in attrs.items():
                    k = self.index(
                        "accessors", a, f"{field}.attributes.{name}", f"{base}/attributes/{name}"
                    )
                    lengths[name] = accessors[k]["count"]
                targets = prim.get("targets", [])
                for t, target in enumerate(targets if isinstance(targets, list) else [None]):
                    if not isinstance(target, dict):
                        raise self.fail(
                            f"{field}.targets[{t}] must be an object", f"{base}/targets/{t}"
                        )
                    for name, a in target.items():
                        self.index(
                            "accessors",
                            a,
                            f"{field}.targets[{t}].{name}",
                            f"{base}/targets/{t}/{name}",
                        )
                n = lengths.get("POSITION")
                if n is not None:
                    self.check_positions(attrs["POSITION"], field, f"{base}/attributes/POSITION")
                for name, length in lengths.items():
                    if n is not None and length != n:
                        raise self.fail(
                            f"{field}.attributes.{name} has {length} elements, POSITION {n}",
                            f"{base}/attributes/{name}",
                        )
                if "indices" in prim:
                    k = self.index(
                        "accessors", prim["indices"], f"{field}.indices", f"{base}/indices"
                    )
                    self.check_indices(k, n, field, f"{base}/indices")

    def check_positions(self, k: int, field: str, pointer: str) -> None:
        """Refuse NaN or infinite vertex positions (float VEC3 in a bufferView; compressed or
        sparse ones are checked on the measured box)."""
        acc = self.g.items("accessors")[k]
        if acc.get("componentType") != 5126 or acc.get("type") != "VEC3":
            return
        if "bufferView" not in acc or "sparse" in acc or not acc["count"]:
            return
        view = self.view(acc["bufferView"])
        data = self.source(view["buffer"])
        stride = view.get("byteStride") or 12
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        arr = np.ndarray((acc["count"], 3), dtype="<f4", buffer=data, offset=start,
                         strides=(stride, 4))
        if not np.isfinite(arr).all():
            raise self.fail(f"{field}.attributes.POSITION: accessors[{k}] holds NaN or infinite "
                            "vertex coordinates", pointer, hint="every vertex needs finite x, y and z")

    def check_indices(self, k: int, vertices: int | None, field: str, pointer: str) -> None:
        acc = self.g.items("accessors")[k]
        dtype = INDEX_DTYPES.get(acc["componentType"])
        if dtype is None or acc["type"] != "SCALAR":
            raise self.fail(f"{field}.indices: accessors[{k}] is not unsigned SCALAR", pointer)
        if vertices is None or "bufferView" not in acc or "sparse" in acc:
            return  # compressed (Draco) or sparse: Blender's decoder checks them
        view = self.view(acc["bufferView"])
        stride = view.get("byteStride") or COMPONENT_BYTES[acc["componentType"]]
        top = self.max_index(
            acc["bufferView"], acc.get("byteOffset", 0), acc["count"], dtype, stride
        )
        if top >= vertices:
            raise self.fail(
                f"{field}.indices: accessors[{k}] holds index {top}, out of range for "
                f"{vertices} vertices (POSITION count)",
                pointer,
            )

    def check_nodes(self) -> None:
        nodes = self.g.items("nodes")
        parent: dict[int, int] = {}
        for i, raw in enumerate(nodes):
            node = self.obj("nodes", i, raw)
            if "mesh" in node:
                self.index("meshes", node["mesh"], f"nodes[{i}].mesh", f"/nodes/{i}/mesh")
            children = node.get("children", [])
            if not isinstance(children, list):
                raise self.fail(f"nodes[{i}].children must be an array", f"/nodes/{i}/children")
            for c, child in enumerate(children):
                where = f"/nodes/{i}/children/{c}"
                self.index("nodes", child, f"nodes[{i}].children[{c}]", where)
                if child in parent or child == i:
                    raise self.fail(
                        f"node {child} has more than one parent (nodes[{i}] too)", where
                    )
                parent[child] = i
        depth: dict[int, int] = {}
        for start in range(len(nodes)):
            chain, node = [], start
            while node not in depth and node in parent:  # walk up to a root or a known node
                chain.append(node)
                if len(chain) > len(nodes):
                    raise self.fail(
                        f"the node hierarchy has a cycle through nodes[{start}]", f"/nodes/{start}"
                    )
                node = parent[node]
            level = depth.get(node, 0)
            depth[node] = level
            for member in reversed(chain):
                level += 1
                depth[member] = level
            if level > self.lim.node_depth:
                raise self.fail(
                    f"nodes[{start}] is {level} levels deep, over the limit of {self.lim.node_depth}",
                    f"/nodes/{start}",
                    _hint("node_depth"),
                )

    # -- images -----------------------------------------------------------------------------------

    def check_images(self) -> None:
        total = 0
        for i, raw in enumerate(self.g.items("images")):
            img = self.obj("images", i, raw)
            where = f"/images/{i}"
            uri = img.get("uri")
            if isinstance(uri, str) and uri.startswith("data:"):
                data = self._data_uri(uri, f"{where}/uri")
            elif isinstance(uri, str):
                target = self._file(uri)
                if not target.is_file():
                    raise self.fail(f"image file {uri!r} not found", f"{where}/uri")
                data = self._map(target)
            elif "bufferView" in img:
                v = self.index(
                    "bufferViews",
                    img["bufferView"],
                    f"images[{i}].bufferView",
                    f"{where}/bufferView",
                )
                view = self.view(v)
                off = view.get("byteOffset", 0)
                data = memoryview(self.source(view["buffer"]))[off : off + view["byteLength"]]
            else:
                raise self.fail(f"images[{i}] has neither a uri nor a bufferView", where)
            try:
                kind, width, height = image_size(data)
            except ValueError as exc:
                raise self.fail(
                    f"images[{i}]: {exc}", where, "textures must be PNG, JPEG, WebP or KTX2"
                ) from None
            pixels = width * height
            if max(width, height) > self.lim.texture_side or pixels > self.lim.texture_pixels:
                raise self.fail(
                    f"images[{i}] is a {width} × {height} {kind} ({pixels} pixels), over the limit of "
                    f"{self.lim.texture_side} pixels a side and {self.lim.texture_pixels} pixels",
                    where,
                    _hint("texture_pixels"),
                )
            total += pixels
            if total > self.lim.total_texture_pixels:
                raise self.fail(
                    f"the images up to images[{i}] hold {total} pixels, over the limit of "
                    f"{self.lim.total_texture_pixels}",
                    where,
                    _hint("total_texture_pixels"),
                )


# -- image headers -------------------------------------------------------------------------------

_PNG = b"\x89PNG\r\n\x1a\n"
_KTX2 = b"\xabKTX 20\xbb\r\n\x1a\n"
_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def image_size(data: object) -> tuple[str, int, int]:
    """(format, width, height) from the header of a PNG, JPEG, WebP or KTX2 image in the
    bytes-like ``data``; reads only the header. Raises ``ValueError`` saying what is wrong.
    A KTX2's height counts every layer, face and depth slice (what is decoded)."""
    head = bytes(data[:48])
    if head.startswith(_PNG):
        if len(head) < 24 or head[12:16] != b"IHDR":
            raise ValueError("truncated PNG header")
        w, h = struct.unpack_from(">II", head, 16)
        return _positive("PNG", w, h)
    if head.startswith(b"\xff\xd8"):
        return _jpeg(data)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp(head)
    if head.startswith(_KTX2):
        if len(head) < 40:
            raise ValueError("truncated KTX2 header")
        w, h, depth, layers, faces = struct.unpack_from("<IIIII", head, 20)
        return _positive("KTX2", w, max(h, 1) * max(depth, 1) * max(layers, 1) * max(faces, 1))
    raise ValueError("not a PNG, JPEG, WebP or KTX2 image")


def _positive(kind: str, w: int, h: int) -> tuple[str, int, int]:
    if w < 1 or h < 1:
        raise ValueError(f"{kind} header gives {w} × {h} pixels")
    return kind, w, h


def _jpeg(data: object) -> tuple[str, int, int]:
    pos, end = 2, len(data)
    while pos + 4 <= end:
        if data[pos] != 0xFF:
            raise ValueError(f"JPEG marker expected at byte {pos}")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # no length field
            pos += 2
            continue
        (length,) = struct.unpack(">H", bytes(data[pos + 2 : pos + 4]))
        if marker in _JPEG_SOF:
            if pos + 9 > end:
                break
            h, w = struct.unpack(">HH", bytes(data[pos + 5 : pos + 9]))
            return _positive("JPEG", w, h)
        if marker in (0xDA, 0xD9) or length < 2:
            break
        pos += 2 + length
    raise ValueError("JPEG without a frame header (SOF) before its image data")


def _webp(head: bytes) -> tuple[str, int, int]:
    chunk = head[12:16]
    if len(head) < 30:
        raise ValueError("truncated WebP header")
    if chunk == b"VP8 ":
        if head[23:26] != b"\x9d\x01\x2a":
            raise ValueError("WebP VP8 frame without its start code")
        w, h = struct.unpack_from("<HH", head, 26)
        return _positive("WebP", w & 0x3FFF, h & 0x3FFF)
    if chunk == b"VP8L":
        if head[20] != 0x2F:
            raise ValueError("WebP VP8L without its signature byte")
        bits = int.from_bytes(head[21:25], "little")
        return _positive("WebP", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":
        w = int.from_bytes(head[24:27], "little") + 1
        h = int.from_bytes(head[27:30], "little") + 1
        return _positive("WebP", w, h)
    raise ValueError(f"WebP with an unknown first chunk {chunk!r}")
