"""``t3d-audit import-scene FILE --out DIR ...``: import an external scene into a scene set.

FILE is a SceneEval ``sceneState`` JSON (``--asset-root`` required: where ``<source>/<assetId>``
meshes live) or a glTF/GLB scene (``.gltf``/``.glb``). The scene's assets are written under
``DIR/assets/`` and the scene to ``DIR/scenes/<generator>/<prompt_id>.json``; then
``DIR/manifest.json`` is rebuilt over the scenes it already listed plus the new one, so the set
stays valid for ``validate-scenes`` and ``SceneSet.load``.

All or nothing: everything is written into a staging folder next to DIR (a hard-linked copy of
DIR when it exists) that replaces DIR only when the import, the scene file and the manifest all
succeeded; a failed import leaves no files behind and DIR as it was
(``harness.scenes.importers.staging``). DIR must be a folder (or not exist yet).

Identity fields: ``--generator``, ``--prompt-id``, ``--prompt``, ``--prompt-source`` and
``--scene-id`` override the file's metadata (sceneState: top-level ``metadata`` object; glTF:
``asset.extras``). ``--labels`` names a JSON object mapping sceneState ``modelId`` to a label.
Prints the written scene path.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HELP = "import a sceneState JSON or glTF/GLB scene into a scene set"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="sceneState .json, .gltf or .glb file")
    parser.add_argument("--out", type=Path, required=True, help="scene-set root to write into")
    parser.add_argument(
        "--asset-root", type=Path, help="sceneState only: root of <source>/<id> meshes"
    )
    parser.add_argument("--generator")
    parser.add_argument("--prompt-id")
    parser.add_argument("--prompt")
    parser.add_argument("--prompt-source")
    parser.add_argument("--scene-id")
    parser.add_argument("--labels", type=Path, help="sceneState only: JSON {modelId: label}")
    parser.add_argument(
        "--asset-dir", help="glTF only: folder name under assets/ (default: file stem)"
    )
    parser.add_argument("--no-manifest", action="store_true", help="do not rebuild manifest.json")


@contextmanager
def _named_as(stage: Path, out: Path) -> Iterator[None]:
    """Re-raise scene errors that name a file in ``stage`` as naming it under ``out``."""
    from harness.errors import SceneError

    try:
        yield
    except SceneError as exc:
        if str(stage) not in f"{exc.what} {exc.path} {exc.hint}":
            raise

        def fix(text: str | None) -> str | None:
            return text.replace(str(stage), str(out)) if text else text

        what = fix(exc.what) or exc.what
        raise type(exc)(what, path=fix(exc.path), pointer=exc.pointer, hint=fix(exc.hint)) from None


def run(args: argparse.Namespace) -> int:
    from harness.errors import ImportError_
    from harness.scenes.importers import import_gltf, import_scenestate, write_scene_file
    from harness.scenes.importers.staging import staged_directory
    from harness.scenes.set_manifest import (
        MANIFEST_NAME,
        build_manifest,
        read_manifest,
        write_manifest,
    )

    meta = {
        "generator": args.generator,
        "prompt_id": args.prompt_id,
        "prompt": args.prompt,
        "prompt_source": args.prompt_source,
        "scene_id": args.scene_id,
    }
    with staged_directory(args.out) as stage, _named_as(stage, args.out):
        if args.file.suffix.lower() in (".glb", ".gltf"):
            scene = import_gltf(args.file, out_root=stage, asset_dir=args.asset_dir, **meta)
        else:
            if args.asset_root is None:
                raise ImportError_(
                    "a sceneState import needs --asset-root",
                    path=args.file,
                    hint="where modelIds resolve",
                )
            labels = None
            if args.labels is not None:
                try:
                    labels = json.loads(args.labels.read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    raise ImportError_(f"cannot read labels: {exc}", path=args.labels) from None
                if not isinstance(labels, dict):
                    raise ImportError_("labels must be a JSON object", path=args.labels)
            scene = import_scenestate(
                args.file, asset_root=args.asset_root, out_root=stage, labels=labels, **meta
            )
        target = write_scene_file(scene, stage)
        if not args.no_manifest:
            paths = {target.resolve()}
            if (stage / MANIFEST_NAME).is_file():
                listed = read_manifest(stage)["scenes"]
                paths |= {(stage / e["path"]).resolve() for e in listed}
            write_manifest(stage, build_manifest(stage, sorted(paths)))
    print(args.out / target.relative_to(stage))
    return 0
