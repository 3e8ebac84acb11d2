"""Measure (and split) glTF/GLB assets with Blender's importer, in a child process.

Importers run in the CLI or test process and must not disturb that process's renderer, so
they call :func:`run_jobs`, which starts ``python -m harness.render.gltfmeasure IN OUT``: a
fresh Blender per batch reads the jobs in ``IN`` (JSON list) and writes one result per job
to ``OUT``. Jobs (paths absolute; coordinates z up, metres, as Blender imports them):

* ``{"op": "measure", "file": F}`` -> ``{"lo": [x, y, z], "hi": [x, y, z]}``: the bounding box
  of the meshes :func:`harness.render.gltfscene.import_parts` gives, i.e. what is rendered;
* ``{"op": "measure", "file": F, "format": FMT, "variant": V}`` (FMT ``obj``, ``ply``,
  ``stl``, ``usd``; V the PLY variant) -> the same box of the meshes
  :func:`harness.render.meshformats.import_parts` gives, plus its ``colour``, ``kind`` and
  ``count`` facts;
* ``{"op": "split", "file": F, "out_dir": D}`` -> ``{"objects": [...]}``: one entry per object
  node (:func:`~harness.render.gltfscene.object_roots`) with ``name``, ``extras`` (the node's
  glTF extras, strings/numbers/booleans only), ``matrix`` (4x4 world matrix, rows),
  ``world_lo``/``world_hi`` (its subtree's world box) and, when it has geometry, ``asset``
  (``D/<k>.glb``, the subtree exported with the node at the origin) with that file's own
  measured ``lo``/``hi``.

A job that fails gets ``{"error": "<Blender's message>"}``; the others still run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from harness.core.errors import ImportError_

# what a child that could not allocate prints (Python, the dynamic loader, Blender's allocator)
_OOM_MARKS = ("MemoryError", "failed to map segment", "Cannot allocate memory", "bad_alloc")


def _extras(ob: object) -> dict[str, object]:
    out: dict[str, object] = {}
    for key in ob.keys():  # noqa: SIM118 - an ID property group, not a dict
        value = ob.get(key)
        if isinstance(value, str | int | float | bool):
            out[key] = value
    return out


def _measure(bpy: ModuleType, path: str) -> dict[str, object]:
    from harness.render import gltfscene

    bpy.ops.wm.read_factory_settings(use_empty=True)
    parts = gltfscene.import_parts(bpy, path)
    box = gltfscene.parts_bounds(parts)
    if box is None:
        return {"error": "the file has no mesh geometry"}
    return {"lo": box[0].tolist(), "hi": box[1].tolist(), "colour": _colour(parts)}


def _colour(parts: list[object]) -> str:
    """``material`` when a mesh has a material, else ``vertex`` when one has a colour
    attribute (shown by the renderer), else ``none`` (grey)."""
    if any(any(m is not None for m in mesh.materials) for mesh, _ in parts):
        return "material"
    return "vertex" if any(len(mesh.color_attributes) for mesh, _ in parts) else "none"


def _measure_mesh(bpy: ModuleType, path: str, fmt: str, variant: str | None) -> dict[str, object]:
    from harness.render import gltfscene, meshformats

    bpy.ops.wm.read_factory_settings(use_empty=True)
    parts, facts = meshformats.import_parts(bpy, path, fmt, variant, measure_only=True)
    if "lo" in facts:  # splats: measured from their parameters, not built
        return facts
    box = gltfscene.parts_bounds(parts)
    if box is None:
        return {"error": "the file has no geometry"}
    return {"lo": box[0].tolist(), "hi": box[1].tolist(), **facts}


def _split(bpy: ModuleType, path: str, out_dir: str) -> dict[str, object]:
    import numpy as np

    from harness.render import gltfscene

    bpy.ops.wm.read_factory_settings(use_empty=True)
    objects = gltfscene.import_objects(bpy, path)
    roots = gltfscene.object_roots(objects)
    entries = []
    for root in roots:  # measure everything before export_subtree moves roots
        members = gltfscene.subtree(root)
        box = gltfscene.parts_bounds(gltfscene.evaluated_parts(bpy, members))
        entries.append(
            {
                "name": root.name,
                "extras": _extras(root),
                "matrix": [[float(v) for v in row] for row in np.array(root.matrix_world)],
                "world_lo": None if box is None else box[0].tolist(),
                "world_hi": None if box is None else box[1].tolist(),
            }
        )
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for k, (root, entry) in enumerate(zip(roots, entries, strict=True)):
        if entry["world_lo"] is not None:
            target = Path(out_dir) / f"{k}.glb"
            gltfscene.export_subtree(bpy, root, target)
            entry["asset"] = str(target)
    for entry in entries:
        if "asset" in entry:
            entry.update(_measure(bpy, entry["asset"]))
    return {"objects": entries}


def _last_line(message: str) -> str:
    """The informative line of a Blender operator error (its traceback ends with it, followed
    by a ``Location:`` line)."""
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith("Location:")]
    return lines[-1] if lines else ""


def main(argv: list[str]) -> int:
    """Child-process entry: ``python -m harness.render.gltfmeasure IN OUT``."""
    from harness.render import resource_limits

    limit = resource_limits.memory_limit()
    resource_limits.apply_memory_limit(limit)  # before Blender maps anything
    from harness.render import bpyaccess

    jobs = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    bpy = bpyaccess.load()
    results = []
    for job in jobs:
        try:
            if job["op"] == "measure" and job.get("format", "gltf") != "gltf":
                results.append(_measure_mesh(bpy, job["file"], job["format"], job.get("variant")))
            elif job["op"] == "measure":
                results.append(_measure(bpy, job["file"]))
            else:
                results.append(_split(bpy, job["file"], job["out_dir"]))
        except MemoryError:
            results.append({"error": resource_limits.out_of_memory(limit)})
        except Exception as exc:  # Blender's importer raises RuntimeError with its message
            text = _last_line(str(exc)) or type(exc).__name__
            if "MemoryError" in text:  # numpy's, re-raised by the importer
                text = f"{resource_limits.out_of_memory(limit)} ({text})"
            results.append({"error": text})
    Path(argv[1]).write_text(json.dumps(results), encoding="utf-8")
    return 0


def run_jobs(jobs: list[dict[str, object]], *, where: Path | str = "") -> list[dict[str, object]]:
    """Run ``jobs`` (see the module docstring) in one child Blender; one result per job.

    Raises :class:`ImportError_` naming ``where`` when the child process itself fails.
    """
    if not jobs:
        return []
    from harness.render import resource_limits

    limit = resource_limits.memory_limit()  # checked here, so a bad value fails in this process
    timeout_s = resource_limits.import_timeout()
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory(prefix="t3d-gltf-") as tmp:
        src, dst = Path(tmp) / "jobs.json", Path(tmp) / "results.json"
        src.write_text(json.dumps(jobs), encoding="utf-8")
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "harness.render.gltfmeasure", str(src), str(dst)],
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout_s,
            )
        except subprocess.TimeoutExpired:
            raise ImportError_(
                f"Blender took over {timeout_s:g} s to read the assets",
                path=where,
                hint=f"the deadline is {resource_limits.IMPORT_TIMEOUT_ENV} seconds",
            ) from None
        if proc.returncode != 0 or not dst.is_file():
            tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-6:]
            death = resource_limits.describe_death(proc.returncode, limit)
            if death is None and any(m in line for line in tail for m in _OOM_MARKS):
                death = resource_limits.out_of_memory(limit)
            raise ImportError_(
                f"Blender's importer crashed{f': {death}' if death else ''}",
                path=where,
                hint=" | ".join(tail) or f"exit status {proc.returncode}",
            )
        results = json.loads(dst.read_text(encoding="utf-8"))
    if len(results) != len(jobs):
        raise ImportError_("Blender's asset measurement returned a partial result", path=where)
    return results


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
