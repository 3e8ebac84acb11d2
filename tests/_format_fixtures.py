"""Build OBJ, PLY, STL and USD fixtures with Blender's own exporters, and a 3DGS splat PLY
with numpy: ``python tests/_format_fixtures.py OUT``.

Run in a child process (it resets Blender). Writes into OUT:

* ``red.obj`` — a 0.5 m cube with a red per-vertex colour attribute (``v x y z r g b``);
* ``green.ply`` — the same cube, green vertex colours (binary PLY, ``red green blue``);
* ``blue_points.ply`` — 600 blue points on a 0.5 m sphere, no faces;
* ``yellow.usdc`` / ``.usda`` / ``.usdz`` — a yellow cube (material base colour);
* ``grey.stl`` — the cube, no colour;
* ``standee_zup.obj`` — a 0.6 x 0.3 x 1.2 m upright two-slab standee written z up, its red
  front slab towards file +x and a blue back slab (``--up z --front +x``);
* ``standee_yup.ply`` — the same standee written y up facing file -z (``--up y --front -z``),
  the Stable Fast 3D convention;
* ``splats.ply`` — 40 synthetic 3D Gaussian splats (SH degree 0) in a thin layer;
* ``truth.json`` — the sRGB colour of each coloured file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import bpy
import numpy as np

RED, GREEN, BLUE, YELLOW = (0.8, 0.15, 0.1), (0.2, 0.7, 0.2), (0.15, 0.3, 0.85), (0.85, 0.7, 0.1)


def _reset() -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)


def _lin(c):
    c = np.asarray(c, dtype=float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _mesh(name: str, verts, faces, rgb=None, material_rgb=None):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(v) for v in verts], [], [tuple(f) for f in faces])
    mesh.update()
    if rgb is not None:
        cols = np.asarray(rgb, dtype=float).reshape(-1, 3)
        if len(cols) == 1:
            cols = np.repeat(cols, len(verts), axis=0)
        attr = mesh.color_attributes.new("Col", "FLOAT_COLOR", "POINT")
        rgba = np.concatenate([_lin(cols), np.ones((len(cols), 1))], axis=1)
        attr.data.foreach_set("color", rgba.astype(np.float32).ravel())
    if material_rgb is not None:
        mat = bpy.data.materials.new(f"{name}_mat")
        tree = mat.node_tree
        if tree is None:
            mat.use_nodes = True
            tree = mat.node_tree
        bsdf = next(n for n in tree.nodes if n.bl_idname == "ShaderNodeBsdfPrincipled")
        bsdf.inputs["Base Color"].default_value = (*_lin(material_rgb), 1.0)
        mesh.materials.append(mat)
    ob = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def _box(lo, hi):
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    verts = [[(hi if (i >> k) & 1 else lo)[k] for k in range(3)] for i in range(8)]
    faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    return np.asarray(verts), faces


def _cube(name: str, **kw):
    v, f = _box((-0.25, -0.25, 0.0), (0.25, 0.25, 0.5))
    return _mesh(name, v, f, **kw)


def _select_only(ob) -> None:
    bpy.ops.object.select_all(action="DESELECT")
    ob.select_set(True)
    bpy.context.view_layer.objects.active = ob


def _standee(axes: np.ndarray):
    """Front slab red at local -y, back slab blue at +y (z up, facing -y), mapped into file
    coordinates by ``axes`` (3x3, file = axes @ local)."""
    verts, faces, cols = [], [], []
    for lo, hi, rgb in (((-0.3, -0.15, 0.0), (0.3, -0.1, 1.2), RED),
                        ((-0.3, 0.1, 0.0), (0.3, 0.15, 1.2), BLUE)):
        v, f = _box(lo, hi)
        faces += [tuple(i + len(verts) for i in face) for face in f]
        verts += [axes @ p for p in v]
        cols += [rgb] * len(v)
    return verts, faces, cols


def _splats(path: Path) -> None:
    rng = np.random.default_rng(7)
    n = 40
    xy = rng.uniform(-0.5, 0.5, size=(n, 2))
    z = rng.uniform(0.0, 0.02, size=n)
    scale = np.log(np.stack([rng.uniform(0.04, 0.09, n), rng.uniform(0.02, 0.05, n),
                             np.full(n, 0.01)], axis=1))
    theta = rng.uniform(0, np.pi, n)  # rotation about z: (w, x, y, z)
    rot = np.stack([np.cos(theta / 2), np.zeros(n), np.zeros(n), np.sin(theta / 2)], axis=1)
    rgb = np.where(rng.uniform(size=(n, 1)) < 0.5, np.array(RED), np.array(BLUE))
    f_dc = (rgb - 0.5) / 0.28209479177387814
    opacity = np.log(0.8 / 0.2) * np.ones(n)  # sigmoid -> 0.8
    names = ["x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2", "opacity",
             "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"]
    table = np.column_stack([xy, z, np.zeros((n, 3)), f_dc, opacity, scale, rot]).astype("<f4")
    header = "ply\nformat binary_little_endian 1.0\n" + f"element vertex {n}\n" + "".join(
        f"property float {p}\n" for p in names) + "end_header\n"
    path.write_bytes(header.encode("ascii") + table.tobytes())


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    _reset()
    ob = _cube("red", rgb=RED)
    _select_only(ob)
    bpy.ops.wm.obj_export(filepath=str(out / "red.obj"), export_selected_objects=True,
                          export_colors=True, export_materials=False)
    _reset()
    ob = _cube("green", rgb=GREEN)
    _select_only(ob)
    bpy.ops.wm.ply_export(filepath=str(out / "green.ply"), export_selected_objects=True,
                          export_colors="SRGB", ascii_format=False)
    _reset()
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(600, 3))
    pts = 0.25 * pts / np.linalg.norm(pts, axis=1, keepdims=True) + (0, 0, 0.25)
    ob = _mesh("points", pts, [], rgb=BLUE)
    _select_only(ob)
    bpy.ops.wm.ply_export(filepath=str(out / "blue_points.ply"), export_selected_objects=True,
                          export_colors="SRGB", ascii_format=False)
    for suffix in ("usdc", "usda", "usdz"):
        _reset()
        ob = _cube("yellow", material_rgb=YELLOW)
        _select_only(ob)
        bpy.ops.wm.usd_export(filepath=str(out / f"yellow.{suffix}"), selected_objects_only=True,
                              export_materials=True)
    _reset()
    ob = _cube("grey")
    _select_only(ob)
    bpy.ops.wm.stl_export(filepath=str(out / "grey.stl"), export_selected_objects=True)
    # the standee, facing +x, z up: local -y (front) -> file +x
    _reset()
    to_zup_xfront = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    ob = _mesh("standee", *_standee(to_zup_xfront)[:2], rgb=_standee(to_zup_xfront)[2])
    _select_only(ob)
    bpy.ops.wm.obj_export(filepath=str(out / "standee_zup.obj"), export_selected_objects=True,
                          export_colors=True, export_materials=False,
                          forward_axis="Y", up_axis="Z")  # no conversion: file = Blender
    # y up, facing -z: local z (up) -> file +y, local -y (front) -> file -z
    _reset()
    to_yup_negz = np.array([[-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    assert np.allclose(to_yup_negz @ (0, -1, 0), (0, 0, -1))
    verts, faces, cols = _standee(to_yup_negz)
    ob = _mesh("standee", verts, faces, rgb=cols)
    _select_only(ob)
    bpy.ops.wm.ply_export(filepath=str(out / "standee_yup.ply"), export_selected_objects=True,
                          export_colors="SRGB", ascii_format=False,
                          forward_axis="Y", up_axis="Z")
    _splats(out / "splats.ply")
    truth = {"red.obj": RED, "green.ply": GREEN, "blue_points.ply": BLUE,
             "yellow.usdc": YELLOW, "yellow.usda": YELLOW, "yellow.usdz": YELLOW, "standee_front": RED}
    (out / "truth.json").write_text(json.dumps(truth))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
