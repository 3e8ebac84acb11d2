"""``t3d-audit build-scenes [--out ROOT] [--prompts-dir DIR] [--check]``.

Regenerates the bundled frozen scene set deterministically: assets, 6 generators × 50
prompts, ``manifest.json`` (under ``--out``, default ``fixtures/scenes``) and the sampled
``prompts.json`` + ``paraphrases.json`` (under ``--prompts-dir``, default ``fixtures/prompts``).
``--check`` builds into a temporary directory instead and compares the manifest, prompts and
paraphrase files byte for byte with the ones under ``--out``/``--prompts-dir``; exit status 1
when any differs. The hand-written pool (``--pool``) is the only input.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from harness.run import argtypes

HELP = "generate the bundled frozen scene set"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.core.paths import BUNDLED_SCENES, FIXTURES

    parser.add_argument("--out", type=argtypes.output_dir, default=BUNDLED_SCENES, help="scene-set root to write (default fixtures/scenes)")
    parser.add_argument(
        "--prompts-dir", type=argtypes.output_dir, default=FIXTURES / "prompts", help="where prompts.json and paraphrases.json go"
    )
    parser.add_argument("--pool", type=argtypes.input_path, default=None, help="prompt pool JSONL (default fixtures/prompts/pool.jsonl)")
    parser.add_argument("--check", action="store_true", help="build into a temp dir and compare with --out, byte for byte")


def run(args: argparse.Namespace) -> int:
    from harness.scenes.bundle import build_scene_set, compare_builds
    from harness.scenes.prompts import POOL_PATH

    pool = args.pool or POOL_PATH
    start = time.perf_counter()
    if args.check:
        with tempfile.TemporaryDirectory(prefix="t3d-build-") as tmp:
            built = build_scene_set(Path(tmp) / "scenes", Path(tmp) / "prompts", pool=pool)
            diffs = compare_builds(built, args.out, args.prompts_dir)
        if diffs:
            for path in diffs:
                print(f"differs from a fresh build: {path}")
            print("the committed scene set is not what build-scenes produces; rebuild it or restore the files")
            return 1
        print(f"ok: {len(built.scene_files)} scenes reproduce the committed manifest ({time.perf_counter() - start:.1f} s)")
        return 0
    built = build_scene_set(args.out, args.prompts_dir, pool=pool)
    print(f"wrote {len(built.scene_files)} scenes, assets and {built.manifest} ({time.perf_counter() - start:.1f} s)")
    print(f"wrote {built.prompts_file} and {built.paraphrases_file}")
    return 0
