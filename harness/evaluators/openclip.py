"""open_clip adapter: CLIP, OpenCLIP, MetaCLIP, DFN, EVA-CLIP, CLIPA, SigLIP, custom configs.

Scoring is by embedding similarity. ``score_grid`` encodes each distinct image once (pixel
sha256) and each distinct caption once (plus the shared text-embedding cache), then takes one
matrix product of the L2-normalised embeddings and applies the spec's score scale:

* ``clipscore``: ``2.5 * max(cos, 0)`` (Hessel et al. 2021; the clamp removes negative
  similarities, the weight stretches the typical range);
* ``sigmoid``: ``sigmoid(exp(t) * cos + b)`` with the SigLIP model's own learned temperature
  and bias: its trained pairwise match probability.

Images stream through in batches of ``batch_size``; only the ``(n, d)`` float32 embeddings
are kept, so memory is bounded by the batch, not the number of images.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from harness.core.bounded_input import read_json
from harness.core.errors import EvaluatorError
from harness.core.paths import CACHE_ENV, REPO_ROOT
from harness.evaluators import weights
from harness.evaluators._torch import (
    EmbeddingScoring,
    clipscore,
    load_failure,
    resolve_device,
    to_pil,
)
from harness.evaluators.base import EvaluatorSpec
from harness.evaluators.cache import EmbeddingCache

CLIPSCORE_W = 2.5
_CHECKPOINT_NAMES = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")


def checkpoint_file(found: weights.Resolved) -> Path:
    """The weights file inside a resolved location (a file, or a directory holding one)."""
    path = found.path
    if path.is_file():
        return path
    for name in _CHECKPOINT_NAMES:
        if (path / name).is_file():
            return path / name
    files = sorted(p for p in path.iterdir() if p.suffix in (".safetensors", ".bin", ".pt", ".pth"))
    if not files:
        raise FileNotFoundError(f"no open_clip checkpoint file in {path}")
    return files[0]


def register_model_config(spec: EvaluatorSpec) -> None:
    """Make a custom model config (``model_config`` option) known to open_clip."""
    import open_clip

    config = spec.option("model_config")
    if not config:
        return
    path = Path(config)
    if not path.is_absolute():
        path = REPO_ROOT / path
    if not path.is_file():
        raise weights.missing_weights_error(spec, f"model config {path} not found")
    try:
        wanted = read_json(path)
    except ValueError as exc:
        raise EvaluatorError(f"model config is not JSON: {exc}", where=path) from exc
    # (Re-)register when the name is unknown or bound to a different config: open_clip keys
    # configs by file stem, and a later path wins on rescan.
    if open_clip.get_model_config(path.stem) != wanted:
        open_clip.add_model_config(path)
    if open_clip.get_model_config(path.stem) != wanted:
        raise EvaluatorError(
            f"evaluator {spec.id!r}: open_clip did not accept model config {path.name}",
            where=path,
            hint="it needs embed_dim, vision_cfg and text_cfg as in open_clip/model_configs",
        )


def load(spec: EvaluatorSpec, device: str) -> tuple[object, object, object]:
    """``(model, preprocess, tokenizer)`` for an open_clip spec, weights found offline first."""
    import open_clip

    register_model_config(spec)
    found = weights.require(spec)
    try:
        pretrained = str(checkpoint_file(found)) if found is not None else spec.checkpoint
        model, _, preprocess = open_clip.create_model_and_transforms(
            spec.model_name,
            pretrained=pretrained,
            device=device,
            image_mean=tuple(spec.option("mean")),
            image_std=tuple(spec.option("std")),
            image_interpolation=spec.option("interpolation"),
            image_resize_mode=spec.option("resize_mode"),
            weights_only=True,
        )
        tokenizer = open_clip.get_tokenizer(spec.model_name)
    except Exception as exc:
        if found is None:
            raise weights.missing_weights_error(spec, f"{exc.__class__.__name__}: {exc}") from exc
        raise load_failure(spec, exc) from exc
    model.eval()
    return model, preprocess, tokenizer


def token_count(tokenizer: object, text: str) -> int:
    """Number of tokens ``text`` needs, special tokens included, before truncation."""
    inner = getattr(tokenizer, "tokenizer", None)  # open_clip HFTokenizer wraps a HF tokenizer
    if inner is not None and callable(inner):
        return len(inner(text, add_special_tokens=True)["input_ids"])
    if hasattr(tokenizer, "encode"):
        return len(tokenizer.encode(text)) + 2  # start and end of text
    return 0


class OpenClipEvaluator(EmbeddingScoring):
    """An open_clip model behind the Evaluator protocol (also an EmbeddingEvaluator)."""

    def __init__(
        self,
        spec: EvaluatorSpec,
        model: object,
        preprocess: object,
        tokenizer: object,
        *,
        device: str,
        batch_size: int,
        text_cache: EmbeddingCache | None = None,
    ):
        self.spec = spec
        self.model = model
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.device = device
        self.batch_size = batch_size
        self.text_cache = text_cache or EmbeddingCache(spec.identity_hash)
        self.context_length = int(getattr(model, "context_length", spec.max_text_tokens or 77))

    # ----------------------------------------------------------------- encoders
    def encode_images(self, batch: list[np.ndarray]) -> np.ndarray:
        import torch

        pixels = torch.stack([self.preprocess(to_pil(im)) for im in batch])
        emb = self.model.encode_image(pixels.to(self.device), normalize=True)
        return emb.float().cpu().numpy()

    def encode_texts(self, batch: list[str]) -> np.ndarray:
        tokens = self.tokenizer(batch, context_length=self.context_length)
        emb = self.model.encode_text(tokens.to(self.device), normalize=True)
        return emb.float().cpu().numpy()

    def truncated(self, text: str) -> bool:
        """Whether ``text`` exceeds the model's text window (and is cut by the tokenizer)."""
        return token_count(self.tokenizer, text) > self.context_length

    # ----------------------------------------------------------------- scoring
    def transform(self, cos: np.ndarray) -> np.ndarray:
        """Cosine similarities -> scores on the spec's scale (float64)."""
        cos = np.asarray(cos, dtype=np.float64)
        if self.spec.option("scale") == "sigmoid":
            scale = float(self.model.logit_scale.exp().item())
            bias_param = getattr(self.model, "logit_bias", None)
            bias = float(bias_param.item()) if bias_param is not None else 0.0
            return 1.0 / (1.0 + np.exp(-(scale * cos + bias)))
        return clipscore(cos, CLIPSCORE_W)

    def close(self) -> None:
        self.model = None


def build(spec: EvaluatorSpec, *, device: str = "auto", batch_size: int = 32) -> OpenClipEvaluator:
    """Adapter constructor registered under ``open_clip``."""
    device = resolve_device(device)
    model, preprocess, tokenizer = load(spec, device)
    # The on-disk text-embedding cache lives in the shared audit cache when one is configured.
    text_root = os.environ.get(CACHE_ENV)
    cache = EmbeddingCache(spec.identity_hash, text_root) if text_root else None
    return OpenClipEvaluator(
        spec, model, preprocess, tokenizer, device=device, batch_size=batch_size, text_cache=cache
    )
