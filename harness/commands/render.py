"""``t3d-audit render``: render one scene file under c0 or one factor level, to a PNG.

Background levels are composited onto the transparent render; without a background factor
the PNG keeps its alpha channel (RGBA).
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from harness.core.errors import ProtocolError
from harness.core.paths import default_cache_dir
from harness.protocol.configurations import BASELINE, C0
from harness.protocol.profiles import get_profile
from harness.run import argtypes
from harness.vocab.factors import FACTORS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scene_file", type=argtypes.input_path, help="scene JSON file")
    parser.add_argument("--factor", default=BASELINE, help="factor to set (default: c0)")
    parser.add_argument("--level", default=C0, help="level of --factor as in Table 11")
    parser.add_argument("--profile", default="default", help="profile whose c0 to start from")
    parser.add_argument("--samples", type=argtypes.samples, default=None, help="override the sample count")
    parser.add_argument(
        "--root", type=argtypes.input_path, default=None, help="scene-set root (default: found from the file)"
    )
    parser.add_argument("--cache-dir", type=argtypes.output_dir, default=None, help="audit cache directory")
    parser.add_argument("--out", type=argtypes.output_file, required=True, help="output PNG")


def run(args: argparse.Namespace) -> int:
    from PIL import Image

    from harness.protocol.configurations import background_rgb
    from harness.render.composite import composite
    from harness.render.scene_inputs import load_scene_file
    from harness.render.service import RenderService
    from harness.scenes.model import scene_identity

    profile = get_profile(args.profile)
    if args.factor in ("c0", BASELINE):
        args.factor, args.level = BASELINE, C0
    stage = FACTORS.get(args.factor).stage if args.factor in FACTORS else None
    if stage == "caption":
        raise ProtocolError(
            f"factor {args.factor!r} changes the caption, not the image", where="--factor"
        )
    scene, root = load_scene_file(args.scene_file, args.root)
    config = profile.for_scene_kind(scene.kind).configuration(args.factor, args.level)
    cfg = config.render
    if args.samples is not None:
        if args.samples < 1:
            raise ProtocolError("--samples must be >= 1", where="--samples")
        cfg = replace(cfg, samples=args.samples)
    service = RenderService((args.cache_dir or default_cache_dir()) / "renders")
    rgba = service.render(scene, root, scene_identity(scene, root), cfg)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if stage == "composite":
        Image.fromarray(composite(rgba, background_rgb(config.background)), "RGB").save(args.out)
    else:
        Image.fromarray(rgba, "RGBA").save(args.out)
    print(f"{args.out}: {scene.id} {config.id} ({rgba.shape[1]}x{rgba.shape[0]})")
    return 0
