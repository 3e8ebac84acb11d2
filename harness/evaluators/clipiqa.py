"""CLIP-IQA (Wang et al. 2023): a prompt-free quality control on a CLIP backbone.

Score = ``softmax(s * [cos(img, good), cos(img, bad)])[0]`` for the antonym prompt pair in the
spec's ``prompts`` option (default "Good photo." / "Bad photo.") with ``s`` the ``logit_scale``
option (100, CLIP's trained temperature). The captions passed to ``score`` are ignored: the
records of a prompt-free evaluator store an empty caption. The backbone is loaded through the
open_clip adapter (same weight resolution, same preprocessing record). The published CLIP-IQA
drops the RN50 positional embedding to accept any resolution; here images are resized to the
backbone's 224 px like every other CLIP row, which the spec's preprocessing field records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from harness.evaluators import openclip
from harness.evaluators._torch import resolve_device
from harness.evaluators.base import EvaluatorSpec, ScoreResult


class ClipIqaEvaluator:
    """Prompt-free: ``score`` ignores captions; ``score_grid`` repeats the image score."""

    def __init__(self, spec: EvaluatorSpec, backbone: openclip.OpenClipEvaluator):
        self.spec = spec
        self.backbone = backbone
        prompts = tuple(spec.option("prompts", ("Good photo.", "Bad photo.")))
        if len(prompts) != 2:
            from harness.core.errors import EvaluatorError

            raise EvaluatorError(f"evaluator {spec.id!r}: prompts must be an antonym pair")
        self.prompts = prompts
        self.logit_scale = float(spec.option("logit_scale", 100.0))
        self._anchors: np.ndarray | None = None

    def anchors(self) -> np.ndarray:
        """``(2, d)`` unit text embeddings of (positive, negative) prompt."""
        if self._anchors is None:
            emb, rows = self.backbone.text_embeddings(list(self.prompts))
            self._anchors = emb[rows]
        return self._anchors

    def image_scores(self, images: Iterable[np.ndarray]) -> np.ndarray:
        """``(n,)`` P(good) per image, each distinct image encoded once."""
        img, rows = self.backbone.image_embeddings(images)
        if not rows:
            return np.zeros(0)
        # row by row (a product summed over the last axis), not a matrix product: BLAS picks
        # another kernel for one row than for many, so a batch of 1 and a batch of N differed
        # in the last bit (the repeatability check, harness/measure/repeatability.py)
        anchors = self.anchors().astype(np.float64)
        logits = self.logit_scale * (img.astype(np.float64)[:, None, :] * anchors[None, :, :]).sum(axis=2)
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        return probs[:, 0][rows]

    def score(self, images: Sequence[np.ndarray], captions: Sequence[str]) -> list[ScoreResult]:
        """One P(good) per image; ``captions`` are ignored (may be empty strings)."""
        from harness.evaluators.base import check_pairs

        check_pairs(self.spec, images, captions)
        return [ScoreResult.ok(float(s)) for s in self.image_scores(images)]

    def score_grid(self, images: Iterable[np.ndarray], captions: Sequence[str]) -> np.ndarray:
        """``(n_images, n_captions)`` with each row constant (the caption plays no part)."""
        scores = self.image_scores(images)
        return np.repeat(scores[:, None], len(captions), axis=1)

    def close(self) -> None:
        self.backbone.close()


def build(spec: EvaluatorSpec, *, device: str = "auto", batch_size: int = 32) -> ClipIqaEvaluator:
    """Adapter constructor registered under ``clip_iqa``."""
    device = resolve_device(device)
    backbone_spec = spec.with_changes(adapter="open_clip")
    model, preprocess, tokenizer = openclip.load(backbone_spec, device)
    backbone = openclip.OpenClipEvaluator(
        backbone_spec, model, preprocess, tokenizer, device=device, batch_size=batch_size
    )
    return ClipIqaEvaluator(spec, backbone)
