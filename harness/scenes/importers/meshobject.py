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

import numpy as np

from harness.core.errors import ImportError_
from harness.scenes.fileformats import Detected, check_finite_vertices, detect_format
from harness.scenes.importers.conventions import Conventions, display_scale, source_record
from harness.scenes.importers.objbox import blocks, obj_box
from harness.scenes.meshbytes import mesh_bytes
from harness.scenes.model import Scene

_OBJ_COLOUR_WIDTH = 7  # "v x y z r g b": the vertex-colour extension TripoSR and trimesh write


def _measure_obj(path: Path, raw: bytes) -> dict[str, object]:
    """Box of an OBJ's ``v`` lines (``raw``: the file's bytes) and its colour source:
    ``material`` (an ``mtllib`` that exists), ``vertex`` (``v x y z r g b`` lines) or
    ``none``. Measured block by block (``objbox``): memory beyond ``raw`` stays bounded."""
    box = obj_box(raw, path)
    colour = "vertex" if box.width >= _OBJ_COLOUR_WIDTH else "none"
    if any((path.parent / name).is_file() for name in box.mtllibs):
        colour = "material"
    return {"lo": box.lo.tolist(), "hi": box.hi.tolist(), "colour": colour}


def rebase_obj(raw: bytes, axes: np.ndarray) -> bytes:
    """``scenestate._rebase_obj`` (the same bytes out) with the signed permutation read once,
    not per line: ``v``/``vn`` coordinates reordered/negated, other lines verbatim."""
    perm = [(int(np.argmax(np.abs(row))), bool(row[int(np.argmax(np.abs(row)))] < 0))
            for row in np.asarray(axes)]

    def flip(value: str) -> str:
        return value[1:] if value.startswith("-") else "-" + value

    chunks = []
    for block in blocks(raw):  # block by block: a few blocks of text beside raw and the result
        out = []
        for line in block.decode("utf-8", errors="replace").splitlines():
            if line.lstrip().startswith("v"):
                parts = line.split()
                if parts[0] in ("v", "vn") and len(parts) >= 4:
                    xyz = parts[1:4]
                    new = [flip(xyz[k]) if neg else xyz[k] for k, neg in perm]
                    line = " ".join([parts[0], *new, *parts[4:]])
            out.append(line)
        chunks.append(("\n".join(out) + "\n").encode("utf-8"))
    return b"".join(chunks) or b"\n"


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
    # read once within the input bound: measured (OBJ) and copied from these bytes
    raw = mesh_bytes(path, f"{found.label} file")
    if found.format == "obj":  # read in Python, as the sceneState importer does: no Blender
        result = _measure_obj(path, raw)
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
