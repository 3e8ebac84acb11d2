"""How the Blender pipeline touches bpy: the lazy import, and property writes that skip a value
already set.

Callers go through the module attribute (``bpyaccess.load()``), so importing a pipeline module
never imports bpy, and a test can stand in for Blender in one place.
"""

from __future__ import annotations

from types import ModuleType


def load() -> ModuleType:
    """The ``bpy`` module, imported on first use (the first import starts Blender)."""
    import bpy  # the pipeline's one import of bpy

    return bpy


def assign(target: object, attr: str, value: object) -> None:
    """``setattr`` unless equal (float32 properties compare after the round trip).

    Any write tags Cycles' persistent data for a re-sync, so an unchanged value is not written.
    """
    current = getattr(target, attr)
    if isinstance(value, float):
        if abs(float(current) - value) <= 1e-7 * max(1.0, abs(value)):
            return
    elif current == value:
        return
    setattr(target, attr, value)
