"""Images as evaluators take them: ``(H, W, 3)`` uint8 RGB arrays, from files, PIL images or
arrays, any alpha composited on white."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.errors import EvaluatorError

if TYPE_CHECKING:
    import numpy as np


def load_image(path: Path) -> np.ndarray:
    """An image file as an ``(H, W, 3)`` uint8 RGB array (alpha composited on white)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            return rgb_array(im)
    except (OSError, UnidentifiedImageError) as exc:
        raise EvaluatorError(f"cannot read image: {exc}", where=path) from exc


def rgb_array(image: object) -> np.ndarray:
    """A PIL image as an ``(H, W, 3)`` uint8 RGB array, any alpha composited on white."""
    import numpy as np
    from PIL import Image

    if image.mode in ("RGBA", "LA", "P"):
        rgba = image.convert("RGBA")
        canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        canvas.alpha_composite(rgba)
        image = canvas
    return np.asarray(image.convert("RGB"), dtype=np.uint8)


def as_rgb(image: object, index: int = 0) -> np.ndarray:
    """``image`` as an ``(H, W, 3)`` uint8 RGB array: a PIL image, a path to an image file, an
    ``(H, W)``/``(H, W, 3)``/``(H, W, 4)`` uint8 array (alpha composited on white). ``index``
    names the image in an error."""
    import numpy as np

    if isinstance(image, str | Path):
        return load_image(Path(image))
    if hasattr(image, "convert") and hasattr(image, "size"):  # a PIL image
        return rgb_array(image)
    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise EvaluatorError(f"image {index}: dtype {arr.dtype}, expected uint8",
                             hint="pass uint8 RGB arrays, PIL images or image file paths")  # fmt: skip
    if arr.ndim == 2:
        return np.repeat(arr[:, :, None], 3, axis=2)
    if arr.ndim == 3 and arr.shape[2] == 4:
        alpha = arr[:, :, 3:4].astype(np.float64) / 255.0
        rgb = arr[:, :, :3] * alpha + 255.0 * (1.0 - alpha)
        return np.rint(rgb).astype(np.uint8)
    if arr.ndim == 3 and arr.shape[2] == 3:
        return np.ascontiguousarray(arr)
    raise EvaluatorError(f"image {index}: shape {arr.shape}, expected (H, W, 3)",
                         hint="pass RGB images")  # fmt: skip
