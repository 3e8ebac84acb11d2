"""Importers from external scene formats into the frozen scene model.

* :func:`import_scenestate` — SceneEval ``sceneState`` JSON (``scene@1.0.2``), assets resolved
  from ``modelId`` under a user-given asset root;
* :func:`import_gltf` — a glTF 2.0 / GLB scene, one mesh node per object.

Both write the assets the scene uses (z-up OBJ, see ``common``) under the output scene-set root
and return a validated :class:`~harness.scenes.model.Scene`; :func:`write_scene_file` stores it
as a scene file so that ``build_manifest`` / ``SceneSet.load`` can take over.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.scenes.importers.common import write_bytes_atomic
from harness.scenes.importers.gltf import import_gltf
from harness.scenes.importers.scenestate import import_scenestate
from harness.scenes.model import Scene


def write_scene_file(scene: Scene, out_root: Path | str, rel_path: str | None = None) -> Path:
    """Write ``scene`` as pretty JSON (indent 1, field order of the model, trailing newline) to
    ``<out_root>/<rel_path>`` (default ``scenes/<generator>/<prompt_id>.json``)."""
    rel = rel_path or f"scenes/{scene.generator}/{scene.prompt_id}.json"
    text = json.dumps(scene.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    target = Path(out_root) / rel
    write_bytes_atomic(target, text.encode("utf-8"))
    return target


__all__ = ["import_gltf", "import_scenestate", "write_scene_file"]
