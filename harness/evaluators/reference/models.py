"""The three bundled reference models: open_clip config, loss and optimisation recipe each.

Data only (no torch): the registry entries (:mod:`harness.evaluators.reference.specs`) read
the model name and loss; the optimisation loop (:mod:`harness.evaluators.reference.fit`) and
the training orchestration (:mod:`harness.training.train`) read the whole recipe. The open_clip
model configs are ``configs/<model name>.json`` next to this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import EvaluatorError
from harness.core.jsonout import JSONObject, strict

CONFIG_DIR = Path(__file__).with_name("configs")


@dataclass(frozen=True)
class ModelRecipe:
    """How one reference model is trained. ``max_minutes`` stops early (recorded on the card)."""

    id: str
    model_name: str
    loss: str  # "clip" | "siglip"
    steps: int = 3000
    batch_size: int = 64
    lr: float = 2e-3
    weight_decay: float = 0.05
    warmup: int = 60
    seed: int = 0
    threads: int = 1
    max_minutes: float = 28.0
    augment: bool = True  # fresh background, brightness, 90° turns and flips per sample
    patch_dropout: float = 0.0  # ViT towers only, training only
    # hard negatives (used when the training set has groups, see harness.training.negatives)
    hard_groups: int = 6  # groups per step, each with all its variants
    hard_weight: float = 1.0  # NegCLIP terms: spec caption vs its variants, image vs wrong captions
    rank_weight: float = 2.0  # pairwise logistic ranking of the variants by companion score
    top1_weight: float = 0.0  # the spec caption's softmax over its own group's variants only
    # warm start (NegCLIP fine-tunes a trained CLIP): sha256 of the float16 weights to start
    # from, or None for random init; `train-reference --init DIR` supplies DIR/<id>.safetensors
    init_sha256: str | None = None

    def to_dict(self) -> JSONObject:
        """The recipe as a JSON object (its fields in declaration order)."""
        return strict(self)


#: The hard-negative fine-tuning of the bundled models (from the previous generation's weights,
#: git 32c745a fixtures/evaluators/<id>.safetensors): lower peak rate, short warm-up, 25 minutes.
FINE_TUNE: dict[str, object] = {"lr": 1e-3, "warmup": 30, "steps": 3000, "batch_size": 48, "max_minutes": 25.0,
                             "rank_weight": 8.0, "hard_groups": 10}

RECIPES: dict[str, ModelRecipe] = {
    r.id: r
    for r in (
        ModelRecipe("ref-vit-clip", "t3d-ref-vit-clip", "clip", seed=1, patch_dropout=0.25, **FINE_TUNE,
                    init_sha256="35620fb374b04cf2eebb84696141c9dc989d993f90eb354178f81c99b85f120e"),
        ModelRecipe("ref-rn-clip", "t3d-ref-rn-clip", "clip", seed=2, **FINE_TUNE,
                    init_sha256="1f7e4e8ec462f95e888edf4d398628a35293c14f83ded30f8248f37feb54bfe3"),
        ModelRecipe("ref-siglip", "t3d-ref-sigmoid", "siglip", seed=3, patch_dropout=0.25, **FINE_TUNE,
                    init_sha256="4a259c6d20687f5344cc04ec99e8e2e7b177382546aa9de3367a7086fc4b2b50"),
    )
}


def config_path(model_name: str) -> Path:
    """The bundled open_clip config of ``model_name`` (an :class:`EvaluatorError` if absent)."""
    path = CONFIG_DIR / f"{model_name}.json"
    if not path.is_file():
        raise EvaluatorError(f"no bundled model config {model_name!r}", where=CONFIG_DIR)
    return path
