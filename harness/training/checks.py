"""Quality checks of the trained reference models on the frozen audit set.

:func:`frozen_probe_check` renders the first ``prompts`` prompts' scenes (all generators) at a
profile's c0 — through the audit's own render cache, so the main job reuses the renders — and
the probe-edited copies, scores both against the default caption, and reports the directional
discrimination (drop 1, exact tie 0.5, rise 0). The bar for ``biggest_only`` is 70 %.

:func:`frozen_agreement_check` renders every frozen scene at c0 the same way and compares each
model's scores with the symbolic companion's (:mod:`harness.stats.companion_agreement`): the
share of within-prompt generator pairs the companion orders that the model orders the same way
(model ties count half; bar 75 %), Kendall τ-b of the generator means, the generator-mean
winner, and the share of prompts whose unique top-scoring generator is ``faithful`` (bar: a
majority). :data:`BARS` holds the bars; :func:`failed_bars` lists a model's misses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.vocab.probes import BIGGEST_ONLY

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec


def frozen_probe_check(
    specs: list[EvaluatorSpec],
    *,
    probe: str = BIGGEST_ONLY,
    prompts: int = 10,
    profile: str = "default",
    probe_seed: int = 0,
    log: Callable[[str], None] = print,
) -> dict[str, dict[str, object]]:
    """evaluator id → {discrimination, drops, ties, rises, pairs, failed} on the frozen set."""
    from harness.captions import DEFAULT_TEMPLATE_ID, realize
    from harness.core.errors import RenderError
    from harness.core.paths import BUNDLED_SCENES, default_cache_dir
    from harness.protocol.configurations import background_rgb
    from harness.protocol.profiles import get_profile
    from harness.render.composite import composite
    from harness.render.service import RenderService
    from harness.scenes import probe_edits
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
    out: dict[str, dict[str, object]] = {}
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


#: Quality bars of the bundled reference models (checked by ``t3d-audit train-reference
#: --check-only``): key → (minimum, strict). ``faithful_winner_share`` must be a majority.
BARS: dict[str, tuple[float, bool]] = {
    "pair_agreement": (0.75, False),
    "faithful_winner_share": (0.5, True),
    "heldout_top1": (0.5, False),
    BIGGEST_ONLY: (0.7, False),
}


def failed_bars(values: dict[str, float | None]) -> list[str]:
    """The :data:`BARS` that ``values`` (bar key → measured value) misses, as readable lines.

    A missing or undefined value fails its bar (a failure is never a pass by omission)."""
    out = []
    for key, (bar, strict) in BARS.items():
        v = values.get(key)
        ok = v is not None and v == v and (v > bar if strict else v >= bar)
        if not ok:
            out.append(f"{key} {v} {'<=' if strict else '<'} {bar}")
    return out


def frozen_agreement_check(
    specs: list[EvaluatorSpec],
    *,
    prompts: int | None = None,
    profile: str = "default",
    log: Callable[[str], None] = print,
) -> dict[str, dict[str, object]]:
    """evaluator id → its c0 agreement with the symbolic companion on the frozen set.

    Every scene of the first ``prompts`` prompts (all if ``None``), all generators, is rendered
    at the profile's c0 (through the audit render cache), composited on white and scored
    against the default caption. Returns ``{pair_agreement, n_pairs, ranking_tau, winner,
    companion_winner, faithful_winner_share, prompts, generators, failed, per_pair}`` per
    model, ``per_pair`` mapping "<generator> vs <generator>" to the model's agreement on that
    generator pair alone (and the number of prompts where the companion orders it).
    """
    import numpy as np

    from harness.captions import DEFAULT_TEMPLATE_ID, realize
    from harness.core.errors import RenderError
    from harness.core.paths import BUNDLED_SCENES, default_cache_dir
    from harness.evaluators.reference.companion import as_companion_spec, companion_breakdown
    from harness.protocol.configurations import background_rgb
    from harness.protocol.profiles import get_profile
    from harness.render.composite import composite
    from harness.render.service import RenderService
    from harness.scenes.prompts import load_prompts
    from harness.scenes.sceneset import SceneSet
    from harness.stats.companion_agreement import kendall_tau_b, order_agreement, top_generator
    from harness.stats.envelopes import generator_pairs

    prof = get_profile(profile)
    scene_set = SceneSet.load(BUNDLED_SCENES, verify=True).select(prompts=prompts)
    spec_of = {p.id: p for p in load_prompts()}
    gens, pids = tuple(scene_set.generators), tuple(scene_set.prompt_ids)
    renderer = RenderService(default_cache_dir() / "renders")
    white = background_rgb("255")
    truth = np.full((len(gens), len(pids)), np.nan)
    cells, images, captions = [], [], []
    failed = 0
    for i, scene in enumerate(sorted(scene_set, key=lambda s: (s.generator, s.prompt_id))):
        g, p = gens.index(scene.generator), pids.index(scene.prompt_id)
        truth[g, p] = companion_breakdown(scene, as_companion_spec(spec_of[scene.prompt_id])).score
        try:
            rgba = renderer.render(scene, scene_set.root, scene_set.identity(scene.id), prof.c0)
        except RenderError:  # a failed render is counted, never scored
            failed += 1
            continue
        cells.append((g, p))
        images.append(composite(rgba, white))
        captions.append(realize(DEFAULT_TEMPLATE_ID, scene.prompt))
        if (i + 1) % 25 == 0:
            log(f"agreement check: rendered {i + 1}/{len(scene_set)} scenes")
    out: dict[str, dict[str, object]] = {}
    for spec in specs:
        ev = spec.build(device="cpu")
        try:
            scores = [r.score for r in ev.score(images, captions)]
        finally:
            ev.close()
        table = np.full_like(truth, np.nan)
        for (g, p), s in zip(cells, scores, strict=True):
            table[g, p] = s
        pair, n_pairs = order_agreement(table, truth)
        per_pair = {}
        for m, n in generator_pairs(len(gens)):
            credit, k = order_agreement(table[[m, n]], truth[[m, n]])
            per_pair[f"{gens[m]} vs {gens[n]}"] = {"agreement": round(credit, 4), "pairs": k}
        top = [top_generator(table[:, j], gens) for j in range(len(pids))]
        share = sum(w == "faithful" for w in top) / len(pids) if pids else float("nan")
        out[spec.id] = {
            "profile_c0": prof.c0.to_dict(),
            "caption_template": DEFAULT_TEMPLATE_ID,
            "prompts": len(pids),
            "generators": list(gens),
            "failed": failed,
            "pair_agreement": round(pair, 4),
            "n_pairs": n_pairs,
            "ranking_tau": round(kendall_tau_b(np.nanmean(table, 1), np.nanmean(truth, 1)), 4),
            "winner": top_generator(np.nanmean(table, 1), gens),
            "companion_winner": top_generator(np.nanmean(truth, 1), gens),
            "faithful_winner_share": round(share, 4),
            "per_pair": per_pair,
        }
        r = out[spec.id]
        log(f"{spec.id}: pair agreement {r['pair_agreement']} over {n_pairs} pairs, tau-b {r['ranking_tau']}, "
            f"winner {r['winner']} (companion {r['companion_winner']}), faithful wins "
            f"{r['faithful_winner_share']} of prompts")  # fmt: skip
    return out


def heldout_retrieval_check(
    models: list[tuple[str, str, object]],
    *,
    log: Callable[[str], None] = print,
) -> dict[str, dict[str, object]]:
    """evaluator id → caption→image top-1 among 10 on a fresh held-out training-style set.

    ``models``: (id, open_clip model name, weights path). The set is
    :data:`harness.training.data.RETRIEVAL_CHECK_RECIPE` (scenes from the held-out pool
    prompts, never trained on, never the frozen audit prompts), built once into the audit
    cache (``<cache>/reference-check/<recipe key>``) and reused.
    """
    from harness.core.paths import default_cache_dir
    from harness.evaluators.reference.fit import heldout_top1
    from harness.training.data import RETRIEVAL_CHECK_RECIPE, build_dataset, load_dataset

    data_dir = default_cache_dir() / "reference-check" / RETRIEVAL_CHECK_RECIPE.key
    if not (data_dir / "data.npz").is_file():
        log(f"building the retrieval check set in {data_dir}")
        build_dataset(RETRIEVAL_CHECK_RECIPE, data_dir, log=log)
    data = load_dataset(data_dir)
    out = {}
    for model_id, model_name, weights in models:
        out[model_id] = {
            **heldout_top1(model_name, weights, images=data.images, scene=data.scene,
                           heldout=data.heldout, captions=data.captions),
            "data_recipe": RETRIEVAL_CHECK_RECIPE.key,
        }  # fmt: skip
        log(f"{model_id}: held-out caption->image top-1 {out[model_id]['top1']}")
    return out
