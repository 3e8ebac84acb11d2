"""Training runs of the bundled reference evaluators: weights plus a training card.

:func:`train` hands a loaded training set to the optimisation loop
(:func:`harness.evaluators.reference.fit.fit`, the torch side), checks the weights' size
budget, measures held-out retrieval and writes the card. Outputs in ``out_dir``
(``fixtures/evaluators/`` for the bundled ones):

- ``<id>.safetensors``: the state dict in float16 (≤ 10 MB), loadable with
  ``open_clip.create_model_and_transforms(<model name>, pretrained=<path>)``;
- ``<id>.card.json``: the training card (data recipe, seed, steps, wall time, final loss,
  held-out caption→image top-1 among 10 candidate scenes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.core.errors import EvaluatorError
from harness.core.fileio import write_json_atomic
from harness.core.hashing import sha256_file
from harness.evaluators.reference import fit as fitting
from harness.evaluators.reference.models import ModelRecipe, config_path
from harness.training.data import TrainingSet

MAX_WEIGHTS_BYTES = 10 * 1024 * 1024
CARD_SCHEMA = "t3d-reference-card/1"


@dataclass
class TrainResult:
    """What a run produced; ``card`` is written next to the weights."""

    weights: Path
    card_path: Path
    card: dict[str, object] = field(default_factory=dict)


def train(
    recipe: ModelRecipe,
    data: TrainingSet,
    out_dir: str | Path,
    *,
    steps: int | None = None,
    init: Path | None = None,
    log: Callable[[str], None] = print,
) -> TrainResult:
    """Train ``recipe`` on ``data``'s training scenes; write weights and the training card.

    ``init``: weights to fine-tune from (a recipe with ``init_sha256`` needs them)."""
    if recipe.init_sha256 is not None and init is None:
        raise EvaluatorError(
            f"{recipe.id} is fine-tuned from weights with sha256 {recipe.init_sha256[:12]}…",
            where=f"recipe {recipe.id}",
            hint="pass --init DIR with DIR/<id>.safetensors: the previous bundled weights, "
                 "git show 32c745a:fixtures/evaluators/<id>.safetensors > DIR/<id>.safetensors",
        )
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    weights = out_dir / f"{recipe.id}.safetensors"
    arrays = {"images": data.images, "scene": data.scene, "heldout": data.heldout,
              "captions": data.captions}  # fmt: skip
    hard = None
    if data.group is not None and data.group_captions:
        hard = fitting.HardNegatives(data.group, data.companion, data.contents, data.group_captions)
    run = fitting.fit(recipe, weights, rgba=data.rgba, hard=hard, init=init, steps=steps, log=log, **arrays)
    if weights.stat().st_size > MAX_WEIGHTS_BYTES:
        raise EvaluatorError(f"{weights.name} is {weights.stat().st_size} bytes, over the 10 MB budget",
                             where=weights, hint="shrink the model config")  # fmt: skip
    if hard is not None:  # one query per held-out group (its first row), not its own variants
        first = np.zeros(len(data.group), dtype=bool)
        first[np.unique(data.group, return_index=True)[1]] = True
        arrays["heldout"] = data.heldout & ((data.group < 0) | first)
    top1 = fitting.heldout_top1(recipe.model_name, weights, seed=recipe.seed, **arrays)
    losses = run.losses
    card = {
        "schema": CARD_SCHEMA,
        "id": recipe.id,
        "model_name": recipe.model_name,
        "model_config": f"harness/evaluators/reference/configs/{recipe.model_name}.json",
        "model_config_sha256": sha256_file(config_path(recipe.model_name)),
        "weights": weights.name,
        "weights_sha256": sha256_file(weights),
        "weights_bytes": weights.stat().st_size,
        "weights_dtype": "float16",
        "parameters": run.parameters,
        "loss": fitting.LOSS_CLASSES[recipe.loss],
        "recipe": recipe.to_dict(),
        "init_weights_sha256": recipe.init_sha256 if init is not None else None,
        "data_recipe": data.recipe,
        "seed": recipe.seed,
        "steps": run.steps,
        "steps_planned": run.steps_planned,
        "stopped_early_by_time": run.stopped_early_by_time,
        "batch_size": run.batch_size,
        "train_images": run.train_images,
        "augmented": run.augmented,
        "train_scenes": run.train_scenes,
        "wall_time_s": round(run.wall_time_s, 1),
        "threads": recipe.threads,
        "final_loss": round(float(np.mean(losses[-50:])), 4) if losses else None,
        "first_loss": round(losses[0], 4) if losses else None,
        "hard_negative_groups": run.hard_groups,
        "final_hard_loss": round(float(np.mean(run.hard_losses[-50:])), 4) if run.hard_losses else None,
        "losses_every_50": [round(float(np.mean(losses[i : i + 50])), 4) for i in range(0, len(losses), 50)],
        "heldout_retrieval": top1,
        **run.versions,
    }
    card_path = out_dir / f"{recipe.id}.card.json"
    write_json_atomic(card_path, card, indent=1, ensure_ascii=True)
    log(f"{recipe.id}: {run.steps} steps in {run.wall_time_s:.0f}s, final loss {card['final_loss']}, "
        f"held-out top-1 {top1['top1']} (chance {top1['chance']:.2f})")  # fmt: skip
    return TrainResult(weights, card_path, card)
