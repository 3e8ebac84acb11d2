"""Helpers shared by the torch adapters (imported only by them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

import numpy as np

from harness.core.errors import EvaluatorError
from harness.evaluators.base import EvaluatorSpec, check_image
from harness.evaluators.cache import EmbeddingCache, image_sha256

T = TypeVar("T")


def resolve_device(device: str) -> str:
    """``"auto"`` -> ``"cuda"`` when available, else ``"cpu"``; other values pass through."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise EvaluatorError(f"device {device!r} requested but CUDA is not available")
    return device


def to_pil(image: np.ndarray) -> object:
    """An ``(H, W, 3)`` uint8 array as a PIL RGB image."""
    from PIL import Image

    return Image.fromarray(np.ascontiguousarray(image))


def distinct_images(
    spec: EvaluatorSpec, images: Iterable[np.ndarray]
) -> tuple[list[int], Iterator[tuple[int, np.ndarray]]]:
    """Deduplicate by pixel sha256 while streaming.

    Returns ``rows`` (filled as the iterator is consumed: ``rows[i]`` is the distinct-image row
    of input ``i``) and an iterator over ``(row, image)`` for first occurrences only.
    """
    rows: list[int] = []

    def generate() -> Iterator[tuple[int, np.ndarray]]:
        seen: dict[str, int] = {}
        for index, image in enumerate(images):
            check_image(spec, image, index)
            sha = image_sha256(image)
            row = seen.get(sha)
            if row is None:
                row = seen[sha] = len(seen)
                rows.append(row)
                yield row, image
            else:
                rows.append(row)

    return rows, generate()


def batched(items: Iterable[object], size: int) -> Iterator[list[object]]:
    """Consecutive lists of at most ``size`` items."""
    batch: list[object] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def distinct_texts(texts: Sequence[str]) -> tuple[list[str], list[int]]:
    """Unique texts in first-seen order and, per input, its index among them."""
    order: dict[str, int] = {}
    index = [order.setdefault(t, len(order)) for t in texts]
    return list(order), index


def load_failure(spec: EvaluatorSpec, exc: BaseException) -> EvaluatorError:
    """A typed error for a model that was found but could not be loaded."""
    return EvaluatorError(
        f"evaluator {spec.id!r} could not be loaded: {exc.__class__.__name__}: {exc}",
        where=spec.checkpoint,
        hint="check that the checkpoint matches the model config "
        f"({spec.model_name}) and was written by the same library",
    )


def fixed_shape(encode: Callable[[list[T]], np.ndarray], batch: list[T], size: int) -> np.ndarray:
    """``encode(batch)`` run on exactly ``size`` rows (``batch`` padded by repeating its last
    item), trimmed back to ``len(batch)`` rows.

    Why: CPU matrix kernels pick their code path by the batch dimension, so a text encoded in a
    batch of 1 or 2 differs in the last float bits from the same text in a batch of 32, and how
    many texts a call still has to encode depends on what the caches already hold. With one
    shape every row is computed alike, so an embedding never depends on its batch-mates
    (tests/test_embedding_determinism.py).
    """
    if not batch or len(batch) >= size:
        return encode(batch)
    return encode(batch + [batch[-1]] * (size - len(batch)))[: len(batch)]


class EmbeddingScoring:
    """Shared encoding loops and ``score``/``score_grid`` for embedding evaluators.

    Subclasses provide ``spec``, ``batch_size``, ``text_cache``, the model calls
    ``encode_images(batch) -> (b, d)`` and ``encode_texts(batch) -> (b, d)`` (float32 unit
    vectors as numpy, run under ``torch.inference_mode``), ``transform(cos)`` and
    ``truncated(text)``.
    """

    spec: EvaluatorSpec
    batch_size: int
    text_cache: EmbeddingCache

    def encode_images(self, batch: list[np.ndarray]) -> np.ndarray:
        """``(len(batch), d)`` float32 unit vectors for ``(H, W, 3)`` uint8 images."""
        raise NotImplementedError

    def encode_texts(self, batch: list[str]) -> np.ndarray:
        """``(len(batch), d)`` float32 unit vectors for texts."""
        raise NotImplementedError

    def image_embeddings(self, images: Iterable[np.ndarray]) -> tuple[np.ndarray, list[int]]:
        """``(distinct (k, d) float32 unit vectors, row of each input image)``; streamed."""
        import torch

        rows, unique = distinct_images(self.spec, images)
        chunks: list[np.ndarray] = []
        with torch.inference_mode():
            for batch in batched(unique, self.batch_size):
                chunks.append(fixed_shape(self.encode_images, [im for _, im in batch], self.batch_size))
        return (np.concatenate(chunks) if chunks else np.zeros((0, 0), np.float32)), rows

    def text_embeddings(self, texts: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        """``(distinct (k, d) float32 unit vectors, row of each input text)``; cached."""
        import torch

        unique, rows = distinct_texts(texts)
        known = self.text_cache.get_many(unique)
        todo = [t for t in unique if t not in known]
        with torch.inference_mode():
            for batch in batched(todo, self.batch_size):
                vectors = fixed_shape(self.encode_texts, list(batch), self.batch_size)
                fresh = dict(zip(batch, vectors, strict=True))
                self.text_cache.put_many(fresh)
                known.update(fresh)
        if not unique:
            return np.zeros((0, 0), np.float32), rows
        return np.stack([known[t] for t in unique]).astype(np.float32), rows

    def score_grid(self, images: Iterable[np.ndarray], captions: Sequence[str]) -> np.ndarray:
        """``(n_images, n_captions)`` scores; each distinct image and caption encoded once."""
        img, img_rows = self.image_embeddings(images)
        txt, txt_rows = self.text_embeddings(list(captions))
        if not img_rows or not txt_rows:
            return np.zeros((len(img_rows), len(txt_rows)))
        grid = self.transform(img @ txt.T)  # type: ignore[attr-defined]
        return grid[np.ix_(img_rows, txt_rows)]

    def score(self, images: Sequence[np.ndarray], captions: Sequence[str]) -> list:
        """Pairwise scores ``images[i]`` vs ``captions[i]`` as ScoreResults."""
        from harness.evaluators.base import ScoreResult, check_pairs

        check_pairs(self.spec, images, captions)
        img, img_rows = self.image_embeddings(images)
        txt, txt_rows = self.text_embeddings(list(captions))
        if not img_rows:
            return []
        cos = np.einsum("nd,nd->n", img[img_rows], txt[txt_rows])
        scores = self.transform(cos)  # type: ignore[attr-defined]
        return [
            ScoreResult.ok(float(s), truncated=self.truncated(c))  # type: ignore[attr-defined]
            for s, c in zip(scores, captions, strict=True)
        ]


def clipscore(cos: np.ndarray, weight: float = 2.5) -> np.ndarray:
    """CLIPScore (Hessel et al. 2021): ``weight * max(cos, 0)`` as float64."""
    return weight * np.maximum(np.asarray(cos, dtype=np.float64), 0.0)
