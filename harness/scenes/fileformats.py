"""What format a scene or asset file is, read from its content as well as its extension.

One function, :func:`detect_format`, decides for ``import-scene``, ``import-scenes`` and the
renderer, so all three accept the same files. Content wins over the extension where the
content is recognisable (magic bytes or a header); a known extension whose content says
otherwise is an error, and anything unrecognised is refused in one line that names the
supported formats and a converter (:data:`SUPPORTED`, :data:`CONVERTER`).

Recognised content (the first bytes of the file):

=============  =======================================================================
format         signature
=============  =======================================================================
``gltf``       GLB magic ``glTF``; or JSON whose top level has an ``asset`` object
``scenestate`` JSON whose top level has ``"format": "sceneState"`` or a ``scene`` object
``ply``        ``ply`` line; the header says which *variant*: ``splats`` (3D Gaussian
               splats: ``f_dc_0..2``, ``opacity``, ``scale_0..2``, ``rot_0..3``),
               ``mesh`` (a ``face`` element with rows), else ``points`` (a point cloud)
``stl``        binary (84-byte header + 50 bytes per facet, sizes agree) or ASCII
               (``solid`` ... ``facet``)
``usd``        ``PXR-USDC`` (USDC), ``#usda`` (USDA), or a zip whose first entry is a
               ``.usd``/``.usda``/``.usdc`` layer (USDZ)
``obj``        text whose first statements are OBJ ones (``v``, ``vt``, ``vn``, ``f``,
               ``o``, ``g``, ``s``, ``mtllib``, ``usemtl``) or an ``.obj`` text file
=============  =======================================================================

Pure Python, no bpy: the PLY header parser (:func:`ply_header`) is shared with the renderer.
"""

from __future__ import annotations

import re
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.errors import ImportError_
from harness.scenes.meshbytes import mesh_bytes, mesh_head

if TYPE_CHECKING:
    import numpy as np

#: format -> the extensions that name it (lower case, with the dot)
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "gltf": (".glb", ".gltf"),
    "obj": (".obj",),
    "ply": (".ply",),
    "stl": (".stl",),
    "usd": (".usd", ".usda", ".usdc", ".usdz"),
    "scenestate": (".json",),
}
SCENE_SUFFIXES = tuple(s for exts in EXTENSIONS.values() for s in exts)
SUPPORTED = (
    "glTF/GLB, OBJ (+MTL, vertex colours), PLY (mesh, point cloud or 3D Gaussian splats), "
    "STL, USD/USDA/USDC/USDZ and SceneEval sceneState JSON"
)
CONVERTER = (
    "convert it to GLB first, e.g. with Blender (File > Import, then File > Export > glTF 2.0) "
    "or `assimp export IN OUT.glb`"
)
SPLAT_PROPERTIES = ("f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
                    "rot_0", "rot_1", "rot_2", "rot_3")
_OBJ_STATEMENT = re.compile(rb"^(v|vt|vn|vp|f|l|p|o|g|s|mtllib|usemtl)\s", re.MULTILINE)
_PROBE = 65536  # bytes read to recognise a file
_HEADER_MAX = 1 << 20  # a PLY header longer than this is not a header


@dataclass(frozen=True)
class PlyHeader:
    """A PLY header: ``fmt`` (``ascii``, ``binary_little_endian``, ``binary_big_endian``),
    ``elements`` in file order as (name, count, [(property name, type or ``list:<count
    type>:<item type>``)]), and ``data_offset``: the byte where the body starts."""

    fmt: str
    elements: tuple[tuple[str, int, tuple[tuple[str, str], ...]], ...]
    data_offset: int

    def element(self, name: str) -> tuple[str, int, tuple[tuple[str, str], ...]] | None:
        return next((e for e in self.elements if e[0] == name), None)

    def count(self, name: str) -> int:
        e = self.element(name)
        return e[1] if e else 0

    def properties(self, name: str) -> tuple[str, ...]:
        e = self.element(name)
        return tuple(p for p, _ in e[2]) if e else ()

    @property
    def variant(self) -> str:
        """``splats``, ``mesh`` or ``points`` (see the module docstring)."""
        if all(p in self.properties("vertex") for p in SPLAT_PROPERTIES):
            return "splats"
        return "mesh" if self.count("face") > 0 else "points"

    @property
    def sh_degree(self) -> int:
        """Spherical-harmonics degree of a splat file (0-3) from its ``f_rest_*`` count."""
        rest = sum(1 for p in self.properties("vertex") if p.startswith("f_rest_"))
        return {0: 0, 9: 1, 24: 2, 45: 3}.get(rest, -1)


def ply_header(data: bytes, path: Path | str = "") -> PlyHeader:
    """Parse the PLY header at the start of ``data``. Raises ImportError_ when malformed."""
    end = data.find(b"end_header", 0, _HEADER_MAX)
    if not data.startswith(b"ply") or end < 0:
        raise ImportError_("PLY header without end_header", path=path,
                           hint="a PLY file starts with 'ply' and its header ends with 'end_header'")
    nl = data.find(b"\n", end)
    offset = (nl + 1) if nl >= 0 else len(data)
    fmt = ""
    elements: list[tuple[str, int, list[tuple[str, str]]]] = []
    for raw in data[:end].decode("ascii", "replace").splitlines()[1:]:
        words = raw.split()
        if not words or words[0] in ("comment", "obj_info"):
            continue
        try:
            if words[0] == "format":
                fmt = words[1]
            elif words[0] == "element":
                elements.append((words[1], int(words[2]), []))
            elif words[0] == "property" and elements:
                if words[1] == "list":
                    elements[-1][2].append((words[4], f"list:{words[2]}:{words[3]}"))
                else:
                    elements[-1][2].append((words[2], words[1]))
        except (IndexError, ValueError):
            raise ImportError_(f"malformed PLY header line {raw.strip()!r}", path=path) from None
    if fmt not in ("ascii", "binary_little_endian", "binary_big_endian"):
        raise ImportError_(f"unknown PLY format {fmt!r}", path=path,
                           hint="ascii, binary_little_endian or binary_big_endian")
    frozen = tuple((n, c, tuple(p)) for n, c, p in elements)
    return PlyHeader(fmt, frozen, offset)


def ply_min_body_bytes(header: PlyHeader, path: Path | str = "") -> int:
    """The fewest body bytes the header's declared elements can take: binary rows of fixed
    properties exactly, a list property at least its count field; an ASCII row at least two
    bytes per value (a digit and a separator). Raises ImportError_ on an unknown type."""
    total = 0
    for name, count, props in header.elements:
        if header.fmt == "ascii":
            total += count * 2 * max(1, len(props))
            continue
        row = 0
        for prop, kind in props:
            scalar = kind.split(":")[1] if kind.startswith("list:") else kind
            if scalar not in _PLY_TYPES:
                raise ImportError_(f"PLY element {name!r} property {prop!r} has unknown type {scalar!r}",
                                   path=path, hint="types: " + ", ".join(sorted(_PLY_TYPES)))
            row += int(_PLY_TYPES[scalar][-1])  # numpy codes end in their byte size: 'f4', 'u1'
        total += count * row
    return total


def check_ply_body(header: PlyHeader, size: int, path: Path | str) -> None:
    """Refuse a PLY whose header declares more data than the file holds, before any importer
    allocates for the declared counts (a 300-byte file may declare 2^31 vertices)."""
    body = size - header.data_offset
    need = ply_min_body_bytes(header, path)
    if need > body:
        counts = ", ".join(f"{name} {count}" for name, count, _ in header.elements)
        raise ImportError_(
            f"PLY header declares {counts}: at least {need} bytes of data, but the file holds "
            f"{max(body, 0)} after its header",
            path=path,
            hint="the file is truncated or its header lies; export it again",
        )


@dataclass(frozen=True)
class Detected:
    """A recognised file: ``format`` (a key of :data:`EXTENSIONS`) and, for PLY, its
    ``variant`` (``mesh``, ``points``, ``splats``); ``by`` says how (``content`` or
    ``extension``)."""

    format: str
    variant: str | None = None
    by: str = "content"

    @property
    def label(self) -> str:
        """A short human name: ``PLY point cloud``, ``USD``, ..."""
        names = {"gltf": "glTF", "obj": "OBJ", "ply": "PLY", "stl": "STL", "usd": "USD",
                 "scenestate": "sceneState JSON"}
        variants = {"mesh": "mesh", "points": "point cloud", "splats": "3D Gaussian splats"}
        base = names[self.format]
        return f"{base} {variants[self.variant]}" if self.variant else base


def refusal(path: Path | str, why: str) -> ImportError_:
    """The one-line refusal for a file of no supported format."""
    return ImportError_(f"unsupported format: {why}; supported: {SUPPORTED}", path=path,
                        hint=CONVERTER)


def _is_binary_stl(head: bytes, size: int) -> bool:
    if size < 84 or len(head) < 84:
        return False
    (n,) = struct.unpack_from("<I", head, 80)
    return size == 84 + 50 * n and n > 0


def _json_kind(path: Path) -> str | None:
    from harness.core.bounded_input import InputFileError, JsonDepthError, loads, read_bytes

    try:
        doc = loads(read_bytes(path, what="scene file").decode("utf-8-sig"), where=path)
    except (InputFileError, JsonDepthError) as exc:
        raise ImportError_(exc.what, path=path, hint=exc.hint) from None
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("asset"), dict):
        return "gltf"
    if doc.get("format") == "sceneState" or isinstance(doc.get("scene"), dict):
        return "scenestate"
    return None


def _zip_usd(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False
    return bool(names) and names[0].lower().endswith((".usd", ".usda", ".usdc"))


def _head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of ``path`` (never the whole file; refused over the input
    bound, ``harness.scenes.meshbytes``)."""
    return mesh_head(path, size)[0]


def _by_content(path: Path, head: bytes, size: int) -> Detected | None:
    if head.startswith(b"glTF"):
        return Detected("gltf")
    if head.startswith((b"ply\n", b"ply\r\n")):
        header = ply_header(head if b"end_header" in head else _head(path, _HEADER_MAX), path)
        check_ply_body(header, size, path)
        return Detected("ply", header.variant)
    if head.startswith(b"PXR-USDC") or head.startswith(b"#usda"):
        return Detected("usd")
    if head.startswith(b"PK\x03\x04"):
        return Detected("usd") if _zip_usd(path) else None
    if _is_binary_stl(head, size):
        return Detected("stl")
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"solid") and b"facet" in head:
        return Detected("stl")
    if text.startswith((b"{", b"[")):
        kind = _json_kind(path)
        return Detected(kind) if kind else None
    if b"\x00" not in head and _OBJ_STATEMENT.search(head):
        return Detected("obj")
    return None


def detect_format(path: Path | str) -> Detected:
    """The format of ``path`` from its content (and extension). Raises ImportError_: a missing
    file, a known extension whose content is another format, or no supported format."""
    path = Path(path)
    if not path.is_file():
        if path.exists():
            raise ImportError_("not a regular file (a device, FIFO or folder)", path=path,
                               hint="name a plain file")
        raise ImportError_("file not found", path=path)
    # sized on the opened handle and refused over the input bound before any importer runs
    head, size = mesh_head(path, _PROBE, "mesh or scene file")
    suffix = path.suffix.lower()
    by_ext = next((f for f, exts in EXTENSIONS.items() if suffix in exts), None)
    found = _by_content(path, head, size)
    if found is not None:
        if by_ext is not None and by_ext != found.format and not (
            by_ext == "scenestate" and found.format == "gltf"
        ):
            raise ImportError_(
                f"the file is named {suffix} but its content is {found.label}",
                path=path,
                hint=f"rename it to {EXTENSIONS[found.format][0]} or check the file",
            )
        return found
    if by_ext == "obj" and b"\x00" not in head:
        return Detected("obj", by="extension")  # e.g. an OBJ that opens with a long comment
    if by_ext is not None:
        raise ImportError_(
            f"the file is named {suffix} but its content is not {by_ext.upper()}"
            if by_ext != "scenestate" else "the .json file is neither glTF nor a sceneState",
            path=path,
            hint="the file may be truncated or of another format; " + CONVERTER,
        )
    shown = suffix or "(no extension)"
    raise refusal(path, f"{shown} content not recognised")


_PLY_TYPES = {
    "char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1",
    "short": "i2", "int16": "i2", "ushort": "u2", "uint16": "u2",
    "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
    "float": "f4", "float32": "f4", "double": "f8", "float64": "f8",
}


def check_finite_vertices(path: Path | str, fmt: str) -> None:
    """Refuse a PLY (mesh, point cloud or splats) or STL file with a NaN or infinite vertex
    coordinate, as the OBJ reader does; other formats are checked on their measured box.
    Raises ImportError_ naming the first such vertex."""
    import numpy as np

    path = Path(path)
    if fmt == "ply":
        header = ply_header(_head(path, _HEADER_MAX), path)
        names = [name for name, _, _ in header.elements]
        lists = [i for i, (_, _, props) in enumerate(header.elements)
                 if any(t.startswith("list:") for _, t in props)]
        if "vertex" not in names or (lists and lists[0] <= names.index("vertex")):
            return  # a layout read_ply_vertices does not take: the measured box is checked
        verts = read_ply_vertices(path, ("x", "y", "z"))
        xyz = [verts.get(axis) for axis in "xyz"]
        if any(a is None for a in xyz):
            raise ImportError_("PLY vertex element has no x, y and z", path=path)
        bad = ~(np.isfinite(xyz[0]) & np.isfinite(xyz[1]) & np.isfinite(xyz[2]))  # no stacked copy
    elif fmt == "stl":
        bad = ~np.all(np.isfinite(_stl_vertices(path)), axis=1)
    else:
        return
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ImportError_(
            f"{int(bad.sum())} vertices have NaN or infinite coordinates (first: vertex {first})",
            path=path,
            hint="every vertex needs finite x, y and z; fix or drop those points",
        )


_STL_VERTEX = re.compile(rb"^\s*vertex\s+(\S+)\s+(\S+)\s+(\S+)", re.MULTILINE)


def _stl_vertices(path: Path) -> np.ndarray:
    """(N, 3) vertex coordinates of a binary (float32, as stored) or ASCII (float64) STL file."""
    import numpy as np

    data = mesh_bytes(path, "STL file")
    if _is_binary_stl(data[:84], len(data)):
        (n,) = struct.unpack_from("<I", data, 80)
        facets = np.frombuffer(data, dtype=np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)),
                                                     ("attr", "<u2")]), count=n, offset=84)
        return facets["v"].reshape(-1, 3)
    rows = []
    for m in _STL_VERTEX.finditer(data):
        try:
            rows.append([float(v) for v in m.groups()])
        except ValueError:
            raise ImportError_(f"unreadable STL vertex {m.group(0).strip()[:60]!r}",
                               path=path) from None
    return np.asarray(rows, dtype=np.float64).reshape(-1, 3)


def read_ply_vertices(path: Path | str,
                      properties: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """The ``vertex`` element of a PLY file as property name -> (N,) float64 array (only the
    named ``properties`` when given; those the file lacks are left out).

    Scalar properties only; the vertex element must come before any element with list
    properties (true of point clouds and 3DGS splat files). The file is read within the input
    bound (``harness.scenes.meshbytes``) and a header declaring more rows than its body can
    hold is refused before any array is allocated. Peak memory: the file's bytes plus 8 bytes
    per value returned (an ASCII body is parsed row by row, never split into one string per
    line). Raises ImportError_ otherwise or when the body is shorter than the header says.
    """
    import io

    import numpy as np

    path = Path(path)
    data = mesh_bytes(path, "PLY file")
    header = ply_header(data, path)
    check_ply_body(header, len(data), path)
    skip = 0
    for name, count, props in header.elements:
        if any(t.startswith("list:") for _, t in props):
            if name == "vertex":
                raise ImportError_("PLY vertex element has list properties", path=path)
            break
        if name == "vertex":
            break
        # rows (ASCII) or bytes (binary) of the elements before the vertex element
        skip += count if header.fmt == "ascii" else count * sum(
            np.dtype(_PLY_TYPES[t]).itemsize for _, t in props)
    vertex = header.element("vertex")
    if vertex is None or vertex[1] == 0:
        raise ImportError_("PLY file has no vertices", path=path)
    _, count, props = vertex
    wanted = [(i, p) for i, (p, _) in enumerate(props) if properties is None or p in properties]
    try:
        if header.fmt == "ascii":
            body = io.BytesIO(memoryview(data)[header.data_offset:])
            rows = np.loadtxt(body, dtype=np.float64, ndmin=2, max_rows=count, skiprows=skip,
                              usecols=[i for i, _ in wanted] or None)
            if rows.shape != (count, len(wanted)):
                raise ValueError("row count or width")
            return {p: rows[:, k] for k, (_, p) in enumerate(wanted)}
        order = "<" if header.fmt == "binary_little_endian" else ">"
        dtype = np.dtype([(p, order + _PLY_TYPES[t]) for p, t in props])
        table = np.frombuffer(data, dtype=dtype, count=count, offset=header.data_offset + skip)
    except (KeyError, ValueError, IndexError) as exc:
        raise ImportError_(f"PLY vertex data unreadable: {exc}", path=path,
                           hint="the file is truncated or its header lies") from None
    return {p: table[p].astype(np.float64) for _, p in wanted}
