"""Quality checks of the trained reference models on the frozen audit set.

:func:`frozen_probe_check` renders the first ``prompts`` prompts' scenes (all generators) at a
profile's c0 — through the audit's own render cache, so the main job reuses the renders — and
the probe-edited copies, scores both against the default caption, and reports the directional
discrimination (drop 1, exact tie 0.5, rise 0). The issue's bar for ``biggest_only`` is 70 %.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec


def frozen_probe_check(
    specs: list[EvaluatorSpec],
    *,
    probe: str = "biggest_only",
    prompts: int = 10,
    profile: str = "default",
    probe_seed: int = 0,
    log: Callable[[str], None] = print,
) -> dict[str, dict[str, Any]]:
    """evaluator id → {discrimination, drops, ties, rises, pairs, failed} on the frozen set."""
    from harness import probe_edits
    from harness.captions import DEFAULT_TEMPLATE_ID, realize
    from harness.errors import RenderError
    from harness.paths import BUNDLED_SCENES, default_cache_dir
    from harness.protocol import background_rgb, get_profile
    from harness.render.composite import composite
    from harness.render.service import RenderService
    from harness.scenes.model import scene_identity
    from harness.scenes.sceneset import SceneSet

    prof = get_profile(profile)
    scene_set = SceneSet.load(BUNDLED_SCENES, verify=True).select(prompts=prompts)
    renderer = RenderService(default_cache_dir() / "renders")
    white = background_rgb("255")
    root = scene_set.root
    images_intact, images_probe, captions = [], [], []
    failed = 0
    for i, scene in enumerate(sorted(scene_set, key=lambda s: (s.generator, s.prompt_id))):
        try:
            edited = probe_edits.apply(scene, probe, seed=probe_seed)
            a = renderer.render(scene, root, scene_set.identity(scene.id), prof.c0)
            b = renderer.render(edited, root, scene_identity(edited, root), prof.c0)
        except RenderError:  # a failed render is counted, never scored
            failed += 1
            continue
        images_intact.append(composite(a, white))
        images_probe.append(composite(b, white))
        captions.append(realize(DEFAULT_TEMPLATE_ID, scene.prompt))
        if (i + 1) % 12 == 0:
            log(f"frozen check: rendered {i + 1} scenes")
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        ev = spec.build(device="cpu")
        try:
            sa = [r.score for r in ev.score(images_intact, captions)]
            sb = [r.score for r in ev.score(images_probe, captions)]
        finally:
            ev.close()
        drops = sum(b < a for a, b in zip(sa, sb, strict=True))
        ties = sum(b == a for a, b in zip(sa, sb, strict=True))
        n = len(sa)
        out[spec.id] = {
            "probe": probe,
            "profile_c0": prof.c0.to_dict(),
            "caption_template": DEFAULT_TEMPLATE_ID,
            "prompts": prompts,
            "pairs": n,
            "drops": drops,
            "ties": ties,
            "rises": n - drops - ties,
            "failed": failed,
            "discrimination": round((drops + 0.5 * ties) / n, 4) if n else None,
        }
        log(f"{spec.id}: {probe} discrimination {out[spec.id]['discrimination']} over {n} pairs")
    return out
