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
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from harness.core.errors import EvaluatorError
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


def _image_size(model: object) -> int:
    size = model.visual.image_size
    return int(size[0] if isinstance(size, (tuple, list)) else size)


def prepare_images(images: np.ndarray, size: int) -> object:
    """(N, S, S, 3) uint8 → (N, 3, size, size) float32 tensor, normalised as at evaluation
    (bicubic resize like the open_clip transform, OpenAI mean/std)."""
    import torch

    if images.shape[1] != size:
        images = np.stack([resize(im, size) for im in images])
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float().div_(255.0)
    mean = torch.tensor(OPENAI_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(OPENAI_STD).view(1, 3, 1, 1)
    return (x - mean) / std


def prepare_rgba(rgba: np.ndarray, size: int) -> object:
    """(N, S, S, 4) uint8 → (N, 4, size, size) float32 tensor in [0, 1] (straight alpha)."""
    import torch

    if rgba.shape[1] != size:
        rgba = np.stack([resize(im, size) for im in rgba])
    return torch.from_numpy(rgba).permute(0, 3, 1, 2).float().div_(255.0)


def augment_batch(rgba: object, generator: object, *, shared: bool = False) -> object:
    """Composite a fresh background under each render and apply content-preserving changes.

    ``rgba`` (B, 4, S, S) in [0, 1] → normalised (B, 3, S, S). Per sample (one draw for the
    whole batch with ``shared``, so that a hard-negative group differs only in content):
    brightness ×U(0.8, 1.2); background a random gray (half) or a random colour; a random
    multiple of 90° turn and horizontal flip (captions name objects, not sides). Draws from the
    torch ``generator``.
    """
    import torch

    b = rgba.shape[0]
    d = 1 if shared else b
    rgb, alpha = rgba[:, :3], rgba[:, 3:]
    bright = torch.empty(d, 1, 1, 1).uniform_(0.8, 1.2, generator=generator).expand(b, 1, 1, 1)
    rgb = (rgb * bright).clamp_(0.0, 1.0)
    bg = torch.rand(d, 3, 1, 1, generator=generator)
    gray = torch.rand(d, 1, 1, 1, generator=generator) < 0.5
    bg = torch.where(gray, bg[:, :1].expand(d, 3, 1, 1), bg).expand(b, 3, 1, 1)
    x = rgb * alpha + bg * (1.0 - alpha)
    turns = torch.randint(0, 4, (d,), generator=generator).expand(b)
    flips = (torch.rand(d, generator=generator) < 0.5).expand(b)
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


@dataclass(frozen=True)
class HardNegatives:
    """Hard-negative groups of a training set (:mod:`harness.training.negatives`).

    ``group`` (N,) int group per row, −1 for rows outside any group; ``companion`` (N,) the
    symbolic companion score of each row's scene against its group's spec (NaN outside
    groups); ``contents`` (N,) int, equal within a group exactly when two rows hold the same
    labels and counts (their content captions are then interchangeable, so neither is a
    text-side negative of the other); ``captions`` one list of positive spec captions per group
    (index = group id).
    """

    group: np.ndarray
    companion: np.ndarray
    contents: np.ndarray
    captions: Sequence[Sequence[str]]


RANK_MARGIN = 0.005  # companion score gap below which two variants are not ranked


class HardNegativeTerms(NamedTuple):
    """The scalar (0-d tensor) losses of :func:`hard_negative_loss`; the recipe weighs them."""

    contrastive: object
    ranking: object
    within_top1: object


def hard_negative_loss(
    text: object,
    images: object,
    text_negatives: Sequence[object],
    companion: Sequence[np.ndarray],
    logit_scale: object,
) -> HardNegativeTerms:
    """The NegCLIP contrastive, ranking and within-group top-1 losses of one step's groups.

    ``text`` (H, D) one positive spec caption embedding per group; ``images`` list of H
    (K_h, D) embeddings of each group's variants; ``text_negatives`` list of H (T_h, D)
    embeddings of captions that do not describe the group's best variant; ``companion`` list
    of H (K_h,) companion scores; all embeddings L2-normalised. Contrastive: each caption
    against every group's variants (target: its group's best variant; its own variants with
    an equal companion score are masked out), and each best variant against every group's
    caption plus its own wrong captions. Ranking: mean pairwise logistic loss
    ``softplus(-(s_a - s_b))`` over a group's variant pairs with ``c_a > c_b + RANK_MARGIN``,
    ``s`` = scaled cosine with the group's caption. Within-group top-1: the caption against
    its own group's variants only (target: the best; variants with an equal companion score
    masked out), which weighs the near-misses (a jittered layout, one object too many) that
    the contrastive term's many easy other-group images drown out.
    """
    import torch
    import torch.nn.functional as F

    all_images = torch.cat(list(images))
    offsets = np.cumsum([0] + [len(x) for x in images])
    logits = logit_scale * text @ all_images.T  # (H, sum K)
    t2i, i2t, rank, top1 = [], [], [], []
    for h, comp in enumerate(companion):
        lo, hi = int(offsets[h]), int(offsets[h + 1])
        best = int(np.argmax(comp))
        row = logits[h].clone()
        same = torch.from_numpy(comp >= comp[best] - 1e-9)
        same[best] = False
        row[lo:hi] = row[lo:hi].masked_fill(same, float("-inf"))
        t2i.append(F.cross_entropy(row[None], torch.tensor([lo + best])))
        top1.append(F.cross_entropy(row[lo:hi][None], torch.tensor([best])))
        best_img = all_images[lo + best]
        texts = torch.cat([text, text_negatives[h]]) if len(text_negatives[h]) else text
        i2t.append(F.cross_entropy((logit_scale * texts @ best_img)[None], torch.tensor([h])))
        s = logits[h, lo:hi]
        c = torch.from_numpy(np.asarray(comp, dtype=np.float32))
        better = (c[:, None] - c[None, :]) > RANK_MARGIN  # (K, K): a better than b
        if better.any():
            rank.append(F.softplus(-(s[:, None] - s[None, :]))[better].mean())
    contrastive = (torch.stack(t2i).mean() + torch.stack(i2t).mean()) / 2
    ranking = torch.stack(rank).mean() if rank else contrastive.new_zeros(())
    return HardNegativeTerms(contrastive, ranking, torch.stack(top1).mean())


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
    hard_groups: int = 0  # training groups with hard negatives
    hard_losses: list[float] = field(default_factory=list)  # contrastive + ranking, per step
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
    hard: HardNegatives | None = None,
    init: Path | None = None,
    steps: int | None = None,
    log: Callable[[str], None] = print,
) -> FitResult:
    """Train ``recipe`` from random init on the rows not ``heldout``; save float16 ``weights``.

    ``images`` (N, S, S, 3) uint8 composited renders, ``rgba`` (N, S, S, 4) uint8 or ``None``
    (with ``recipe.augment``, each step composites a fresh background under them), ``scene``
    (N,) int scene index, ``heldout`` (N,) bool, ``captions`` N lists of strings. ``steps``
    overrides the recipe's. The weights file is written to a temporary name, then renamed.
    ``init``: safetensors weights to start from instead of random init (their sha256 must be
    ``recipe.init_sha256``).

    Each step: the open_clip loss on a batch of distinct scenes (at most one row per
    hard-negative group, so no batch holds two variants of one spec), plus, with ``hard``,
    ``recipe.hard_weight`` × the NegCLIP loss, ``recipe.rank_weight`` × the ranking loss and
    ``recipe.top1_weight`` × the within-group top-1 loss of :func:`hard_negative_loss` on
    ``recipe.hard_groups`` training groups.
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
    if init is not None:
        _load_init(model, Path(init), recipe)
    tokenizer = open_clip.get_tokenizer(recipe.model_name)
    size = _image_size(model)
    use_rgba = recipe.augment and rgba is not None
    pixels = prepare_rgba(rgba, size) if use_rgba else prepare_images(images, size)
    gen = torch.Generator().manual_seed(recipe.seed)
    train_idx = np.flatnonzero(~heldout)
    group_of = hard.group if hard is not None else np.full(len(scene), -1)
    by_scene: dict[tuple[int, int], list[int]] = {}  # a group counts as one unit
    for i in train_idx:
        key = (1, int(group_of[i])) if group_of[i] >= 0 else (0, int(scene[i]))
        by_scene.setdefault(key, []).append(int(i))
    scenes = sorted(by_scene)
    groups = sorted(k[1] for k in by_scene if k[0] == 1)
    n_hard = min(recipe.hard_groups, len(groups)) if hard is not None else 0
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
    hard_losses: list[float] = []
    done = 0
    stopped_early = False
    for step in range(total):
        if (time.time() - t0) / 60.0 > recipe.max_minutes:
            stopped_early = True
            break
        for param_group in opt.param_groups:
            param_group["lr"] = lr_at(step, recipe, total, (time.time() - t0) / 60.0 / recipe.max_minutes)
        chosen = rng.sample(scenes, batch)
        idx = [rng.choice(by_scene[s]) for s in chosen]
        parts = [augment_batch(pixels[idx], gen) if use_rgba else pixels[idx]]
        texts = [rng.choice(captions[i]) for i in idx]
        sizes, text_negs, comps = [], [], []
        for g in rng.sample(groups, n_hard):
            rows = by_scene[(1, g)]
            parts.append(augment_batch(pixels[rows], gen, shared=True) if use_rgba else pixels[rows])
            sizes.append(len(rows))
            comp = np.asarray([hard.companion[r] for r in rows])
            comps.append(comp)
            best = rows[int(np.argmax(comp))]
            # text-side negatives: captions of variants whose objects differ from the best's
            text_negs.append([rng.choice(captions[r]) for r in rows if hard.contents[r] != hard.contents[best]])
            texts.append(rng.choice(hard.captions[g]))
        n_neg = [len(t) for t in text_negs]
        texts += [t for ts in text_negs for t in ts]
        img = model.encode_image(torch.cat(parts), normalize=True)
        txt = model.encode_text(tokenizer(texts), normalize=True)
        scale = model.logit_scale.exp()
        if recipe.loss == "siglip":
            loss = loss_fn(img[:batch], txt[:batch], scale, model.logit_bias)
        else:
            loss = loss_fn(img[:batch], txt[:batch], scale)
        if n_hard:
            img_groups = list(torch.split(img[batch:], sizes))
            pos = txt[batch : batch + n_hard]
            neg_groups = list(torch.split(txt[batch + n_hard :], n_neg))
            terms = hard_negative_loss(pos, img_groups, neg_groups, comps, scale)
            extra = (recipe.hard_weight * terms.contrastive + recipe.rank_weight * terms.ranking
                     + recipe.top1_weight * terms.within_top1)  # fmt: skip
            hard_losses.append(float(extra.item()))
            loss = loss + extra
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():  # keep the temperature in open_clip's usual range
            model.logit_scale.clamp_(0, math.log(100))
        losses.append(float(loss.item()))
        done = step + 1
        if done % 50 == 0 or done == total:
            hard_note = f" (hard {np.mean(hard_losses[-50:]):.4f})" if hard_losses else ""
            log(f"{recipe.id}: step {done}/{total} loss {np.mean(losses[-50:]):.4f}{hard_note} "
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
        hard_groups=len(groups) if hard is not None else 0,
        hard_losses=hard_losses,
        versions={"torch": torch.__version__, "open_clip": open_clip.__version__},
    )


def _load_init(model: object, path: Path, recipe: ModelRecipe) -> None:
    """Load the float16 start weights at ``path`` into ``model`` (float32), checking their hash."""
    from safetensors.torch import load_file

    from harness.core.hashing import sha256_file

    digest = sha256_file(path)
    if recipe.init_sha256 is not None and digest != recipe.init_sha256:
        raise EvaluatorError(f"start weights for {recipe.id} have sha256 {digest[:12]}…, the recipe "
                             f"names {recipe.init_sha256[:12]}…", where=path,
                             hint="use the weights the recipe was fine-tuned from (see docs/reference-evaluators.md)")  # fmt: skip
    state = {k: v.float() if v.is_floating_point() else v for k, v in load_file(str(path)).items()}
    grow_into(model, state, where=path)


#: Parameters whose zeroing turns a residual block into the identity: a transformer block's
#: attention and MLP output projections, a ResNet bottleneck's last batch norm (its sum with
#: the block input then passes a ReLU, and the input is already non-negative).
_IDENTITY_KEYS = re.compile(r"\.(attn\.out_proj|mlp\.c_proj|bn3)\.(weight|bias)$")
_BLOCK_PREFIX = re.compile(r"^(.*\.resblocks\.\d+|visual\.layer\d+\.\d+)\.")


def grow_into(model: object, state: dict[str, object], *, where: Path | str = "<state>") -> list[str]:
    """Load ``state`` into ``model``, which may have more residual blocks per tower; return the new blocks.

    Every parameter of ``state`` must exist in ``model`` with the same shape; every parameter
    of ``model`` missing from ``state`` must belong to a residual block that ``state`` lacks
    entirely (a transformer ``resblocks.<i>`` or a ResNet ``layer<k>.<j>``). Those new blocks
    start as the identity (their output projections zeroed, see ``_IDENTITY_KEYS``), so the
    grown model computes exactly what the smaller one did and training adds depth from there.
    """
    import torch

    missing, unexpected = model.load_state_dict(state, strict=False)
    old_blocks = {m.group(1) for k in state if (m := _BLOCK_PREFIX.match(k))}
    new_blocks = set()
    for key in missing:
        m = _BLOCK_PREFIX.match(key)
        if m is None or m.group(1) in old_blocks:
            raise EvaluatorError(f"start weights lack {key!r}, which is not part of a new residual block",
                                 where=where, hint="start from weights of the same model family")  # fmt: skip
        new_blocks.add(m.group(1))
    if unexpected:
        raise EvaluatorError(f"start weights hold {len(unexpected)} parameters the model lacks, e.g. "
                             f"{sorted(unexpected)[0]!r}", where=where,
                             hint="a model can only grow from a smaller one, not shrink")  # fmt: skip
    params = dict(model.named_parameters())
    with torch.no_grad():
        for key in missing:
            if _IDENTITY_KEYS.search(key) and key in params:
                params[key].zero_()
    return sorted(new_blocks)


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
) -> dict[str, object]:
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
        return {"top1": None, "chance": 1 / RETRIEVAL_CANDIDATES, "queries": 0,
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
