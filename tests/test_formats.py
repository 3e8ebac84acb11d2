"""Format detection by content, conventions, PLY reading, and the import commands' handling of
unsupported and skipped files (no Blender: OBJ is measured in Python)."""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.core.errors import ImportError_
from harness.scenes.fileformats import (
    CONVERTER,
    SPLAT_PROPERTIES,
    SUPPORTED,
    detect_format,
    ply_header,
    ply_min_body_bytes,
    read_ply_vertices,
)
from harness.scenes.importers.common import Y_UP_TO_Z_UP
from harness.scenes.importers.conventions import (
    FRONT_AXES,
    Conventions,
    display_scale,
    rotation,
)

CUBE_OBJ = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 2\nv 1 0 2\nv 1 1 2\nv 0 1 2\nf 1 2 3 4\nf 5 6 7 8\n"


def _ply(path: Path, props: list[str], rows: np.ndarray, faces: int = 0) -> Path:
    header = ["ply", "format binary_little_endian 1.0", f"element vertex {len(rows)}"]
    header += [f"property float {p}" for p in props]
    if faces:
        header += [f"element face {faces}", "property list uchar int vertex_index"]
    header.append("end_header")
    body = rows.astype("<f4").tobytes()
    if faces:
        body += b"".join(struct.pack("<Biii", 3, 0, 1, 2) for _ in range(faces))
    path.write_bytes(("\n".join(header) + "\n").encode() + body)
    return path


SPLAT_PROPS = ["x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1",
               "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"]


def test_detects_each_format_by_content(tmp_path: Path) -> None:
    glb = tmp_path / "a.glb"
    glb.write_bytes(b"glTF" + struct.pack("<II", 2, 12))
    gltf = tmp_path / "a.gltf"
    gltf.write_text(json.dumps({"asset": {"version": "2.0"}}))
    state = tmp_path / "s.json"
    state.write_text(json.dumps({"format": "sceneState", "scene": {}}))
    obj = tmp_path / "m.obj"
    obj.write_text("# trimesh\n" + CUBE_OBJ)
    mesh = _ply(tmp_path / "m.ply", ["x", "y", "z"], np.zeros((3, 3)), faces=1)
    points = _ply(tmp_path / "p.ply", ["x", "y", "z"], np.zeros((3, 3)))
    splats = _ply(tmp_path / "g.ply", SPLAT_PROPS, np.zeros((2, len(SPLAT_PROPS))))
    stl = tmp_path / "m.stl"
    stl.write_bytes(b"\0" * 80 + struct.pack("<I", 1) + b"\0" * 50)
    ascii_stl = tmp_path / "a.stl"
    ascii_stl.write_text("solid x\nfacet normal 0 0 1\nendfacet\nendsolid x\n")
    usda = tmp_path / "m.usda"
    usda.write_text('#usda 1.0\n(upAxis = "Z")\n')
    usdc = tmp_path / "m.usdc"
    usdc.write_bytes(b"PXR-USDC" + b"\0" * 80)
    usdz = tmp_path / "m.usdz"
    with zipfile.ZipFile(usdz, "w") as z:
        z.writestr("model.usdc", b"PXR-USDC" + b"\0" * 80)
    got = {p.name: (d.format, d.variant) for p in (glb, gltf, state, obj, mesh, points, splats,
                                                    stl, ascii_stl, usda, usdc, usdz)
           for d in [detect_format(p)]}
    assert got == {
        "a.glb": ("gltf", None), "a.gltf": ("gltf", None), "s.json": ("scenestate", None),
        "m.obj": ("obj", None), "m.ply": ("ply", "mesh"), "p.ply": ("ply", "points"),
        "g.ply": ("ply", "splats"), "m.stl": ("stl", None), "a.stl": ("stl", None),
        "m.usda": ("usd", None), "m.usdc": ("usd", None), "m.usdz": ("usd", None),
    }
    # content wins over a missing or odd extension
    renamed = tmp_path / "download"
    renamed.write_bytes(splats.read_bytes())
    assert detect_format(renamed).variant == "splats"


def test_unsupported_and_mismatched_files_are_refused_in_one_line(tmp_path: Path) -> None:
    fbx = tmp_path / "model.fbx"
    fbx.write_bytes(b"Kaydara FBX Binary  \0\x1a\0" + b"\0" * 64)
    with pytest.raises(ImportError_) as info:
        detect_format(fbx)
    text = str(info.value)
    assert "\n" not in text and ".fbx" in text and SUPPORTED in text and CONVERTER in text
    fake = tmp_path / "mesh.ply"
    fake.write_bytes(b"glTF" + b"\0" * 16)
    with pytest.raises(ImportError_, match=r"named \.ply but its content is glTF"):
        detect_format(fake)
    broken = tmp_path / "broken.glb"
    broken.write_bytes(b"not a glb")
    with pytest.raises(ImportError_, match=r"named \.glb but its content is not GLTF"):
        detect_format(broken)


def test_ply_reader_reads_binary_and_ascii(tmp_path: Path) -> None:
    rows = np.arange(12, dtype=float).reshape(4, 3)
    table = read_ply_vertices(_ply(tmp_path / "b.ply", ["x", "y", "z"], rows))
    assert table["y"].tolist() == [1.0, 4.0, 7.0, 10.0]
    text = tmp_path / "a.ply"
    text.write_text("ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty uchar red\n"
                    "end_header\n0.5 255\n-1 3\n")
    assert read_ply_vertices(text)["red"].tolist() == [255.0, 3.0]
    short = tmp_path / "s.ply"
    short.write_bytes(_ply(tmp_path / "t.ply", ["x"], np.zeros((4, 1))).read_bytes()[:-4])
    with pytest.raises(ImportError_, match="declares vertex 4: at least 16 bytes"):
        read_ply_vertices(short)
    head = ply_header(_ply(tmp_path / "g.ply", SPLAT_PROPS + [f"f_rest_{i}" for i in range(45)],
                           np.zeros((1, len(SPLAT_PROPS) + 45))).read_bytes())
    assert head.variant == "splats" and head.sh_degree == 3


def test_splat_parameters_follow_the_3dgs_conventions() -> None:
    from harness.render.meshformats import SH_C0, splat_arrays, splat_bounds

    table = {p: np.zeros(2) for p in SPLAT_PROPS}
    table["f_dc_0"] = np.array([0.5 / SH_C0, -0.5 / SH_C0])  # red 1 and 0
    table["opacity"] = np.array([0.0, np.log(3.0)])  # sigmoid: 0.5, 0.75
    table["scale_0"] = np.log([0.1, 0.2])
    table["scale_1"] = table["scale_2"] = np.log([0.01, 0.01])
    table["rot_0"] = np.array([1.0, np.cos(np.pi / 4)])
    table["rot_3"] = np.array([0.0, np.sin(np.pi / 4)])  # second: 90 deg about z
    s = splat_arrays(table)
    assert s["rgb"][:, 0].tolist() == pytest.approx([1.0, 0.0])
    assert s["alpha"].tolist() == pytest.approx([0.5, 0.75])
    assert s["sigma"][:, 0].tolist() == pytest.approx([0.1, 0.2])
    _lo, hi = splat_bounds(s)
    # the second splat's long axis (0.2 sqrt 2) turned onto y
    assert hi[1] == pytest.approx(0.2 * np.sqrt(2)) and hi[0] == pytest.approx(0.1 * np.sqrt(2))


def test_convention_rotations() -> None:
    assert np.array_equal(rotation("y", "+z"), Y_UP_TO_Z_UP)  # glTF/OBJ default
    assert np.array_equal(rotation("z", "-y"), np.eye(3))  # the scene frame itself
    assert Conventions().resolve("gltf").rotation() == pytest.approx(np.eye(3))
    assert Conventions(front="-z").resolve("obj").front == "-z"
    assert Conventions(up="z").resolve("obj").front == "-y"  # default front follows the up axis
    with pytest.raises(ImportError_, match="along the up axis"):
        Conventions(up="y", front="-y").resolve("obj")
    with pytest.raises(ImportError_, match="not both"):
        Conventions(unit="mm", scale=0.001).resolve("obj")
    assert Conventions(unit="in").resolve("stl").metres_per_unit == 0.0254


@given(st.sampled_from(["y", "z"]), st.sampled_from(FRONT_AXES))
def test_rotation_sends_up_to_z_and_front_to_minus_y(up: str, front: str) -> None:
    if front[-1] == up:
        return
    r = rotation(up, front)
    u = np.zeros(3)
    u["xyz".index(up)] = 1
    f = np.zeros(3)
    f["xyz".index(front[-1])] = -1.0 if front[0] == "-" else 1.0
    assert np.allclose(r @ u, (0, 0, 1)) and np.allclose(r @ f, (0, -1, 0))
    assert np.linalg.det(r) == pytest.approx(1.0)


def test_display_scale_accepts_any_size_from_a_micrometre_to_a_thousand_km() -> None:
    assert display_scale(np.array([0.5, 0.2, 1.0]), path="x") == 1.0
    assert display_scale(np.array([166.0, 120.0, 40.0]), path="x") == pytest.approx(1 / 166)
    assert display_scale(np.array([2e-6, 1e-6, 1e-6]), path="x") == pytest.approx(5e5)
    for bad in (np.array([2e6, 1, 1]), np.array([1e-7, 1e-7, 0]), np.array([np.inf, 1, 1])):
        with pytest.raises(ImportError_, match=r"the object is .* across"):
            display_scale(bad, path="x")


def _import(args: list[str]) -> int:
    return main(["import-scene", *args])


def test_import_scene_takes_obj_and_records_its_conventions(tmp_path: Path) -> None:
    """Regression: import-scene sent every non-glTF file to the sceneState reader ("needs
    --asset-root", then "malformed sceneState JSON")."""
    obj = tmp_path / "m.obj"
    obj.write_text(CUBE_OBJ)
    out = tmp_path / "set"
    assert _import([str(obj), "--out", str(out), "--generator", "g", "--prompt-id", "p",
                    "--prompt", "a box", "--up", "z", "--unit", "cm"]) == 0
    doc = json.loads((out / "scenes/g/p.json").read_text())
    assert doc["source"] == {
        "format": "obj", "up": "z", "front": "-y", "unit": "cm", "metres_per_unit": 0.01,
        "size_m": [0.01, 0.01, 0.02], "display_scale": 1.0, "colour": "none",
        "note": "the file has no colours or materials: rendered in the default grey",
    }
    assert doc["objects"][0]["size"] == pytest.approx([0.01, 0.01, 0.02])


def test_import_scene_shows_huge_and_tiny_objects_at_display_scale(tmp_path: Path) -> None:
    obj = tmp_path / "m.obj"
    obj.write_text(CUBE_OBJ)
    out = tmp_path / "set"
    assert _import([str(obj), "--out", str(out), "--generator", "g", "--prompt-id", "p",
                    "--prompt", "a city", "--up", "z", "--scale", "100"]) == 0
    doc = json.loads((out / "scenes/g/p.json").read_text())
    assert doc["source"]["size_m"] == [100.0, 100.0, 200.0]
    assert doc["source"]["display_scale"] == pytest.approx(1 / 200)
    assert max(doc["objects"][0]["size"]) == pytest.approx(1.0)


def test_import_scene_refuses_an_unsupported_file_in_one_line(tmp_path: Path, capsys) -> None:
    fbx = tmp_path / "m.fbx"
    fbx.write_bytes(b"Kaydara FBX Binary  \0" + b"\0" * 40)
    assert _import([str(fbx), "--out", str(tmp_path / "o"), "--generator", "g",
                    "--prompt-id", "p", "--prompt", "x"]) == 2
    err = capsys.readouterr().err
    assert "unsupported format" in err and "STL" in err and "assimp" in err
    assert not (tmp_path / "o").exists()


def test_object_limit_errors_speak_of_the_object(tmp_path: Path) -> None:
    from harness.core.errors import SceneError
    from harness.scenes.limits import check_limits

    doc = {"kind": "object", "room": {"size": [300.0, 1.0], "wall_height": 1.0},
           "objects": [{"position": [0, 0, 0], "size": [1, 1, 1], "yaw_deg": 0}]}
    with pytest.raises(SceneError) as info:
        check_limits(doc, "s.json")
    assert "room" not in info.value.what and "object scene ground size" in info.value.what


def _batch(tmp_path: Path) -> tuple[Path, Path]:
    gens = tmp_path / "outputs"
    (gens / "good").mkdir(parents=True)
    (gens / "only-odd").mkdir()
    (gens / "good" / "p1.obj").write_text(CUBE_OBJ)
    (gens / "good" / "p1.png").write_bytes(b"\x89PNG\r\n")
    (gens / "only-odd" / "p1.fbx").write_bytes(b"Kaydara FBX Binary  \0" + b"\0" * 40)
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({"p1": "a box", "@conventions": {"good": {"up": "z"}}}))
    return gens, prompts


def test_import_scenes_reports_skips_and_fails_on_an_empty_generator(tmp_path: Path,
                                                                      capsys) -> None:
    """Regression: a generator folder of unsupported files produced no line and exit 0."""
    gens, prompts = _batch(tmp_path)
    out = tmp_path / "set"
    assert main(["import-scenes", str(gens), "--prompts", str(prompts), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "only-odd: the generator folder yields no scene (p1.fbx: unsupported format" in err
    assert not out.exists()
    assert main(["import-scenes", str(gens), "--prompts", str(prompts), "--out", str(out),
                 "--allow-missing"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "good: 1 scene(s)" in lines and "only-odd: 0 scene(s) (allowed by --allow-missing)" in lines
    assert any(ln.startswith("skipped ") and "p1.png: a companion file" in ln for ln in lines)
    assert any(ln.startswith("skipped ") and "p1.fbx: unsupported format" in ln for ln in lines)
    doc = json.loads((out / "scenes/good/p1.json").read_text())
    assert doc["source"]["up"] == "z"  # the generator's convention from the prompts file


def test_import_scenes_conventions_file_is_checked(tmp_path: Path, capsys) -> None:
    gens, prompts = _batch(tmp_path)
    conv = tmp_path / "conv.json"
    conv.write_text(json.dumps({"good": {"up": "w"}}))
    assert main(["import-scenes", str(gens), "--prompts", str(prompts), "--out",
                 str(tmp_path / "o"), "--conventions", str(conv), "--allow-missing"]) == 2
    assert "unknown up axis 'w'" in capsys.readouterr().err


def test_axis_overlay_marks_up_and_front_where_the_camera_sees_them() -> None:
    """The triad of an object at the object c0 (camera on the -y side, 30° up): +z ends above
    the centre, +x to its right, and the front arrow points down the image (towards the
    camera); a generated object yawed 90° faces +x, so its arrow points right."""
    from dataclasses import replace

    from harness.protocol.profiles import get_profile
    from harness.render.axes_overlay import draw_axes, object_marks
    from harness.scenes.model import Room, Scene, SceneObject

    obj = SceneObject("o", "o", "a.obj", (0.0, 0.0, 0.0), 0.0, (1.0, 1.0, 1.0))
    scene = Scene("s", "g", "p", "x", "t", Room((2.0, 2.0), 1.0), (obj,), schema="t3d-scene/2",
                  kind="object", source={"format": "obj"})
    cfg = get_profile("smoke").for_scene_kind("object").c0
    (marks,) = object_marks(scene, cfg)
    o, (x, _, z), f = marks["origin"], marks["axes"], marks["front"]
    assert z[1] < o[1] - 5 and abs(z[0] - o[0]) < 1  # up is up
    assert x[0] > o[0] + 5  # +x to the right
    assert f[1] > o[1] + 5 and abs(f[0] - o[0]) < 1  # the front comes towards the camera
    turned = replace(scene, source=None, objects=(replace(obj, yaw_deg=90.0),))
    (marks,) = object_marks(turned, cfg)
    assert marks["front"][0] > marks["origin"][0] + 5  # yaw 90: front -y turned to +x
    from PIL import Image

    image = draw_axes(Image.new("RGB", (64, 64)), scene, cfg)
    assert np.asarray(image).any()


def test_lighting_is_not_applicable_to_splat_scenes() -> None:
    """A splat's colour is baked radiance: the plan has no lighting rows for it and says so
    (manifest, coverage check, card), instead of measuring a null effect; other scenes keep
    every lighting row."""
    from types import SimpleNamespace

    import pandas as pd

    from harness.cards.assemble import not_applicable_notes
    from harness.measure.plan import build_plan
    from harness.protocol.profiles import get_profile
    from harness.report.validation import check_coverage
    from harness.scenes.model import Room, Scene, SceneObject

    def scene(gen: str, variant: str) -> Scene:
        obj = SceneObject("o", "o", "a.ply", (0.0, 0.0, 0.0), 0.0, (1.0, 1.0, 1.0))
        return Scene(f"{gen}.p1", gen, "p1", "a donut", "t", Room((2.0, 2.0), 1.0), (obj,),
                     schema="t3d-scene/2", kind="object",
                     source={"format": "ply", "variant": variant})

    scenes = (scene("gs", "splats"), scene("mesh", "mesh"))
    sset = SimpleNamespace(root=Path("."), scenes=scenes, identity=lambda i: i)
    profile = get_profile("smoke").for_scene_kind("object")
    assert profile.levels.get("lighting"), "the smoke profile varies lighting"
    plan = build_plan(sset, profile)
    lighting = {(r.generator, r.level) for r in plan.rows if r.factor == "lighting"}
    assert {g for g, _ in lighting} == {"mesh"}
    assert plan.factors_not_applicable == {"gs/p1": ["lighting"]}
    records = pd.DataFrame(
        [{"evaluator": "e", "generator": r.generator, "prompt_id": r.prompt_id,
          "scene_sha256": r.group, "factor": r.factor, "level": r.level, "caption": r.caption,
          "score": 0.5, "status": "ok", "error": ""} for r in plan.rows])
    expected = (dict(profile.levels), ())
    assert any("no lighting=" in p for p in check_coverage(records, expected))
    assert not [p for p in check_coverage(records, expected, None, (), plan.factors_not_applicable)
                if "lighting" in p]
    (note,) = not_applicable_notes({"lighting": 1})
    assert note.startswith("lighting effect: not applicable to 1 scene(s)")


@given(st.lists(st.tuples(st.sampled_from(["v", "vn", "vt", "f", "  v", "\tvn", "#"]),
                          st.lists(st.floats(-9, 9, allow_nan=False).map(lambda x: f"{x:.3f}"),
                                   min_size=0, max_size=6)), max_size=12),
       st.sampled_from([(0, 1, 2), (1, 2, 0), (2, 0, 1)]), st.sampled_from([1.0, -1.0]))
def test_fast_obj_rebase_writes_the_same_bytes(lines, order, sign) -> None:
    """``meshobject.rebase_obj`` (permutation read once) equals ``scenestate._rebase_obj``."""
    from harness.scenes.importers.meshobject import rebase_obj
    from harness.scenes.importers.scenestate import _rebase_obj

    raw = "\n".join(" ".join([head, *nums]) for head, nums in lines).encode()
    axes = np.zeros((3, 3))
    for row, k in enumerate(order):
        axes[row, k] = sign if row else 1.0
    axes[2] *= sign  # keep a right-handed signed permutation
    assert rebase_obj(raw, axes) == _rebase_obj(raw, axes)


@pytest.mark.parametrize("variant", ["mesh", "splats", "ascii"])
def test_a_ply_header_declaring_more_data_than_the_file_holds_is_refused_before_blender(tmp_path, variant):
    """Regression: a 300-byte PLY declaring 2^31 - 1 vertices reached Blender, which died
    asking for 32 GB; the header's declared size is now checked against the file's bytes."""
    props = ["x", "y", "z", "red", "green", "blue"]
    if variant == "splats":
        props = ["x", "y", "z", *SPLAT_PROPERTIES]
    fmt = "ascii" if variant == "ascii" else "binary_little_endian"
    kinds = {"red": "uchar", "green": "uchar", "blue": "uchar"}
    header = "".join(f"property {kinds.get(p, 'float')} {p}\n" for p in props)
    faces = "element face 1\nproperty list uchar int vertex_indices\n" if variant == "mesh" else ""
    path = tmp_path / "lies.ply"
    path.write_bytes(
        f"ply\nformat {fmt} 1.0\nelement vertex 2147483647\n{header}{faces}end_header\n".encode()
        + b"\0" * 36
    )
    with pytest.raises(ImportError_, match=r"declares vertex 2147483647.*but the file holds 36"):
        detect_format(path)


def test_ply_minimum_body_is_hand_computed():
    """3 float + 3 uchar = 15 bytes a vertex; a face row's list count alone is 1 byte."""
    header = ply_header(
        b"ply\nformat binary_little_endian 1.0\nelement vertex 4\nproperty float x\nproperty float y\n"
        b"property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\n"
        b"element face 2\nproperty list uchar int vertex_indices\nend_header\n"
    )
    assert ply_min_body_bytes(header) == 4 * 15 + 2 * 1
