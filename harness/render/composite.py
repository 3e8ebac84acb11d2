"""Background compositing in numpy: straight-alpha "over" onto an opaque colour.

Renders have a transparent film, so the background factor never re-renders: each level is
``composite(rgba, background_rgb(level))``. Only pixels with alpha < 255 can change.
"""

from __future__ import annotations

import numpy as np

from harness.core.errors import RenderError


def composite(rgba: np.ndarray, rgb: tuple[int, int, int]) -> np.ndarray:
    """Composite straight (non-premultiplied) ``rgba`` (H, W, 4) uint8 over colour ``rgb``.

    Returns (H, W, 3) uint8: ``round(c * a + bg * (1 - a))`` per channel with ``a = alpha/255``,
    computed in integers so alpha 255 keeps the pixel exactly and alpha 0 gives ``rgb`` exactly.
    """
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise RenderError(
            f"expected an (H, W, 4) uint8 RGBA image, got {rgba.shape} {rgba.dtype}",
            where="composite",
        )
    if len(rgb) != 3 or any(not 0 <= int(v) <= 255 for v in rgb):
        raise RenderError(f"background colour {rgb!r} is not three 0..255 values", where="composite")
    colour = rgba[..., :3].astype(np.uint32)
    alpha = rgba[..., 3:4].astype(np.uint32)
    bg = np.asarray(rgb, dtype=np.uint32).reshape(1, 1, 3)
    out = (colour * alpha + bg * (255 - alpha) + 127) // 255
    return out.astype(np.uint8)
