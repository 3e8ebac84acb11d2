"""Tiling views into one image (3D-DefectBench's 4 × 2 grid, GPTEval3D's 2 × 2 sheets)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.core.errors import ProtocolError


def tile(images: Sequence[np.ndarray], cols: int, rows: int) -> np.ndarray:
    """``cols × rows`` equal ``(H, W, 3)`` images, row-major (first ``cols`` on top), as one
    ``(rows·H, cols·W, 3)`` image."""
    if cols < 1 or rows < 1 or len(images) != cols * rows:
        raise ProtocolError(f"a {cols} x {rows} grid needs {cols * rows} views, got {len(images)}",
                            where="tiling")  # fmt: skip
    shapes = {im.shape for im in images}
    if len(shapes) != 1:
        raise ProtocolError(f"tiled views differ in shape: {sorted(shapes)}", where="tiling")
    lines = [np.concatenate(list(images[r * cols : (r + 1) * cols]), axis=1) for r in range(rows)]
    return np.concatenate(lines, axis=0)


def stack(grids: Sequence[np.ndarray]) -> np.ndarray:
    """Grids of equal width one above the other (GPTEval3D's RGB sheet above its normal sheet)."""
    return np.concatenate(list(grids), axis=0)
