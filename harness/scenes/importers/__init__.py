"""Importers from external scene formats into the frozen scene model.

* :func:`import_scenestate` — SceneEval ``sceneState`` JSON (``scene@1.0.2``), assets resolved
  from ``modelId`` under a user-given asset root;
* :func:`import_gltf` — a glTF 2.0 / GLB file: one generated object, or a room of objects;
* ``meshobject.import_object_file`` — one object from OBJ, PLY (mesh, point cloud, 3D Gaussian
  splats), STL or USD; ``dispatch.import_file`` picks the importer by the file's content.

Both write the assets the scene uses (glTF/GLB kept as is, OBJ copied or re-based, see
``common``) under the output scene-set root
and return a validated :class:`~harness.scenes.model.Scene`; :func:`write_scene_file` stores it
as a scene file so that ``build_manifest`` / ``SceneSet.load`` can take over.
:func:`import_scene_set` does all of it for one file and returns a loaded one-scene SceneSet
(used by ``--audit-scenes=FILE``).
"""

from __future__ import annotations

from pathlib import Path

from harness.core.errors import ImportError_
from harness.core.fileio import json_text
from harness.core.hashing import sha256_file
from harness.scenes.importers.common import write_bytes_atomic
from harness.scenes.importers.gltf import import_gltf
from harness.scenes.importers.scenestate import import_scenestate
from harness.scenes.model import Scene


def write_scene_file(scene: Scene, out_root: Path | str, rel_path: str | None = None) -> Path:
    """Write ``scene`` as pretty JSON (indent 1, field order of the model, trailing newline) to
    ``<out_root>/<rel_path>`` (default ``scenes/<generator>/<prompt_id>.json``)."""
    rel = rel_path or f"scenes/{scene.generator}/{scene.prompt_id}.json"
    text = json_text(scene.to_dict(), indent=1, sort_keys=False)
    target = Path(out_root) / rel
    write_bytes_atomic(target, text.encode("utf-8"))
    return target


def import_scene_set(
    path: Path | str,
    *,
    out_root: Path | str | None = None,
    asset_root: Path | str | None = None,
    **meta: str | None,
):
    """Import one file of any supported format (``dispatch.import_file``: sceneState JSON,
    glTF/GLB, OBJ, PLY, STL, USD) into a fresh scene set and load it.

    ``out_root`` defaults to ``<cache dir>/imports/<first 16 hex of the file's sha256>``, so the
    same file always lands in the same place; ``asset_root`` (sceneState only) defaults to the
    file's folder. ``meta``: generator, prompt_id, prompt, prompt_source, scene_id (else taken
    from the file's metadata). Returns a verified :class:`~harness.scenes.sceneset.SceneSet`.
    """
    from harness.core.paths import default_cache_dir
    from harness.scenes.sceneset import SceneSet
    from harness.scenes.set_manifest import build_manifest, write_manifest

    path = Path(path)
    if not path.is_file():
        raise ImportError_("scene file not found", path=path)
    if out_root is None:
        out_root = default_cache_dir() / "imports" / sha256_file(path)[:16]
    from harness.scenes.importers.staging import staged_directory

    out = Path(out_root)
    with staged_directory(out) as stage:
        from harness.scenes.importers.dispatch import import_file

        root = Path(asset_root) if asset_root is not None else path.parent
        scene = import_file(path, out_root=stage, asset_root=root, **meta)
        scene_file = write_scene_file(scene, stage)
        write_manifest(stage, build_manifest(stage, [scene_file]))
    return SceneSet.load(out)


__all__ = ["import_gltf", "import_scene_set", "import_scenestate", "write_scene_file"]
