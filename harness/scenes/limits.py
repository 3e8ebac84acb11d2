"""Physical plausibility of a scene: lengths, yaw and object placement against the room.

JSON Schema cannot relate one field to another (an object's box to its room), and a schema-valid
scene can still be unrenderable: a 1e-320 m or 1e300 m box, a yaw of 1e300 degrees (its sine is
noise), an object a kilometre outside the room that the camera framing never sees. Checked on a
schema-valid document (numbers finite) by ``harness.scenes.load``:

* every length (room ``size`` per axis, ``wall_height``, object ``size`` per axis) lies in
  [:data:`LENGTH_MIN`, :data:`LENGTH_MAX`] = [1 mm, 100 m];
* a ``tilt`` quaternion (schema 2) is not zero; a tilted object's placement is checked on its
  floor-layout box (``SceneObject.layout``), which encloses the tilted box;
* ``|yaw_deg| <= YAW_MAX`` (360°): generators and importers write yaw in [0°, 360°) or
  (-180°, 180°]; a larger value is almost certainly radians-as-degrees or garbage;
* an object's rotated footprint lies inside the floor rectangle grown by :data:`ROOM_MARGIN`
  (1 m) on every side, and its box's z extent inside [-ROOM_MARGIN, wall_height + ROOM_MARGIN].
  The margin tolerates generated and imported scenes whose furniture pokes through a wall; the
  bundled set needs 0.07 mm of it (``jittered.kids-room-07``, float rounding) and never leaves
  [0, wall_height] in z.

Pure functions on the parsed document; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from harness.core.errors import SceneError

LENGTH_MIN = 1e-3  # m: 1 mm, below which a box is no visible object
LENGTH_MAX = 100.0  # m: per axis, larger than any room a scene depicts
YAW_MAX = 360.0  # degrees, absolute
ROOM_MARGIN = 1.0  # m an object may stick out of the floor rectangle / below floor / above walls

_LENGTH_HINT = f"lengths are metres in [{LENGTH_MIN:g}, {LENGTH_MAX:g}] (1 mm .. 100 m)"


def _length(value: float, path: str, where: str, what: str) -> None:
    if not LENGTH_MIN <= value <= LENGTH_MAX:
        raise SceneError(
            f"{what} {value!r} m out of range", path=path, pointer=where, hint=_LENGTH_HINT
        )


def check_limits(doc: dict[str, object], path: str) -> None:
    """Raise :class:`SceneError` (file, JSON pointer, range) for the first implausible value.

    ``doc`` must already be schema-valid with finite numbers. Order: room lengths, then per
    object its size, yaw and placement.
    """
    room = doc["room"]
    # an object scene has no room: its "room" is the ground around the object and its height
    is_object = doc.get("kind") == "object"
    area = "the object's ground" if is_object else "the room"
    for axis, value in enumerate(room["size"]):
        _length(value, path, f"/room/size/{axis}",
                "object scene ground size" if is_object else "room size")
    _length(room["wall_height"], path, "/room/wall_height",
            "object scene height" if is_object else "wall height")
    half_room = (room["size"][0] / 2.0 + ROOM_MARGIN, room["size"][1] / 2.0 + ROOM_MARGIN)
    for i, obj in enumerate(doc["objects"]):
        base = f"/objects/{i}"
        for axis, value in enumerate(obj["size"]):
            _length(value, path, f"{base}/size/{axis}", "object size")
        yaw = obj["yaw_deg"]
        if not abs(yaw) <= YAW_MAX:
            raise SceneError(
                f"yaw {yaw!r} degrees out of range",
                path=path,
                pointer=f"{base}/yaw_deg",
                hint=f"yaw_deg is degrees in [-{YAW_MAX:g}, {YAW_MAX:g}]",
            )
        position, size = obj["position"], obj["size"]
        if "tilt" in obj:
            position, size = _tilted_layout(obj, path, base)
        _placement(position, size, yaw, half_room, room["wall_height"], path, base, area)


def _tilted_layout(obj: dict[str, object], path: str, base: str) -> tuple[object, object]:
    from harness.scenes.model import SceneObject

    tilt = obj["tilt"]
    if not sum(float(v) * float(v) for v in tilt) > 1e-12:
        raise SceneError(
            "tilt quaternion is zero",
            path=path,
            pointer=f"{base}/tilt",
            hint="a rotation [w, x, y, z]; [1, 0, 0, 0] is none",
        )
    placed = SceneObject(
        "o", "o", "o", tuple(obj["position"]), float(obj["yaw_deg"]), tuple(obj["size"]),
        tilt=tuple(tilt),
    )
    return placed.layout()


def _placement(
    position: Sequence[float],
    size: Sequence[float],
    yaw_deg: float,
    half_room: tuple[float, float],
    wall_height: float,
    path: str,
    base: str,
    area: str = "the room",
) -> None:
    t = math.radians(yaw_deg)
    c, s = abs(math.cos(t)), abs(math.sin(t))
    # half extents of the axis-aligned box enclosing the rotated footprint (exact for a rectangle)
    half = ((size[0] * c + size[1] * s) / 2.0, (size[0] * s + size[1] * c) / 2.0)
    hint = (
        f"an object's box must lie within {area} grown by {ROOM_MARGIN:g} m on every side "
        "(position is the bottom centre, metres, floor centred on the origin)"
    )
    for axis in (0, 1):
        reach = abs(position[axis]) + half[axis]
        if not reach <= half_room[axis]:
            name = "xy"[axis]
            raise SceneError(
                f"object box reaches {name} = ±{reach:.6g} m, outside {area} "
                f"(±{half_room[axis] - ROOM_MARGIN:.6g} m)",
                path=path,
                pointer=f"{base}/position/{axis}",
                hint=hint,
            )
    bottom, top = position[2], position[2] + size[2]
    if not (bottom >= -ROOM_MARGIN and top <= wall_height + ROOM_MARGIN):
        raise SceneError(
            f"object box spans z {bottom:.6g}..{top:.6g} m, outside {area} "
            f"(0..{wall_height:.6g} m)",
            path=path,
            pointer=f"{base}/position/2",
            hint=hint,
        )
