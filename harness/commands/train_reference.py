"""``t3d-audit train-reference``: rebuild the bundled reference evaluators.

Renders the training sets into ``--data`` (default: one ``training_data/<recipe key>/`` per
recipe of ``BUNDLED_RECIPES``, ignored by git) unless they are already there, then trains the
chosen models one after another on all of them together and writes ``<id>.safetensors`` and
``<id>.card.json`` into ``--out`` (default ``fixtures/evaluators``). With the defaults this
reproduces the bundled weights (each model ≤ 25 minutes of training on one thread).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.errors import EvaluatorError
from harness.fileio import write_json_atomic
from harness.paths import REPO_ROOT


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.evaluators.reference.models import RECIPES

    parser.add_argument("--model", action="append", choices=sorted(RECIPES),
                        help="model to train (repeatable; default: all three)")
    parser.add_argument("--data", type=Path, action="append", default=None,
                        help="training-set directory (built there first if it has no data.npz); "
                             "repeat to train on several sets together")
    parser.add_argument("--seed", type=int, default=None, help="data recipe seed")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "fixtures" / "evaluators",
                        help="where weights and training cards go")
    parser.add_argument("--scenes", type=int, default=None, help="training scenes to render")
    parser.add_argument("--views", type=int, default=None, help="renders per training scene")
    parser.add_argument("--steps", type=int, default=None, help="override the training steps")
    parser.add_argument("--data-only", action="store_true", help="build the data set and stop")
    parser.add_argument("--max-minutes", type=float, default=None,
                        help="stop each model's training after this many minutes")
    parser.add_argument("--frozen-check", action="store_true",
                        help="after training, measure biggest-only discrimination on the frozen "
                             "set (renders through the audit cache) and add it to the cards")
    parser.add_argument("--check-only", action="store_true",
                        help="skip data and training; only run --frozen-check on existing weights")
    parser.add_argument("--check-prompts", type=int, default=10,
                        help="prompts of the frozen set used by --frozen-check")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from harness.evaluators.reference.models import RECIPES
    from harness.training.data import (
        BUNDLED_RECIPES,
        DataRecipe,
        build_dataset,
        concat_datasets,
        load_dataset,
    )
    from harness.training.train import train

    models = args.model or list(RECIPES)
    if args.check_only:
        _frozen_check(models, args.out, args.check_prompts)
        return 0
    custom = any(v is not None for v in (args.scenes, args.views, args.seed))
    recipes = [DataRecipe()] if custom else list(BUNDLED_RECIPES)
    if args.scenes is not None:
        recipes = [replace(recipes[0], n_scenes=args.scenes)]
    if args.views is not None:
        recipes = [replace(recipes[0], views=args.views)]
    if args.seed is not None:
        recipes = [replace(recipes[0], seed=args.seed)]
    if min(recipes[0].n_scenes, recipes[0].views) < 1:
        raise EvaluatorError("--scenes and --views must be at least 1")
    if args.data:  # the i-th directory is built (if empty) with the i-th recipe, else the first
        jobs = [(recipes[i] if i < len(recipes) else recipes[0], d) for i, d in enumerate(args.data)]
    else:
        jobs = [(r, REPO_ROOT / "training_data" / r.key) for r in recipes]
    data_dirs = [d for _, d in jobs]
    for recipe, data_dir in jobs:
        if not (Path(data_dir) / "data.npz").is_file():
            print(f"building the training set in {data_dir} ({recipe.n_scenes} scenes x {recipe.views} views)")
            build_dataset(recipe, data_dir)
    if args.data_only:
        return 0
    data = concat_datasets([load_dataset(d) for d in data_dirs])
    for model_id in models:
        model_recipe = RECIPES[model_id]
        if args.max_minutes is not None:
            model_recipe = replace(model_recipe, max_minutes=args.max_minutes)
        train(model_recipe, data, args.out, steps=args.steps)
    if args.frozen_check:
        _frozen_check(models, args.out, args.check_prompts)
    return 0


def _frozen_check(models: list[str], out: Path, prompts: int) -> None:
    """Run the frozen-set biggest-only check and record it in each model's training card."""
    import json

    from harness.evaluators.builders import SIGLIP_SCALE, openclip_local_spec
    from harness.evaluators.reference.models import CONFIG_DIR, RECIPES
    from harness.training.checks import frozen_probe_check

    specs = []
    for model_id in models:
        weights = Path(out) / f"{model_id}.safetensors"
        if not weights.is_file():
            raise EvaluatorError(f"no weights for {model_id}", where=weights,
                                 hint="train it first: t3d-audit train-reference --model " + model_id)
        recipe = RECIPES[model_id]
        kw = {"score_scale": SIGLIP_SCALE} if recipe.loss == "siglip" else {}
        specs.append(openclip_local_spec(model_id, CONFIG_DIR / f"{recipe.model_name}.json",
                                         weights, **kw))
    results = frozen_probe_check(specs, prompts=prompts)
    for model_id, result in results.items():
        card_path = Path(out) / f"{model_id}.card.json"
        card = json.loads(card_path.read_text(encoding="utf-8"))
        card["frozen_set_check"] = result
        write_json_atomic(card_path, card, indent=1, ensure_ascii=True)
