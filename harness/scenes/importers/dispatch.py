"""One entry point for every supported file: :func:`import_file` detects the format by
content (``harness.scenes.fileformats.detect_format``) and calls its importer, so
``import-scene``, ``import-scenes`` and ``--audit-scenes=FILE`` accept the same files.

* glTF/GLB -> ``gltf.import_gltf`` (an object or a room);
* sceneState JSON -> ``scenestate.import_scenestate`` (needs an asset root);
* OBJ, PLY (mesh, point cloud, splats), STL, USD -> ``meshobject.import_object_file``
  (an object scene);
* anything else -> one-line refusal naming the supported formats and a converter.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.core.errors import ImportError_
from harness.scenes.fileformats import detect_format
from harness.scenes.importers.conventions import Conventions
from harness.scenes.model import Scene


def import_file(
    path: Path | str,
    *,
    out_root: Path | str,
    asset_root: Path | str | None = None,
    asset_map: Mapping[str, object] | None = None,
    asset_dir: str | None = None,
    kind: str | None = None,
    ground: bool = True,
    label: str | None = None,
    labels: Mapping[str, str] | None = None,
    conventions: Conventions | None = None,
    **meta: str | None,
) -> Scene:
    """Import ``path`` whatever its supported format; ``meta``: generator, prompt_id, prompt,
    prompt_source, scene_id. Options that do not apply to the detected format are ignored,
    except ``conventions`` and ``kind="room"`` for formats that cannot honour them."""
    from harness.scenes.importers.common import resolve_meta
    from harness.scenes.importers.gltf import import_gltf
    from harness.scenes.importers.meshobject import import_object_file
    from harness.scenes.importers.scenestate import import_scenestate

    path = Path(path)
    found = detect_format(path)
    if found.format == "gltf":
        return import_gltf(path, out_root=out_root, asset_dir=asset_dir, kind=kind,
                           ground=ground, label=label, labels=labels, conventions=conventions,
                           **meta)
    if conventions is not None and conventions != Conventions() and found.format == "scenestate":
        raise ImportError_("--up/--front/--unit/--scale apply to object files, not sceneState",
                           path=path, hint="a sceneState declares its own up axis and unit")
    if found.format == "scenestate":
        if asset_root is None:
            raise ImportError_(
                "a sceneState import needs --asset-root",
                path=path,
                hint="pass --asset-root DIR: the folder modelIds resolve under "
                "(SceneEval's _data folder)",
            )
        return import_scenestate(path, asset_root=asset_root, out_root=out_root, labels=labels,
                                 asset_map=asset_map, **meta)
    if kind == "room":
        raise ImportError_(f"a {found.label} file is one object; --kind room needs glTF",
                           path=path)
    full = resolve_meta(dict(meta), None, default_source=found.label, path=path)
    return import_object_file(path, out_root=out_root, asset_dir=asset_dir, meta=full,
                              label=label or full["prompt"], conventions=conventions,
                              ground=ground, detected=found)
