"""``t3d-audit import-scenes GENERATORS_DIR --prompts FILE --out DIR``: a scene set from the
outputs of several generators.

GENERATORS_DIR holds one folder per generator and, in it, one file per prompt named
``<prompt_id>.<ext>`` in any format ``import-scene`` accepts (glTF/GLB, OBJ, PLY, STL, USD,
sceneState JSON), recognised by content (see ``harness.scenes.importers.batch``). Object
files take their generator's conventions (up, front, unit or scale) from ``--conventions``
(JSON ``{generator: {"up": "z", "front": "-z", "unit": "mm", "files": {prompt_id: {"up":
"-x"}}}}``: the generator's default with per-file entries laid over it) or the
``"@conventions"`` object of a JSON prompts file. ``--prompts``
maps each prompt id to its text and optional labels (JSON or CSV, see ``batch.read_prompts``).
``--asset-root`` / ``--asset-map``: where sceneState ``modelId`` assets resolve (default: the
generator's folder).

All or nothing: the set is built in a staging folder next to DIR and renamed to DIR only when
every file imported and the manifest was written; every bad file is reported at once. DIR must
not exist or be empty. Prints one line per generator (scenes written, prompts it has no file
for), one line per skipped file with the reason, and the manifest path. A generator folder
that yields no scene fails the command (exit 2) unless ``--allow-missing``.
"""

from __future__ import annotations

import argparse

from harness.run import argtypes

HELP = "import a folder of generator outputs into one scene set"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("generators_dir", type=argtypes.input_path, help="folder with one folder per generator")
    parser.add_argument("--prompts", type=argtypes.input_path, required=True,
                        help="JSON or CSV: prompt id -> prompt text (and optional labels)")
    parser.add_argument("--out", type=argtypes.input_path, required=True, help="scene-set folder to create")
    parser.add_argument("--asset-root", type=argtypes.input_path,
                        help="sceneState files: asset root (default: the generator's folder)")
    parser.add_argument("--asset-map", type=argtypes.input_path,
                        help="sceneState files: JSON {modelId or source: path pattern(s)}")
    parser.add_argument("--conventions", type=argtypes.input_path,
                        help='object files: JSON {generator: {"up", "front", "unit", "scale", '
                        '"files": {prompt_id or file name: {...}}}}')
    parser.add_argument("--allow-missing", action="store_true",
                        help="accept generator folders that yield no scene")


def run(args: argparse.Namespace) -> int:
    from harness.commands.import_scene import _json_object, _named_as
    from harness.core.errors import ImportError_
    from harness.scenes.importers.batch import import_batch, read_conventions, read_prompts
    from harness.scenes.importers.staging import staged_directory
    from harness.scenes.set_manifest import MANIFEST_NAME, build_manifest, write_manifest

    if args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        raise ImportError_("--out exists and is not an empty folder", path=args.out,
                           hint="import-scenes writes a complete new scene set; pick a new folder")
    prompts = read_prompts(args.prompts)
    asset_map = _json_object(args.asset_map, "asset map")
    conventions = read_conventions(args.conventions, args.prompts)
    with staged_directory(args.out) as stage, _named_as(stage, args.out):
        result = import_batch(args.generators_dir, prompts, stage,
                              asset_root=args.asset_root, asset_map=asset_map,
                              conventions=conventions, allow_missing=args.allow_missing)
        write_manifest(stage, build_manifest(stage, sorted(result.scene_files)))
    per_gen: dict[str, int] = {}
    for path in result.scene_files:
        per_gen[path.parent.name] = per_gen.get(path.parent.name, 0) + 1
    for gen, n in sorted(per_gen.items()):
        missing = result.missing.get(gen, [])
        note = f"; no file for {len(missing)} prompt(s): {', '.join(missing)}" if missing else ""
        print(f"{gen}: {n} scene(s){note}")
    for gen in result.empty:
        print(f"{gen}: 0 scene(s) (allowed by --allow-missing)")
    for file, why in result.skipped:
        print(f"skipped {file}: {why}")
    print(args.out / MANIFEST_NAME)
    return 0
