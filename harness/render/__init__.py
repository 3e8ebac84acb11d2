"""Rendering: frozen scene + render configuration -> RGBA image, through one Blender pipeline.

The Blender pipeline (:mod:`harness.render.blender` and the modules it builds with) imports
bpy lazily, through :mod:`harness.render.bpyaccess`; everything else here (framing math,
compositing, the render cache, the render plan) is plain Python + numpy. Entry point for
callers: :class:`harness.render.service.RenderService`.
"""
