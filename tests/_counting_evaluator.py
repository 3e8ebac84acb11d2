"""A fake embedding evaluator that counts its work, and solid test images, for cache tests."""

from __future__ import annotations

import numpy as np

from harness.evaluators import registry
from harness.evaluators.base import ScoreResult


def img(value, shape=(4, 5, 3)):
    return np.full(shape, value, dtype=np.uint8)


class CountingEvaluator:
    """A fake embedding evaluator: score = mean pixel / 255 + len(caption)."""

    def __init__(self, fail_on=""):
        self.spec = registry.get("clip-vit-b32")
        self.pairs = 0
        self.grid_cells = 0
        self.fail_on = fail_on

    def _s(self, image, caption):
        return float(image.mean()) / 255 + len(caption)

    def score(self, images, captions):
        self.pairs += len(images)
        return [
            ScoreResult.failed("boom") if c == self.fail_on else ScoreResult.ok(self._s(i, c))
            for i, c in zip(images, captions, strict=True)
        ]

    def score_grid(self, images, captions):
        self.grid_cells += len(images) * len(captions)
        return np.array([[self._s(i, c) for c in captions] for i in images])

    def close(self):
        pass
