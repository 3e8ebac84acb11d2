"""``t3d-audit contact-sheet``: one PNG grid of a scene under each factor's levels.

One row per image factor (resolution, focal length, lighting, background, pitch, yaw), one
column per level, each tile composited over the background level (white for the other rows)
and labelled. Renders go through the render cache, so a second sheet is instant.

``--scenes DIR`` instead shows a whole scene set (e.g. one written by ``import-scenes``) at the
profile's c0: one row per generator, one column per prompt id (sorted), each tile labelled
``<generator>/<prompt_id>``; an empty cell means the generator has no scene for that prompt.
Look at it before auditing an imported set.

``--axes`` draws each object's axis triad (+x red, +y green, +z blue: up) and a white ``F``
arrow along its front (``harness.render.axes_overlay``): check an import's ``--up`` and
``--front`` conventions before auditing.

``--orientations`` (an imported object scene; with ``--scenes``, one sheet per imported
object scene, named ``<out stem>-<generator>-<prompt_id>.png``) draws the object in all 24 candidate
conventions instead: one row per up axis (x, -x, y, -y, z, -z), one column per front
perpendicular to it, each tile labelled with the ``--up``/``--front`` that would import it so
and overlaid with the axis triad and ``F`` arrow; the convention the scene was imported with
is outlined in yellow (``harness.scenes.importers.orientations``). One look tells which tile stands
upright and faces the camera; pass those values to ``import-scene`` or a ``"files"`` entry of
``import-scenes --conventions``.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from harness.core.paths import default_cache_dir
from harness.protocol.profiles import get_profile
from harness.run import argtypes
from harness.vocab.factors import RESOLUTION, rendered_factor_names

LABEL_PX = 14


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scene_file", type=argtypes.input_path, nargs="?", help="scene JSON file")
    parser.add_argument(
        "--scenes", type=argtypes.input_path, help="scene-set folder: every scene at c0, generators x prompts"
    )
    parser.add_argument("--out", type=argtypes.output_file, required=True, help="output PNG")
    parser.add_argument("--profile", default="default", help="profile whose c0 and levels to show")
    parser.add_argument("--all-levels", action="store_true", help="every Table 11 level")
    parser.add_argument("--tile", type=argtypes.tile, default=160, help="tile size in pixels (default 160)")
    parser.add_argument(
        "--samples", type=argtypes.samples, default=None, help="override samples (default: the profile's)"
    )
    parser.add_argument(
        "--size",
        type=argtypes.pixels,
        default=None,
        help="render size of non-resolution rows (default: the profile's c0 resolution)",
    )
    parser.add_argument("--axes", action="store_true",
                        help="draw each object's axis triad and front marker (check conventions)")
    parser.add_argument("--orientations", action="store_true",
                        help="an imported object scene in all 24 up/front conventions, labelled "
                        "(render size: --size, default the tile size)")
    parser.add_argument("--root", type=argtypes.input_path, default=None, help="scene-set root")
    parser.add_argument("--cache-dir", type=argtypes.output_dir, default=None, help="audit cache directory")


def run(args: argparse.Namespace) -> int:
    from PIL import Image, ImageDraw

    from harness.protocol.configurations import background_rgb, factors
    from harness.render.composite import composite
    from harness.render.scene_inputs import load_scene_file
    from harness.render.service import RenderService
    from harness.scenes.model import scene_identity

    profile = get_profile(args.profile)
    if (args.scenes is None) == (args.scene_file is None):
        from harness.core.errors import SceneError

        raise SceneError(
            "give either a scene file or --scenes DIR",
            hint="t3d-audit contact-sheet SCENE.json --out X.png, or --scenes DIR --out X.png",
        )
    if args.scenes is not None:
        if args.orientations:
            return _orientation_sheets(args, profile)
        return _scene_set_sheet(args, profile)
    scene, root = load_scene_file(args.scene_file, args.root)
    if args.orientations:
        return _orientation_sheet(args, profile, scene, root, args.out)
    profile = profile.for_scene_kind(scene.kind)
    identity = scene_identity(scene, root)
    service = RenderService((args.cache_dir or default_cache_dir()) / "renders")
    rows: list[tuple[str, list[str]]] = []
    for name in rendered_factor_names():
        levels = factors()[name].levels if args.all_levels else profile.levels.get(name, ())
        if levels:
            rows.append((name, list(levels)))
    if not rows:
        print(f"profile {profile.name} selects no image factor levels")
        return 1
    tile, label = args.tile, LABEL_PX
    cols = max(len(levels) for _, levels in rows)
    head = 90
    sheet = Image.new("RGB", (head + cols * tile, len(rows) * (tile + label)), (40, 40, 40))
    draw = ImageDraw.Draw(sheet)
    for r, (name, levels) in enumerate(rows):
        y = r * (tile + label)
        draw.text((4, y + tile // 2), name, fill=(255, 255, 255))
        for c, level in enumerate(levels):
            config = profile.configuration(name, level)
            cfg = config.render
            if args.samples is not None:
                cfg = replace(cfg, samples=args.samples)
            if args.size is not None and name != RESOLUTION:
                cfg = replace(cfg, resolution_px=args.size)
            rgb = composite(
                service.render(scene, root, identity, cfg), background_rgb(config.background)
            )
            img = Image.fromarray(rgb, "RGB").resize((tile, tile), Image.Resampling.LANCZOS)
            if args.axes:
                from harness.render.axes_overlay import draw_axes

                draw_axes(img, scene, cfg)
            x = head + c * tile
            sheet.paste(img, (x, y + label))
            draw.text((x + 3, y + 1), f"{level}", fill=(255, 255, 255))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.out)
    print(f"{args.out}: {scene.id}, {sum(len(v) for _, v in rows)} tiles, {service.rendered} rendered")
    return 0


def _scene_set_sheet(args: argparse.Namespace, profile) -> int:
    """Every scene of the set at ``--scenes`` at c0: rows = generators, columns = prompt ids."""
    from PIL import Image, ImageDraw

    from harness.protocol.configurations import RenderConfig, background_rgb
    from harness.render.composite import composite
    from harness.render.service import RenderService
    from harness.scenes.sceneset import SceneSet

    sset = SceneSet.load(args.scenes, verify=True)
    service = RenderService((args.cache_dir or default_cache_dir()) / "renders")

    def c0_of(kind: str) -> tuple[RenderConfig, str]:
        """c0 of a scene kind: each scene is shown as its audit would see it."""
        config = profile.for_scene_kind(kind).configuration("baseline", "c0")
        cfg = config.render
        if args.samples is not None:
            cfg = replace(cfg, samples=args.samples)
        if args.size is not None:
            cfg = replace(cfg, resolution_px=args.size)
        return cfg, config.background

    gens, prompts = list(sset.generators), list(sset.prompt_ids)
    by_cell = {(s.generator, s.prompt_id): s for s in sset.scenes}
    tile, label = args.tile, LABEL_PX
    sheet = Image.new("RGB", (len(prompts) * tile, len(gens) * (tile + label)), (40, 40, 40))
    draw = ImageDraw.Draw(sheet)
    for r, gen in enumerate(gens):
        for c, pid in enumerate(prompts):
            x, y = c * tile, r * (tile + label)
            draw.text((x + 3, y + 1), f"{gen}/{pid}", fill=(255, 255, 255))
            scene = by_cell.get((gen, pid))
            if scene is None:
                continue
            cfg, background = c0_of(scene.kind)
            rgb = composite(
                service.render(scene, sset.root, sset.identity(scene.id), cfg),
                background_rgb(background),
            )
            img = Image.fromarray(rgb, "RGB").resize((tile, tile), Image.Resampling.LANCZOS)
            if args.axes:
                from harness.render.axes_overlay import draw_axes

                draw_axes(img, scene, cfg)
            sheet.paste(img, (x, y + label))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.out)
    print(
        f"{args.out}: {len(by_cell)} scenes ({len(gens)} generators x {len(prompts)} prompts) "
        f"at c0, {service.rendered} rendered"
    )
    return 0


def _orientation_sheets(args: argparse.Namespace, profile) -> int:
    """``--scenes DIR --orientations``: one orientation sheet per imported object scene of the
    set, written next to ``--out`` as ``<stem>-<generator>-<prompt_id><suffix>``."""
    from harness.scenes.sceneset import SceneSet

    sset = SceneSet.load(args.scenes, verify=True)
    shown = [s for s in sset.scenes if s.kind == "object" and {"up", "front"} <= set(s.source or {})]
    if not shown:
        from harness.core.errors import SceneError

        raise SceneError("no imported object scene in the set to orient", path=args.scenes,
                         hint="--orientations shows scenes written by import-scene/import-scenes")
    out = args.out
    for scene in sorted(shown, key=lambda s: (s.generator, s.prompt_id)):
        _orientation_sheet(args, profile, scene, sset.root,
                           out.with_name(f"{out.stem}-{scene.generator}-{scene.prompt_id}{out.suffix}"))
    if len(shown) < len(sset.scenes):
        print(f"{len(sset.scenes) - len(shown)} scene(s) without import conventions not shown")
    print("pick the upright tile facing you in each sheet and import with its --up/--front "
          "(a 'files' entry of import-scenes --conventions per file)")
    return 0


def _orientation_sheet(args: argparse.Namespace, profile, scene, root, out) -> int:
    """The object of ``scene`` in every candidate (up, front), rows = up, columns = front,
    written to ``out``."""
    from PIL import Image, ImageDraw

    from harness.protocol.configurations import background_rgb
    from harness.render.axes_overlay import draw_axes
    from harness.render.composite import composite
    from harness.render.service import RenderService
    from harness.scenes.importers.orientations import (
        candidates,
        imported_conventions,
        oriented_scene,
    )
    from harness.scenes.model import scene_identity

    current = imported_conventions(scene)
    config = profile.for_scene_kind(scene.kind).configuration("baseline", "c0")
    cfg = replace(config.render, resolution_px=args.size or args.tile)
    if args.samples is not None:
        cfg = replace(cfg, samples=args.samples)
    service = RenderService((args.cache_dir or default_cache_dir()) / "renders")
    pairs = candidates()
    cols = 4
    tile, label, head = args.tile, LABEL_PX, 60
    rows = len(pairs) // cols
    sheet = Image.new("RGB", (head + cols * tile, rows * (tile + label)), (40, 40, 40))
    draw = ImageDraw.Draw(sheet)
    for k, (up, front) in enumerate(pairs):
        r, c = divmod(k, cols)
        x, y = head + c * tile, r * (tile + label)
        if c == 0:
            draw.text((4, y + tile // 2), f"up {up}", fill=(255, 255, 255))
        shown = oriented_scene(scene, up, front)
        rgb = composite(service.render(shown, root, scene_identity(shown, root), cfg),
                        background_rgb(config.background))
        img = Image.fromarray(rgb, "RGB").resize((tile, tile), Image.Resampling.LANCZOS)
        draw_axes(img, shown, cfg)
        sheet.paste(img, (x, y + label))
        draw.text((x + 3, y + 1), f"up {up}, front {front}", fill=(255, 255, 255))
        if (up, front) == current:
            draw.rectangle([x, y, x + tile - 1, y + label + tile - 1], outline=(255, 210, 0), width=2)
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out)
    print(f"{out}: {scene.id} in {len(pairs)} orientations (imported as up {current[0]}, "
          f"front {current[1]}: outlined), {service.rendered} rendered")
    if args.scenes is None:
        print("pick the upright tile facing you and import with its --up/--front "
              "(or a 'files' entry of import-scenes --conventions)")
    return 0
