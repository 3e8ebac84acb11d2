"""Training loop of the reference evaluators, with open_clip's own models and losses.

Each model is an open_clip config in ``configs/`` registered with ``open_clip.add_model_config``
and trained from random init with ``open_clip.loss.ClipLoss`` (softmax contrastive) or
``SigLipLoss`` (pairwise sigmoid). Batches hold distinct scenes (one random view, one random
caption each), so no batch contains a false negative of the same scene. Single-threaded by
default: the machine is shared.

Outputs in ``out_dir`` (``fixtures/evaluators/`` for the bundled ones):

- ``<id>.safetensors``: the state dict in float16 (≤ 10 MB), loadable with
  ``open_clip.create_model_and_transforms(<model name>, pretrained=<path>)``;
- ``<id>.card.json``: the training card (data recipe, seed, steps, wall time, final loss,
  held-out caption→image top-1 among 10 candidate scenes).
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import EvaluatorError
from harness.evaluators.reference.data import TrainingSet
from harness.hashing import sha256_file

CONFIG_DIR = Path(__file__).with_name("configs")
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)
MAX_WEIGHTS_BYTES = 10 * 1024 * 1024
RETRIEVAL_CANDIDATES = 10


@dataclass(frozen=True)
class ModelRecipe:
    """How one reference model is trained. ``max_minutes`` stops early (recorded on the card)."""

    id: str
    model_name: str
    loss: str  # "clip" | "siglip"
    steps: int = 2500
    batch_size: int = 64
    lr: float = 2e-3
    weight_decay: float = 0.05
    warmup: int = 60
    seed: int = 0
    threads: int = 1
    max_minutes: float = 20.0
    augment: bool = True  # fresh background, brightness, 90° turns and flips per sample
    patch_dropout: float = 0.0  # ViT towers only, training only

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


RECIPES: dict[str, ModelRecipe] = {
    r.id: r
    for r in (
        ModelRecipe("ref-vit-clip", "t3d-ref-vit-clip", "clip", seed=1, patch_dropout=0.25),
        ModelRecipe("ref-rn-clip", "t3d-ref-rn-clip", "clip", seed=2, steps=4000, max_minutes=25.0),
        ModelRecipe("ref-siglip", "t3d-ref-sigmoid", "siglip", seed=3, patch_dropout=0.25),
    )
}


def register_configs() -> None:
    """Make the bundled model configs known to open_clip (idempotent)."""
    import open_clip

    known = set(open_clip.list_models())
    for path in sorted(CONFIG_DIR.glob("*.json")):
        if path.stem not in known:
            open_clip.add_model_config(path)


def config_path(model_name: str) -> Path:
    path = CONFIG_DIR / f"{model_name}.json"
    if not path.is_file():
        raise EvaluatorError(f"no bundled model config {model_name!r}", where=CONFIG_DIR)
    return path


def _image_size(model: Any) -> int:
    size = model.visual.image_size
    return int(size[0] if isinstance(size, (tuple, list)) else size)


def prepare_images(images: np.ndarray, size: int) -> Any:
    """(N, S, S, 3) uint8 → (N, 3, size, size) float32 tensor, normalised as at evaluation
    (bicubic resize like the open_clip transform, OpenAI mean/std)."""
    import torch

    from harness.evaluators.reference.data import resize

    if images.shape[1] != size:
        images = np.stack([resize(im, size) for im in images])
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float().div_(255.0)
    mean = torch.tensor(OPENAI_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(OPENAI_STD).view(1, 3, 1, 1)
    return (x - mean) / std


def prepare_rgba(rgba: np.ndarray, size: int) -> Any:
    """(N, S, S, 4) uint8 → (N, 4, size, size) float32 tensor in [0, 1] (straight alpha)."""
    import torch

    from harness.evaluators.reference.data import resize

    if rgba.shape[1] != size:
        rgba = np.stack([resize(im, size) for im in rgba])
    return torch.from_numpy(rgba).permute(0, 3, 1, 2).float().div_(255.0)


def augment_batch(rgba: Any, generator: Any) -> Any:
    """Composite a fresh background under each render and apply content-preserving changes.

    ``rgba`` (B, 4, S, S) in [0, 1] → normalised (B, 3, S, S). Per sample: brightness ×U(0.8,
    1.2); background a random gray (half) or a random colour; a random multiple of 90° turn and
    horizontal flip (captions name objects, not sides). Draws from the torch ``generator``.
    """
    import torch

    b = rgba.shape[0]
    rgb, alpha = rgba[:, :3], rgba[:, 3:]
    bright = torch.empty(b, 1, 1, 1).uniform_(0.8, 1.2, generator=generator)
    rgb = (rgb * bright).clamp_(0.0, 1.0)
    bg = torch.rand(b, 3, 1, 1, generator=generator)
    gray = torch.rand(b, 1, 1, 1, generator=generator) < 0.5
    bg = torch.where(gray, bg[:, :1].expand(b, 3, 1, 1), bg)
    x = rgb * alpha + bg * (1.0 - alpha)
    turns = torch.randint(0, 4, (b,), generator=generator)
    flips = torch.rand(b, generator=generator) < 0.5
    out = torch.empty_like(x)
    for i in range(b):
        xi = torch.rot90(x[i], int(turns[i]), dims=(1, 2))
        out[i] = xi.flip(-1) if flips[i] else xi
    mean = torch.tensor(OPENAI_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(OPENAI_STD).view(1, 3, 1, 1)
    return (out - mean) / std


@dataclass
class TrainResult:
    """What a run produced; ``card`` is written next to the weights."""

    weights: Path
    card_path: Path
    card: dict[str, Any] = field(default_factory=dict)


def _lr_at(step: int, recipe: ModelRecipe, total: int, time_fraction: float = 0.0) -> float:
    """Linear warm-up, then cosine decay to 0. Progress is the larger of the step fraction and
    ``time_fraction`` (elapsed / ``max_minutes``), so a run stopped by the clock still ends
    annealed."""
    if step < recipe.warmup:
        return recipe.lr * (step + 1) / recipe.warmup
    progress = max((step - recipe.warmup) / max(1, total - recipe.warmup), time_fraction)
    return recipe.lr * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def train(
    recipe: ModelRecipe,
    data: TrainingSet,
    out_dir: str | Path,
    *,
    steps: int | None = None,
    log: Callable[[str], None] = print,
) -> TrainResult:
    """Train ``recipe`` on ``data``'s training scenes; write weights and the training card."""
    import open_clip
    import torch
    from open_clip.loss import ClipLoss, SigLipLoss
    from safetensors.torch import save_file

    torch.set_num_threads(recipe.threads)
    torch.manual_seed(recipe.seed)
    rng = random.Random(recipe.seed)
    register_configs()
    total = steps if steps is not None else recipe.steps
    extra = {"force_patch_dropout": recipe.patch_dropout} if recipe.patch_dropout else {}
    model = open_clip.create_model(recipe.model_name, pretrained=None, **extra)
    tokenizer = open_clip.get_tokenizer(recipe.model_name)
    size = _image_size(model)
    use_rgba = recipe.augment and data.rgba is not None
    pixels = prepare_rgba(data.rgba, size) if use_rgba else prepare_images(data.images, size)
    gen = torch.Generator().manual_seed(recipe.seed)
    train_idx = np.flatnonzero(~data.heldout)
    by_scene: dict[int, list[int]] = {}
    for i in train_idx:
        by_scene.setdefault(int(data.scene[i]), []).append(int(i))
    scenes = sorted(by_scene)
    if len(scenes) < 2:
        raise EvaluatorError("a training set needs at least two training scenes")
    batch = min(recipe.batch_size, len(scenes))
    loss_fn = SigLipLoss() if recipe.loss == "siglip" else ClipLoss()
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embedding" not in n]
    rest = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embedding" not in n)]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": recipe.weight_decay}, {"params": rest, "weight_decay": 0.0}],
        lr=recipe.lr,
        betas=(0.9, 0.98),
        eps=1e-6,
    )
    model.train()
    t0 = time.time()
    losses: list[float] = []
    done = 0
    stopped_early = False
    for step in range(total):
        if (time.time() - t0) / 60.0 > recipe.max_minutes:
            stopped_early = True
            break
        for group in opt.param_groups:
            group["lr"] = _lr_at(step, recipe, total, (time.time() - t0) / 60.0 / recipe.max_minutes)
        chosen = rng.sample(scenes, batch)
        idx = [rng.choice(by_scene[s]) for s in chosen]
        images = augment_batch(pixels[idx], gen) if use_rgba else pixels[idx]
        texts = tokenizer([rng.choice(data.captions[i]) for i in idx])
        out = model(images, texts)
        loss = loss_fn(*out)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():  # keep the temperature in open_clip's usual range
            model.logit_scale.clamp_(0, math.log(100))
        losses.append(float(loss.item()))
        done = step + 1
        if done % 50 == 0 or done == total:
            log(f"{recipe.id}: step {done}/{total} loss {np.mean(losses[-50:]):.4f} "
                f"({time.time() - t0:.0f}s)")  # fmt: skip
    wall = time.time() - t0
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    weights = out_dir / f"{recipe.id}.safetensors"
    state = {k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in model.state_dict().items()}
    tmp = weights.with_suffix(".safetensors.tmp")
    save_file(state, str(tmp), metadata={"model_name": recipe.model_name, "recipe": json.dumps(recipe.to_dict())})
    tmp.replace(weights)
    weights.chmod(0o644)  # safetensors writes owner-only files; the fixture is public
    if weights.stat().st_size > MAX_WEIGHTS_BYTES:
        raise EvaluatorError(f"{weights.name} is {weights.stat().st_size} bytes, over the 10 MB budget",
                             where=weights, hint="shrink the model config")  # fmt: skip
    top1 = heldout_top1(recipe.model_name, weights, data, seed=recipe.seed)
    card = {
        "schema": "t3d-reference-card/1",
        "id": recipe.id,
        "model_name": recipe.model_name,
        "model_config": f"harness/evaluators/reference/configs/{recipe.model_name}.json",
        "model_config_sha256": sha256_file(config_path(recipe.model_name)),
        "weights": weights.name,
        "weights_sha256": sha256_file(weights),
        "weights_bytes": weights.stat().st_size,
        "weights_dtype": "float16",
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "loss": {"clip": "open_clip.loss.ClipLoss", "siglip": "open_clip.loss.SigLipLoss"}[recipe.loss],
        "recipe": recipe.to_dict(),
        "data_recipe": data.recipe,
        "seed": recipe.seed,
        "steps": done,
        "steps_planned": total,
        "stopped_early_by_time": stopped_early,
        "batch_size": batch,
        "train_images": len(train_idx),
        "augmented": use_rgba,
        "train_scenes": len(scenes),
        "wall_time_s": round(wall, 1),
        "threads": recipe.threads,
        "final_loss": round(float(np.mean(losses[-50:])), 4) if losses else None,
        "first_loss": round(losses[0], 4) if losses else None,
        "heldout_retrieval": top1,
        "torch": torch.__version__,
        "open_clip": open_clip.__version__,
    }
    card_path = out_dir / f"{recipe.id}.card.json"
    card_path.write_text(json.dumps(card, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    log(f"{recipe.id}: {done} steps in {wall:.0f}s, final loss {card['final_loss']}, held-out "
        f"top-1 {top1['top1']:.3f} (chance {top1['chance']:.2f})")  # fmt: skip
    return TrainResult(weights, card_path, card)


def heldout_top1(
    model_name: str, weights: Path, data: TrainingSet, *, seed: int = 0, rounds: int = 5
) -> dict[str, Any]:
    """Caption→image top-1 among 10 candidate held-out scenes, with the saved weights.

    For each held-out scene: its first caption (first view's first wording) against its first
    view plus the first views of 9 other held-out scenes drawn at random; a hit when its own
    image has the highest cosine similarity (ties count as misses). Repeated ``rounds`` times
    with different distractors; the model is loaded from ``weights`` through open_clip's
    ``pretrained=`` path, exactly as the registry loads it.
    """
    import open_clip
    import torch

    register_configs()
    model, _, _ = open_clip.create_model_and_transforms(model_name, pretrained=str(weights))
    model.eval()
    tokenizer = open_clip.get_tokenizer(model_name)
    first: dict[int, int] = {}
    for i in np.flatnonzero(data.heldout):
        first.setdefault(int(data.scene[i]), int(i))
    scenes = sorted(first)
    if len(scenes) < RETRIEVAL_CANDIDATES:
        return {"top1": float("nan"), "chance": 1 / RETRIEVAL_CANDIDATES, "queries": 0,
                "note": "fewer than 10 held-out scenes"}  # fmt: skip
    idx = [first[s] for s in scenes]
    with torch.inference_mode():
        img = model.encode_image(prepare_images(data.images[idx], _image_size(model)), normalize=True)
        txt = model.encode_text(tokenizer([data.captions[i][0] for i in idx]), normalize=True)
    sim = (txt @ img.T).numpy()
    rng = random.Random(seed)
    hits = total = 0
    for _ in range(rounds):
        for q in range(len(scenes)):
            others = rng.sample([j for j in range(len(scenes)) if j != q], RETRIEVAL_CANDIDATES - 1)
            row = sim[q, [q, *others]]
            hits += int(row[0] > row[1:].max())
            total += 1
    return {"top1": round(hits / total, 4), "chance": 1 / RETRIEVAL_CANDIDATES, "queries": total,
            "heldout_scenes": len(scenes), "candidates": RETRIEVAL_CANDIDATES, "rounds": rounds}  # fmt: skip
