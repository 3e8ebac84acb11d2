"""A sceneState (SceneEval) scene with known placements, for the importer tests.

:data:`TRUTH` lists the objects in scene-model terms (room 4 x 6 m centred at the origin,
floor z = 0); :func:`write_scenestate` encodes them the way the source format does
(column-major 4x4, rooms starting at the origin corner) next to tiny OBJ assets.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from harness.scenes.importers.common import Y_UP_TO_Z_UP


def rot_z(deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    m = np.eye(4)
    m[:2, :2] = [[c, -s], [s, c]]
    return m


def translate(v) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = v
    return m


def scale(v) -> np.ndarray:
    return np.diag([*v, 1.0])


# local y-up -> local z-up turn (+90° about x), as a 4x4
Y_TO_Z = np.eye(4)
Y_TO_Z[:3, :3] = Y_UP_TO_Z_UP


def transformed_corners(matrix, lo, hi) -> np.ndarray:
    local = np.array(
        [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    )
    return local @ matrix[:3, :3].T + matrix[:3, 3]


def obj_text(lo, hi) -> str:
    """An OBJ box spanning [lo, hi] (8 vertices, 12 triangles)."""
    verts = [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    faces = [(1, 2, 4), (1, 4, 3), (5, 7, 8), (5, 8, 6), (1, 5, 6), (1, 6, 2)]
    faces += [(3, 4, 8), (3, 8, 7), (1, 3, 7), (1, 7, 5), (2, 6, 8), (2, 8, 4)]
    lines = ["mtllib box.mtl"] + [f"v {x} {y} {z}" for x, y, z in verts]
    lines += ["vn 0 1 0", "usemtl wood"] + [f"f {a} {b} {c}" for a, b, c in faces]
    return "\n".join(lines) + "\n"


# Truth in scene-model terms (room 4 x 6 m centred at the origin, floor z = 0).
TRUTH = [
    # id, label, source.asset, position, yaw, size, asset y-up?
    ("bed", "bed", "test.bed01", (0.5, 1.0, 0.0), 90.0, (1.6, 2.0, 0.5), False),
    ("lamp", "lamp", "objaverse.lamp02", (-1.5, -2.5, 0.0), 0.0, (0.3, 0.3, 1.2), True),
    ("chair", "chair", "test.bed01", (1.0, -1.0, 0.0), -135.0, (0.8, 1.0, 0.25), False),
]
BED_BOX = ((-0.5, -1.0, 0.0), (0.5, 1.0, 1.0))  # asset units, z-up, bottom-centred
LAMP_BOX = ((-0.1, 0.0, -0.1), (0.1, 1.0, 0.1))  # y-up asset: height along +y


def scenestate_matrix(position, yaw, size, box, y_up, offset) -> np.ndarray:
    lo, hi = np.array(box[0]), np.array(box[1])
    if y_up:  # express the y-up box in z-up terms first
        rebase = Y_TO_Z
        corners = transformed_corners(rebase, lo, hi)
        lo, hi = corners.min(axis=0), corners.max(axis=0)
    else:
        rebase = np.eye(4)
    extent = hi - lo
    centre_bottom = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]])
    return (
        translate(np.array(position) + offset)
        @ rot_z(yaw)
        @ scale(np.array(size) / extent)
        @ translate(-centre_bottom)
        @ rebase
    )


def write_scenestate(
    tmp: Path, *, up_y: bool = False, metadata: dict | None = None, version="scene@1.0.2"
):
    assets = tmp / "src_assets"
    (assets / "test").mkdir(parents=True)
    (assets / "test" / "bed01.obj").write_text(obj_text(*BED_BOX))
    (assets / "test" / "box.mtl").write_text("newmtl wood\nKd 0.5 0.3 0.1\nmap_Kd wood.png\n")
    (assets / "test" / "wood.png").write_bytes(b"\x89PNG fake")
    (assets / "objaverse" / "lamp02").mkdir(parents=True)
    (assets / "objaverse" / "lamp02" / "lamp02.obj").write_text(obj_text(*LAMP_BOX))
    offset = np.array([2.0, 3.0, 0.0])  # SceneEval rooms start at the origin corner
    objects = []
    for n, (oid, _label, model, pos, yaw, size, y_up) in enumerate(TRUTH):
        box = LAMP_BOX if y_up else BED_BOX
        m = scenestate_matrix(pos, yaw, size, box, y_up, offset)
        if up_y:  # store the world y-up: z-up world = Y_UP_TO_Z_UP @ stored
            inv = np.eye(4)
            inv[:3, :3] = Y_UP_TO_Z_UP.T
            m = inv @ m
        objects.append(
            {
                "id": oid,
                "index": n,
                "modelId": model,
                "transform": {"rows": 4, "cols": 4, "data": m.T.reshape(-1).tolist()},
            }
        )
    floor = [[0, 0, 0], [0, 6, 0], [4, 6, 0], [4, 0, 0]]
    walls = [
        {
            "id": f"wall{k}",
            "type": "Wall",
            "height": 2.8,
            "points": [floor[k], floor[(k + 1) % 4]],
            "holes": [],
        }
        for k in range(4)
    ]
    arch_up = [0, 0, 1]
    if up_y:
        floor = [[x, z, -y] for x, y, z in floor]
        for w in walls:
            w["points"] = [[x, z, -y] for x, y, z in w["points"]]
        arch_up = [0, 1, 0]
    doc = {
        "format": "sceneState",
        "scene": {
            "version": version,
            "up": {"x": 0, "y": 1, "z": 0} if up_y else [0, 0, 1],
            "front": [0, 1, 0],
            "unit": 1.0,
            "assetSource": ["test", "objaverse"],
            "arch": {
                "version": "arch@1.0.2",
                "up": arch_up,
                "elements": [*walls, {"id": "floor", "type": "Floor", "points": floor}],
            },
            "object": objects,
        },
    }
    if metadata is not None:
        doc["metadata"] = metadata
    path = tmp / "scene_0.json"
    path.write_text(json.dumps(doc))
    return path, assets
