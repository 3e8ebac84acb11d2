"""``t3d-audit train-reference``: rebuild the bundled reference evaluators.

Renders the training sets into ``--data`` (default: one ``training_data/<recipe key>/`` per
recipe of :data:`harness.training.negatives.BUNDLED_TRAINING`, the hard-negative groups,
ignored by git) unless they are already there, ``--build-jobs`` sets at once (default: one per
core, :mod:`harness.training.build_sets`), then trains the chosen models one after another
on all of them together and writes ``<id>.safetensors`` and ``<id>.card.json`` into ``--out``
(default ``fixtures/evaluators``). With the defaults and ``--init DIR`` holding the
generation-1 weights this reproduces the bundled (generation-2) weights: a fine-tune of at most
25 minutes per model on one thread. ``--scenes``/``--views``/``--seed`` train on a plain
(group-free) :class:`harness.training.data.DataRecipe` set instead.

``--check-only`` (or ``--frozen-check`` after training) measures the quality bars of the
weights in ``--out`` on the frozen set and a fresh held-out set, records them on the cards and
exits 1 when a model misses one.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from harness.core.errors import EvaluatorError
from harness.core.fileio import write_json_atomic
from harness.core.paths import REPO_ROOT
from harness.run import argtypes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.evaluators.reference.models import RECIPES

    parser.add_argument("--model", action="append", choices=sorted(RECIPES),
                        help="model to train (repeatable; default: all three)")
    parser.add_argument("--data", type=argtypes.output_dir, action="append", default=None,
                        help="training-set directory (built there first if it has no data.npz); "
                             "repeat to train on several sets together")
    parser.add_argument("--seed", type=argtypes.seed, default=None, help="data recipe seed")
    parser.add_argument("--out", type=argtypes.output_dir, default=REPO_ROOT / "fixtures" / "evaluators",
                        help="where weights and training cards go")
    parser.add_argument("--scenes", type=argtypes.positive_int, default=None,
                        help="train on a plain (group-free) set of this many scenes instead")
    parser.add_argument("--views", type=argtypes.positive_int, default=None, help="renders per training scene")
    parser.add_argument("--steps", type=argtypes.positive_int, default=None, help="override the training steps")
    parser.add_argument("--data-only", action="store_true", help="build the data set and stop")
    parser.add_argument("--build-jobs", type=argtypes.jobs, default=None,
                        help="training sets built at once, one Blender process each (default: "
                             "one per CPU core)")
    parser.add_argument("--init", type=argtypes.input_path, default=None,
                        help="directory with <id>.safetensors to fine-tune from (the bundled recipes "
                             "start from the previous bundled weights; their sha256 is checked)")
    parser.add_argument("--max-minutes", type=argtypes.positive_float, default=None,
                        help="stop each model's training after this many minutes")
    parser.add_argument("--frozen-check", action="store_true",
                        help="after training, measure the quality bars (c0 agreement with the "
                             "companion and biggest-only discrimination on the frozen set, "
                             "renders through the audit cache; held-out retrieval), add them to "
                             "the cards and exit 1 when a bar is missed")
    parser.add_argument("--check-only", action="store_true",
                        help="skip data and training; only run --frozen-check on existing weights")
    parser.add_argument("--check-prompts", type=argtypes.positive_int, default=10,
                        help="prompts of the frozen set used by the biggest-only check")
    parser.add_argument("--agreement-prompts", type=argtypes.positive_int, default=None,
                        help="prompts of the frozen set used by the companion-agreement check "
                             "(default: all)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from harness.evaluators.reference.models import RECIPES
    from harness.training.build_sets import build_missing
    from harness.training.data import DataRecipe, concat_datasets, load_dataset
    from harness.training.negatives import BUNDLED_TRAINING
    from harness.training.train import train

    models = args.model or list(RECIPES)
    if args.init is not None:  # checked before the data is built and the models trained
        missing = [m for m in models if not (Path(args.init) / f"{m}.safetensors").is_file()]
        if missing:
            raise EvaluatorError(f"no {', '.join(f'{m}.safetensors' for m in missing)} to start from",
                                 where=f"--init {args.init}", hint="give the directory holding them")  # fmt: skip
    if args.check_only:
        return _frozen_check(models, args.out, args.check_prompts, args.agreement_prompts)
    fine_tuned = [m for m in models if RECIPES[m].init_sha256 is not None]
    if fine_tuned and args.init is None and not args.data_only:  # train() would refuse, hours later
        raise EvaluatorError(f"{', '.join(fine_tuned)} fine-tune from earlier weights",
                             where="--init", hint="pass --init DIR with DIR/<id>.safetensors")  # fmt: skip
    custom = any(v is not None for v in (args.scenes, args.views, args.seed))
    recipes: list = [DataRecipe()] if custom else list(BUNDLED_TRAINING)
    if args.scenes is not None:
        recipes = [replace(recipes[0], n_scenes=args.scenes)]
    if args.views is not None:
        recipes = [replace(recipes[0], views=args.views)]
    if args.seed is not None:
        recipes = [replace(recipes[0], seed=args.seed)]
    if custom and min(recipes[0].n_scenes, recipes[0].views) < 1:
        raise EvaluatorError("--scenes and --views must be at least 1")
    if args.data:  # the i-th directory is built (if empty) with the i-th recipe, else the first
        jobs = [(recipes[i] if i < len(recipes) else recipes[0], d) for i, d in enumerate(args.data)]
    else:
        jobs = [(r, REPO_ROOT / "training_data" / r.key) for r in recipes]
    data_dirs = [d for _, d in jobs]
    workers = args.build_jobs if args.build_jobs is not None else (os.cpu_count() or 1)
    if workers < 1:
        raise EvaluatorError("--build-jobs must be at least 1", where="--build-jobs")
    build_missing(jobs, workers)
    if args.data_only:
        return 0
    data = concat_datasets([load_dataset(d) for d in data_dirs])
    for model_id in models:
        model_recipe = RECIPES[model_id]
        if args.max_minutes is not None:
            model_recipe = replace(model_recipe, max_minutes=args.max_minutes)
        init = Path(args.init) / f"{model_id}.safetensors" if args.init is not None else None
        train(model_recipe, data, args.out, steps=args.steps, init=init)
    if args.frozen_check:
        return _frozen_check(models, args.out, args.check_prompts, args.agreement_prompts)
    return 0


def _frozen_check(models: list[str], out: Path, prompts: int, agreement_prompts: int | None = None) -> int:
    """Measure every quality bar of ``models``' weights in ``out`` and record it on their cards.

    Biggest-only discrimination on the first ``prompts`` frozen prompts, c0 agreement with the
    symbolic companion on the first ``agreement_prompts`` (all by default), held-out retrieval
    on the retrieval check set. Returns 0 when every model meets every bar
    (:data:`harness.training.checks.BARS`), else 1 (the misses are printed).
    """
    import json

    from harness.evaluators.builders import SIGLIP_SCALE, openclip_local_spec
    from harness.evaluators.reference.models import CONFIG_DIR, RECIPES
    from harness.training.checks import (
        failed_bars,
        frozen_agreement_check,
        frozen_probe_check,
        heldout_retrieval_check,
    )
    from harness.vocab.probes import BIGGEST_ONLY

    specs, named = [], []
    for model_id in models:
        weights = Path(out) / f"{model_id}.safetensors"
        if not weights.is_file():
            raise EvaluatorError(f"no weights for {model_id}", where=weights,
                                 hint="train it first: t3d-audit train-reference --model " + model_id)
        recipe = RECIPES[model_id]
        kw = {"score_scale": SIGLIP_SCALE} if recipe.loss == "siglip" else {}
        specs.append(openclip_local_spec(model_id, CONFIG_DIR / f"{recipe.model_name}.json",
                                         weights, **kw))
        named.append((model_id, recipe.model_name, weights))
    probe = frozen_probe_check(specs, probe=BIGGEST_ONLY, prompts=prompts)
    agreement = frozen_agreement_check(specs, prompts=agreement_prompts)
    retrieval = heldout_retrieval_check(named)
    misses = 0
    print(f"{'model':<14} {'agree':>6} {'tau-b':>6} {'faithful':>8} {'top-1':>6} {'biggest':>7}  winner")
    for model_id in models:
        a, r, b = agreement[model_id], retrieval[model_id], probe[model_id]
        values = {"pair_agreement": a["pair_agreement"], "faithful_winner_share": a["faithful_winner_share"],
                  "heldout_top1": r["top1"], BIGGEST_ONLY: b["discrimination"]}  # fmt: skip
        failed = failed_bars(values)
        print(f"{model_id:<14} {a['pair_agreement']:>6.3f} {a['ranking_tau']:>6.3f} "
              f"{a['faithful_winner_share']:>8.2f} {r['top1']:>6.3f} {b['discrimination']:>7.3f}  "
              f"{a['winner']} (companion {a['companion_winner']})"
              + ("" if not failed else "  FAILS: " + "; ".join(failed)))  # fmt: skip
        misses += bool(failed)
        card_path = Path(out) / f"{model_id}.card.json"
        card = json.loads(card_path.read_text(encoding="utf-8"))
        card["frozen_set_check"] = b
        card["companion_agreement_check"] = a
        card["retrieval_check"] = r
        card["quality_bars_failed"] = failed
        write_json_atomic(card_path, card, indent=1, ensure_ascii=True)
    return 1 if misses else 0
