"""Rendering: frozen scene + render configuration -> RGBA image, through one Blender pipeline.

Only :mod:`harness.render.blender` imports bpy, lazily; everything else here (framing math,
compositing, the render cache, the render plan) is plain Python + numpy. Entry point for
callers: :class:`harness.render.service.RenderService`.
"""
