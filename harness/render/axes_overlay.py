"""An axis triad and a front marker drawn over a render (``contact-sheet --axes``).

Pure numpy + PIL, no bpy: each object's frame is projected with the same camera solution the
renderer used (``framing.solve_camera`` on ``framing.scene_box``), so the marks sit where the
object is. Per object, from the centre of its box: +x red, +y green, +z (up) blue, each 0.35
of the object's largest side, and a white arrow with an ``F`` along the object's front (its
−y after yaw and tilt, the side the c0 camera of an object scene looks at; for an imported
object the scene's −y, where its ``--front`` convention turned it). A user checks
the import conventions with it: an upright object has a vertical blue axis, and the ``F``
arrow leaves the object's visible front.
"""

from __future__ import annotations

import numpy as np

from harness.render import framing
from harness.scenes.model import Scene

AXIS_COLOURS = ((230, 40, 40), (40, 200, 40), (60, 90, 255))
FRONT_COLOUR = (255, 255, 255)
AXIS_FRACTION = 0.35


def object_marks(scene: Scene, cfg: object) -> list[dict[str, object]]:
    """Per object: ``origin`` and ``axes`` (3 end points) and ``front`` end point, in the
    render's pixel coordinates (x right, y down; a ``cfg.resolution_px`` square)."""
    pose = framing.solve_camera(framing.scene_box(scene), cfg.focal_length_mm, cfg.pitch_deg,
                                cfg.yaw_deg)
    rot = framing.rotation(cfg.pitch_deg, cfg.yaw_deg)
    px = cfg.resolution_px

    def pixel(points: np.ndarray) -> np.ndarray:
        uv = framing.project(points, np.asarray(pose.location), rot, pose.lens_mm)
        uv = uv - np.asarray(pose.shift)
        return np.stack([(uv[:, 0] + 0.5) * px, (0.5 - uv[:, 1]) * px], axis=1)

    out = []
    for obj in scene.objects:
        # an imported object was turned so that its declared up is +z and its front -y
        # (``source``); an OBJ asset re-based by an axis permutation carries that turn in its
        # yaw, so its box frame is not its facing frame
        frame = np.eye(3) if scene.source is not None else obj.rotation()
        centre = obj.corners().mean(0)
        length = AXIS_FRACTION * max(obj.size)
        ends = centre + length * frame.T  # rows: the object's x, y, z axes in the world
        front = centre - 1.4 * length * frame[:, 1]
        try:
            pts = pixel(np.vstack([centre, ends, front]))
        except ValueError:  # behind the camera: no marks for this object
            continue
        out.append({"origin": pts[0], "axes": pts[1:4], "front": pts[4]})
    return out


def draw_axes(image: object, scene: Scene, cfg: object) -> object:
    """Draw :func:`object_marks` on the PIL ``image`` (any size: marks are scaled from the
    render's resolution); returns the image."""
    from PIL import ImageDraw

    draw = ImageDraw.Draw(image)
    k = image.size[0] / cfg.resolution_px
    width = max(1, round(image.size[0] / 80))
    for marks in object_marks(scene, cfg):
        o = tuple(marks["origin"] * k)
        for end, colour in zip(marks["axes"], AXIS_COLOURS, strict=True):
            draw.line([o, tuple(end * k)], fill=colour, width=width)
        f = tuple(marks["front"] * k)
        draw.line([o, f], fill=FRONT_COLOUR, width=width)
        draw.text((f[0] + 2, f[1] - 6), "F", fill=FRONT_COLOUR)
    return image
