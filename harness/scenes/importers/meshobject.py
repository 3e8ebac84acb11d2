"""Import one generated object from an OBJ, PLY (mesh, point cloud, 3D Gaussian splats), STL
or USD/USDA/USDC/USDZ file into an object-kind scene (schema ``t3d-scene/2``).

The file is measured by the same Blender importer code the renderer draws it with
(``harness.render.meshformats`` through ``harness.render.gltfmeasure`` in a child process).
Its conventions (``harness.scenes.importers.conventions``: up, front, unit or scale) become the
object's placement:

* OBJ is re-based to the scene frame when that is an axis permutation (a rewritten copy with
  the same ``v r g b`` colours, as the sceneState importer does); every other format is
  copied byte for byte, and a rotation off the vertical becomes the object's ``tilt``;
* an object whose largest side (after the unit) lies outside [1 cm, 100 m] is shown at
  display scale (largest side 1 m): object scenes are framed from their bounds, so only
  proportions show. Sizes outside [1e-6, 1e6] m are refused.

The scene's ``source`` record (docs/formats.md) says what was imported and how: format, PLY
variant, conventions, true size, display scale and the colour source, with a ``note`` when
the object has no colour of its own (STL: grey is correct) or is approximated (splats).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import ImportError_
from harness.scenes.fileformats import Detected, check_finite_vertices, detect_format
from harness.scenes.importers.conventions import Conventions, display_scale, source_record
from harness.scenes.model import Scene

_MAX_NUMBER_CHARS = 64  # longest token the vectorised OBJ reader takes (a float needs < 32)
_OBJ_COLOUR_WIDTH = 7  # "v x y z r g b": the vertex-colour extension TripoSR and trimesh write

def _measure_obj(path: Path) -> dict[str, Any]:
    """Box of an OBJ's ``v`` lines and its colour source: ``material`` (an ``mtllib`` that
    exists), ``vertex`` (``v x y z r g b`` lines) or ``none``."""
    raw = path.read_bytes()
    lines = raw.splitlines()
    vlines = [ln for ln in lines if ln.startswith(b"v ")]
    verts = _fast_vertices(vlines)
    if verts is None:  # ragged or malformed: the line-by-line reader names the bad line
        from harness.scenes.importers.scenestate import _obj_vertices

        verts = _obj_vertices(raw, path)
    colour = "vertex" if vlines and len(vlines[0].split()) >= _OBJ_COLOUR_WIDTH else "none"
    for line in lines:
        if line.startswith(b"mtllib ") and any(
            (path.parent / name.decode("utf-8", "replace")).is_file() for name in line.split()[1:]
        ):
            colour = "material"
            break
    return {"lo": verts.min(0).tolist(), "hi": verts.max(0).tolist(), "colour": colour}


def _fast_vertices(vlines: list[bytes]) -> np.ndarray | None:
    """(N, 3) positions of ``v`` lines that all have the same number of finite numbers;
    None otherwise (then the careful reader runs)."""
    if not vlines:
        return None
    width = len(vlines[0].split())
    tokens = b" ".join(vlines).split()
    # np.array of bytes is a fixed-width array as wide as the longest token: one 1 MB token
    # among 150 000 would ask for 150 GB. Numbers are never that long; the careful reader
    # names the line.
    if max(map(len, tokens)) > _MAX_NUMBER_CHARS:
        return None
    try:
        table = np.array(tokens)
        if table.size != width * len(vlines):
            return None
        numbers = table.reshape(len(vlines), width)[:, 1:4].astype(np.float64)
    except ValueError:
        return None
    return numbers if np.all(np.isfinite(numbers)) else None


def rebase_obj(raw: bytes, axes: np.ndarray) -> bytes:
    """``scenestate._rebase_obj`` (the same bytes out) with the signed permutation read once,
    not per line: ``v``/``vn`` coordinates reordered/negated, other lines verbatim."""
    perm = [(int(np.argmax(np.abs(row))), bool(row[int(np.argmax(np.abs(row)))] < 0))
            for row in np.asarray(axes)]

    def flip(value: str) -> str:
        return value[1:] if value.startswith("-") else "-" + value

    out = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if line.lstrip().startswith("v"):
            parts = line.split()
            if parts[0] in ("v", "vn") and len(parts) >= 4:
                xyz = parts[1:4]
                new = [flip(xyz[k]) if neg else xyz[k] for k, neg in perm]
                line = " ".join([parts[0], *new, *parts[4:]])
        out.append(line)
    return ("\n".join(out) + "\n").encode("utf-8")


def import_object_file(
    path: Path | str,
    *,
    out_root: Path | str,
    asset_dir: str | None = None,
    meta: dict[str, str],
    label: str,
    conventions: Conventions | None = None,
    ground: bool = True,
    detected: Detected | None = None,
) -> Scene:
    """Import ``path`` (not glTF, not sceneState) as an object scene; write its asset under
    ``out_root/assets/<asset_dir>/``. ``meta``: resolved identity fields
    (``common.resolve_meta``). Returns a validated Scene; raises ImportError_."""
    from harness.render.gltfmeasure import run_jobs
    from harness.scenes.assetdeps import copy_dependencies
    from harness.scenes.importers.common import (
        PlacedObject,
        decompose,
        sanitize_id,
        write_bytes_atomic,
    )
    from harness.scenes.importers.gltf import object_scene
    from harness.scenes.load import validate_scene

    path = Path(path)
    out_root = Path(out_root)
    found = detected or detect_format(path)
    if found.format in ("gltf", "scenestate"):
        raise ImportError_(f"{found.label} is not imported here", path=path,
                           hint="use import_gltf / import_scenestate")
    conv = (conventions or Conventions()).resolve(found.format, path=path)
    from harness.scenes.assetdeps import dependency_files

    # every file the asset pulls in (materials, textures, USD layers) must sit beside it;
    # refused before Blender reads anything
    dependency_files(path.parent.resolve(), path.resolve(), error=ImportError_)
    check_finite_vertices(path, found.format)
    if found.format == "obj":  # read in Python, as the sceneState importer does: no Blender
        result = _measure_obj(path)
    else:
        (result,) = run_jobs(
            [{"op": "measure", "file": str(path.resolve()), "format": found.format,
              "variant": found.variant}],
            where=path,
        )
    if "error" in result:
        raise ImportError_(f"Blender's {found.label} importer failed: {result['error']}",
                           path=path, hint="check that the file opens in Blender")
    lo, hi = np.asarray(result["lo"], dtype=float), np.asarray(result["hi"], dtype=float)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):  # e.g. a USD's NaN points
        raise ImportError_("the object has NaN or infinite vertex coordinates", path=path,
                           hint="every vertex needs finite x, y and z")
    rot = conv.rotation()
    size_m = np.abs(rot) @ (hi - lo) * conv.metres_per_unit
    fit = display_scale(size_m, path=path)
    world = np.eye(4)
    world[:3, :3] = rot
    rebase = found.format == "obj"
    placement = decompose(world, lo, hi, unit=conv.metres_per_unit * fit, rebase=rebase,
                          path=path, pointer="")
    folder = f"assets/{sanitize_id(asset_dir or path.stem, 'object')}"
    rel = f"{folder}/{path.name}"
    raw = path.read_bytes()
    if rebase:
        if not placement.is_identity:
            raw = rebase_obj(raw, np.asarray(placement.axes))
        rel = f"{folder}/{path.stem}.obj"
    copy_dependencies(path, out_root / folder, write_bytes_atomic)
    write_bytes_atomic(out_root / rel, raw)
    obj = PlacedObject(sanitize_id(label, "object")[:64] or "object", label, rel, placement)
    scene = object_scene(meta, [obj], ground=ground, path=path)
    scene = replace(scene, source=source_record(found, conv.record(), result, size_m, fit))
    return validate_scene(scene, out_root, path=path)
