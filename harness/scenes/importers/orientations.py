"""Candidate up/front orientations of an imported object (``contact-sheet --orientations``).

An imported object was turned at import so that the file's declared ``up`` became +z and its
``front`` faced −y (``source.up``, ``source.front``; see
:mod:`harness.scenes.importers.conventions`). Any other convention (U, F) is the same mesh
tilted by ``rotation(U, F) · rotation(up, front)ᵀ``; :func:`oriented_scene` adds that tilt
(and sets the object back on the ground), so every candidate renders from the one imported
asset without re-importing. The 24 candidates are the 6 signed up axes × the 4 fronts
perpendicular to each (:func:`candidates`), in file axes: a tile labelled ``up x, front -z``
is what ``--up x --front=-z`` imports.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.core.errors import SceneError
from harness.scenes.importers.conventions import UP_AXES, horizontal_fronts, rotation
from harness.scenes.model import Scene, quat_matrix, yaw_matrix


def candidates() -> list[tuple[str, str]]:
    """The 24 (up, front) pairs: rows of :data:`UP_AXES`, each with its 4 horizontal fronts."""
    return [(up, front) for up in UP_AXES for front in horizontal_fronts(up)]


def imported_conventions(scene: Scene) -> tuple[str, str]:
    """(up, front) the scene's object was imported with; SceneError when it has none."""
    src = scene.source or {}
    if scene.kind != "object" or "up" not in src or "front" not in src:
        raise SceneError(
            "--orientations needs an imported object scene (one whose 'source' has up and front)",
            hint="import the file with t3d-audit import-scene (glTF, OBJ, PLY, STL or USD) first",
        )
    return str(src["up"]), str(src["front"])


def _quat(matrix: np.ndarray) -> tuple[float, float, float, float]:
    """(w, x, y, z) of a rotation matrix (scipy returns x, y, z, w)."""
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(matrix).as_quat()
    return (float(w), float(x), float(y), float(z))


def oriented_scene(scene: Scene, up: str, front: str) -> Scene:
    """``scene`` with its object(s) as if imported with ``up`` and ``front``: tilted by the
    change of convention, its tilted box resting on the ground, centred where it was, and
    ``source`` naming the candidate (so the axes overlay and labels say what is shown)."""
    up0, front0 = imported_conventions(scene)
    change = rotation(up, front) @ rotation(up0, front0).T
    objects = []
    for obj in scene.objects:
        # the world turn is Rz(yaw) · R(tilt) (an OBJ asset re-based by an axis permutation
        # carries part of its import turn in its yaw): the change applies in the world frame
        yaw = yaw_matrix(obj.yaw_deg)
        old = np.eye(3) if obj.tilt is None else quat_matrix(obj.tilt)
        tilt = yaw.T @ change @ yaw @ old
        tilted = replace(obj, tilt=_quat(tilt), position=(0.0, 0.0, 0.0))
        corners = tilted.corners()
        centre_before = obj.corners().mean(0)
        lift = np.array([centre_before[0] - corners[:, 0].mean(), centre_before[1] - corners[:, 1].mean(),
                         -corners[:, 2].min()])
        objects.append(replace(tilted, position=tuple(float(v) for v in lift)))
    source = dict(scene.source or {}, up=up, front=front)
    return replace(scene, objects=tuple(objects), source=source)
