"""Optimisation loop of the reference evaluators, with open_clip's own models and losses.

The only training module that imports torch/open_clip (lazily, inside functions); it takes
plain numpy arrays and a :class:`~harness.evaluators.reference.models.ModelRecipe`, and knows
nothing of scenes or the renderer (the data and the orchestration live in
:mod:`harness.training`).

Each model is an open_clip config in ``configs/`` registered with ``open_clip.add_model_config``
and trained from random init with ``open_clip.loss.ClipLoss`` (softmax contrastive) or
``SigLipLoss`` (pairwise sigmoid). Batches hold distinct scenes (one random view, one random
caption each), so no batch contains a false negative of the same scene. Single-threaded by
default: the machine is shared. Weights are saved as a float16 state dict in safetensors,
loadable with ``open_clip.create_model_and_transforms(<model name>, pretrained=<path>)``.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import EvaluatorError
from harness.evaluators.builders import OPENAI_MEAN, OPENAI_STD
from harness.evaluators.reference.models import CONFIG_DIR, ModelRecipe

RETRIEVAL_CANDIDATES = 10
LOSS_CLASSES = {"clip": "open_clip.loss.ClipLoss", "siglip": "open_clip.loss.SigLipLoss"}


def register_configs() -> None:
    """Make the bundled model configs known to open_clip (idempotent)."""
    import open_clip

    known = set(open_clip.list_models())
    for path in sorted(CONFIG_DIR.glob("*.json")):
        if path.stem not in known:
            open_clip.add_model_config(path)


def resize(image: np.ndarray, px: int) -> np.ndarray:
    """(H, W, C) uint8 → (px, px, C) uint8 (C = 3 or 4), bicubic with antialiasing (PIL)."""
    from PIL import Image

    return np.asarray(Image.fromarray(image).resize((px, px), Image.Resampling.BICUBIC))


def _image_size(model: Any) -> int:
    size = model.visual.image_size
    return int(size[0] if isinstance(size, (tuple, list)) else size)


def prepare_images(images: np.ndarray, size: int) -> Any:
    """(N, S, S, 3) uint8 → (N, 3, size, size) float32 tensor, normalised as at evaluation
    (bicubic resize like the open_clip transform, OpenAI mean/std)."""
    import torch

    if images.shape[1] != size:
        images = np.stack([resize(im, size) for im in images])
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float().div_(255.0)
    mean = torch.tensor(OPENAI_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(OPENAI_STD).view(1, 3, 1, 1)
    return (x - mean) / std


def prepare_rgba(rgba: np.ndarray, size: int) -> Any:
    """(N, S, S, 4) uint8 → (N, 4, size, size) float32 tensor in [0, 1] (straight alpha)."""
    import torch

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


def lr_at(step: int, recipe: ModelRecipe, total: int, time_fraction: float = 0.0) -> float:
    """Linear warm-up, then cosine decay to 0. Progress is the larger of the step fraction and
    ``time_fraction`` (elapsed / ``max_minutes``), so a run stopped by the clock still ends
    annealed."""
    if step < recipe.warmup:
        return recipe.lr * (step + 1) / recipe.warmup
    progress = max((step - recipe.warmup) / max(1, total - recipe.warmup), time_fraction)
    return recipe.lr * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


@dataclass
class FitResult:
    """What one optimisation run did; the training card records these fields."""

    steps: int
    steps_planned: int
    stopped_early_by_time: bool
    batch_size: int
    train_images: int
    train_scenes: int
    augmented: bool
    wall_time_s: float  # seconds of the loop, without saving
    parameters: int
    losses: list[float] = field(default_factory=list)  # one per step
    versions: dict[str, str] = field(default_factory=dict)  # torch, open_clip


def fit(
    recipe: ModelRecipe,
    weights: Path,
    *,
    images: np.ndarray,
    scene: np.ndarray,
    heldout: np.ndarray,
    captions: Sequence[Sequence[str]],
    rgba: np.ndarray | None = None,
    steps: int | None = None,
    log: Callable[[str], None] = print,
) -> FitResult:
    """Train ``recipe`` from random init on the rows not ``heldout``; save float16 ``weights``.

    ``images`` (N, S, S, 3) uint8 composited renders, ``rgba`` (N, S, S, 4) uint8 or ``None``
    (with ``recipe.augment``, each step composites a fresh background under them), ``scene``
    (N,) int scene index, ``heldout`` (N,) bool, ``captions`` N lists of strings. ``steps``
    overrides the recipe's. The weights file is written to a temporary name, then renamed.
    """
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
    use_rgba = recipe.augment and rgba is not None
    pixels = prepare_rgba(rgba, size) if use_rgba else prepare_images(images, size)
    gen = torch.Generator().manual_seed(recipe.seed)
    train_idx = np.flatnonzero(~heldout)
    by_scene: dict[int, list[int]] = {}
    for i in train_idx:
        by_scene.setdefault(int(scene[i]), []).append(int(i))
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
            group["lr"] = lr_at(step, recipe, total, (time.time() - t0) / 60.0 / recipe.max_minutes)
        chosen = rng.sample(scenes, batch)
        idx = [rng.choice(by_scene[s]) for s in chosen]
        batch_images = augment_batch(pixels[idx], gen) if use_rgba else pixels[idx]
        texts = tokenizer([rng.choice(captions[i]) for i in idx])
        out = model(batch_images, texts)
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
    state = {k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in model.state_dict().items()}
    tmp = weights.with_suffix(".safetensors.tmp")
    save_file(state, str(tmp), metadata={"model_name": recipe.model_name, "recipe": json.dumps(recipe.to_dict())})
    tmp.replace(weights)
    weights.chmod(0o644)  # safetensors writes owner-only files; the fixture is public
    return FitResult(
        steps=done,
        steps_planned=total,
        stopped_early_by_time=stopped_early,
        batch_size=batch,
        train_images=len(train_idx),
        train_scenes=len(scenes),
        augmented=use_rgba,
        wall_time_s=wall,
        parameters=int(sum(p.numel() for p in model.parameters())),
        losses=losses,
        versions={"torch": torch.__version__, "open_clip": open_clip.__version__},
    )


def heldout_top1(
    model_name: str,
    weights: Path,
    *,
    images: np.ndarray,
    scene: np.ndarray,
    heldout: np.ndarray,
    captions: Sequence[Sequence[str]],
    seed: int = 0,
    rounds: int = 5,
) -> dict[str, Any]:
    """Caption→image top-1 among 10 candidate held-out scenes, with the saved weights.

    Arrays as in :func:`fit`. For each held-out scene: its first caption (first view's first
    wording) against its first view plus the first views of 9 other held-out scenes drawn at
    random; a hit when its own image has the highest cosine similarity (ties count as misses).
    Repeated ``rounds`` times with different distractors; the model is loaded from ``weights``
    through open_clip's ``pretrained=`` path, exactly as the registry loads it.
    """
    import open_clip
    import torch

    register_configs()
    model, _, _ = open_clip.create_model_and_transforms(model_name, pretrained=str(weights))
    model.eval()
    tokenizer = open_clip.get_tokenizer(model_name)
    first: dict[int, int] = {}
    for i in np.flatnonzero(heldout):
        first.setdefault(int(scene[i]), int(i))
    scenes = sorted(first)
    if len(scenes) < RETRIEVAL_CANDIDATES:
        return {"top1": float("nan"), "chance": 1 / RETRIEVAL_CANDIDATES, "queries": 0,
                "note": "fewer than 10 held-out scenes"}  # fmt: skip
    idx = [first[s] for s in scenes]
    with torch.inference_mode():
        img = model.encode_image(prepare_images(images[idx], _image_size(model)), normalize=True)
        txt = model.encode_text(tokenizer([captions[i][0] for i in idx]), normalize=True)
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
