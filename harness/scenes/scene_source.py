"""Open the scene set an audit names: a scene-set folder, one sceneState JSON or one glTF/GLB."""

from __future__ import annotations

from pathlib import Path

from harness.core.hashing import sha256_file
from harness.core.paths import BUNDLED_SCENES
from harness.scenes.importers import import_scene_set
from harness.scenes.sceneset import SceneSet


def load_scene_set(path: Path | None, cache_dir: Path | None = None) -> SceneSet:
    """The scene set at ``path`` (a scene-set directory, a sceneState JSON or a GLB), verified.

    ``None`` means the bundled set in ``fixtures/scenes``. A single scene file is imported into
    ``<cache_dir>/imports/<16 hex of its sha256>`` (the same file always lands in one place;
    without ``cache_dir``, under the default cache directory).
    """
    root = Path(path) if path is not None else BUNDLED_SCENES
    if root.is_file():
        out = None if cache_dir is None else Path(cache_dir) / "imports" / sha256_file(root)[:16]
        return import_scene_set(root, out_root=out)
    return SceneSet.load(root, verify=True)
