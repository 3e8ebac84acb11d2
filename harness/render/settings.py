"""Fixed renderer settings. Changing any value here changes pixels: bump ``RENDERER_REVISION``.

``RENDERER_REVISION`` is part of every render-cache key, so stale cached renders are never
served after a change to the pipeline.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata

# 3: skinned glTF assets no longer bring the importer's bone-shape icosphere into the render
RENDERER_REVISION = "3"

#: Cycles CPU threads per process (unset or 0: all cores). Thread count never changes pixels,
#: so it is not part of the cache key; ``warm`` sets it to cores / processes.
THREADS_ENV = "T3D_AUDIT_RENDER_THREADS"

WORLD_STRENGTH = 1.0  # the same for every lighting map: only the map changes
WORLD_MAP_RESOLUTION = 256  # importance map of the lighting HDRI (pixels per side)
MAX_BOUNCES = 4
CLAMP_DIRECT = 3.0  # Cycles sample clamp for direct light: removes sun-glint speckles
CLAMP_INDIRECT = 1.0  # Cycles sample clamp for indirect light (firefly control)
VIEW_TRANSFORM = "AgX"  # Blender's default: highlights roll off instead of clipping to white
FLOOR_RGB = (0.62, 0.56, 0.48)
WALL_RGB = (0.86, 0.85, 0.82)
DEFAULT_OBJECT_RGB = (0.6, 0.6, 0.6)  # objects whose OBJ has no material
# RenderConfig.geometry "points": surface samples per square metre of each object part
# (about 1.6 cm apart), bounded per part so a huge asset stays renderable
POINTS_PER_M2 = 4000.0
MIN_POINTS = 200
MAX_POINTS = 20000

# Table 11 lighting level -> file under <Blender datafiles>/studiolights/world/
LIGHTING_FILES = {
    "city": "city.exr",
    "courtyard": "courtyard.exr",
    "forest": "forest.exr",
    "interior": "interior.exr",
    "night": "night.exr",
    "studio": "studio.exr",
    "sunrise": "sunrise.exr",
    "sunset": "sunset.exr",
}


@cache
def blender_version() -> str:
    """The installed bpy version, read from package metadata (does not import bpy)."""
    try:
        return metadata.version("bpy")
    except metadata.PackageNotFoundError:
        return "not-installed"


def core_share(processes: int) -> int:
    """Threads each of ``processes`` concurrent processes gets so that together they use every
    core once (at least 1)."""
    import os

    return max(1, (os.cpu_count() or 1) // max(1, processes))


def render_threads() -> int:
    """Threads per rendering process from ``$T3D_AUDIT_RENDER_THREADS`` (0: Cycles' automatic);
    a negative or non-integer value is a :class:`~harness.core.errors.RenderError` naming it."""
    from harness.core.envvars import render_threads as read
    from harness.core.errors import AuditError, RenderError

    try:
        return read()
    except AuditError as exc:
        raise RenderError(exc.what, where=THREADS_ENV, hint="unset it or give a count >= 0") from None
