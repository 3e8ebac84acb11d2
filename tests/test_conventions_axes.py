"""Every signed up axis, per-file conventions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.core.errors import ImportError_
from harness.scenes.importers.batch import GeneratorConventions, read_conventions
from harness.scenes.importers.conventions import (
    FRONT_AXES,
    UP_AXES,
    Conventions,
    canonical_up,
    horizontal_fronts,
    rotation,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "generator-outputs"
# a 1 x 2 x 3 box: its x, y and z extents tell which file axis became which scene axis
BOX_OBJ = "".join(f"v {x} {y} {z}\n" for x in (0, 1) for y in (0, 2) for z in (0, 3)) + \
    "f 1 2 4 3\nf 5 6 8 7\nf 1 2 6 5\nf 3 4 8 7\n"


def _vec(name: str) -> np.ndarray:
    v = np.zeros(3)
    v["xyz".index(name[-1])] = -1.0 if name.startswith("-") else 1.0
    return v


@given(st.sampled_from((*UP_AXES, "+x", "+y", "+z")), st.sampled_from(FRONT_AXES))
def test_every_signed_up_axis_goes_to_z_and_front_to_minus_y(up: str, front: str) -> None:
    if front[-1] == up[-1]:
        return
    r = rotation(canonical_up(up), front)
    assert np.allclose(r @ _vec(up), (0, 0, 1)) and np.allclose(r @ _vec(front), (0, -1, 0))
    assert np.linalg.det(r) == pytest.approx(1.0) and np.allclose(r @ r.T, np.eye(3))


@given(st.sampled_from(("gltf", "obj", "ply", "stl", "usd")), st.sampled_from(UP_AXES))
def test_resolved_front_is_always_horizontal(fmt: str, up: str) -> None:
    res = Conventions(up=up).resolve(fmt)
    assert res.up == up and res.front in horizontal_fronts(up)


def test_default_front_follows_the_up_axis_by_the_documented_rule() -> None:
    assert Conventions(up="x").resolve("obj").front == "+z"  # OBJ's +z is horizontal for x up
    assert Conventions(up="x").resolve("ply").front == "-y"  # PLY's -y is horizontal for x up
    assert Conventions(up="-z").resolve("obj").front == "-y"  # +z lies along -z: first fallback
    assert Conventions(up="-y").resolve("obj").front == "+z"
    assert Conventions(up="y").resolve("ply").front == "+z"  # as before: -y along y -> +z
    assert Conventions.from_mapping({"up": "+x"}).up == "x"
    assert horizontal_fronts("-x") == ("+y", "-y", "+z", "-z")


def test_bad_axes_name_the_problem() -> None:
    with pytest.raises(ImportError_, match=r"unknown up axis 'w'.*one of x, y, z, -x, -y, -z"):
        Conventions(up="w").resolve("obj")
    with pytest.raises(ImportError_, match="along the up axis"):
        Conventions(up="-x", front="+x").resolve("obj")


def test_per_file_entries_lie_over_the_generator_default(tmp_path: Path) -> None:
    conv = tmp_path / "conv.json"
    conv.write_text(json.dumps({"tripo": {"up": "z", "unit": "cm",
                                          "files": {"p2": {"up": "x"}, "p3.obj": {"scale": 2}}}}))
    gen = read_conventions(conv)["tripo"]
    assert isinstance(gen, GeneratorConventions)
    assert gen.for_file(Path("p1.obj")) == Conventions(up="z", unit="cm")
    assert gen.for_file(Path("p2.obj")) == Conventions(up="x", unit="cm")
    assert gen.for_file(Path("p3.obj")) == Conventions(up="z", scale=2.0)  # scale replaces unit
    assert gen.unused([Path("p1.obj"), Path("p3.obj")]) == ["p2"]
    conv.write_text(json.dumps({"tripo": {"files": {"p2": {"up": "q"}}}}))
    with pytest.raises(ImportError_) as info:
        read_conventions(conv)
    assert "unknown up axis 'q'" in str(info.value) and "/tripo/files/p2" in str(info.value)
    conv.write_text(json.dumps({"tripo": {"files": ["p2"]}}))
    with pytest.raises(ImportError_, match="'files' must map"):
        read_conventions(conv)


def _outputs(tmp_path: Path) -> tuple[Path, Path]:
    gens = tmp_path / "outputs"
    (gens / "tripo").mkdir(parents=True)
    for pid in ("p1", "p2"):
        (gens / "tripo" / f"{pid}.obj").write_text(BOX_OBJ)
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({"p1": "a box", "p2": "a box on its side"}))
    return gens, prompts


def test_import_scenes_applies_per_file_conventions(tmp_path: Path, capsys) -> None:
    """Regression: conventions were one per generator and up was y or z only, so one x-up
    file among y-up files could not be stood upright."""
    gens, prompts = _outputs(tmp_path)
    conv = tmp_path / "conv.json"
    conv.write_text(json.dumps({"tripo": {"up": "y", "files": {"p2": {"up": "x", "front": "-z"}}}}))
    out = tmp_path / "set"
    assert main(["import-scenes", str(gens), "--prompts", str(prompts), "--out", str(out),
                 "--conventions", str(conv)]) == 0
    p1 = json.loads((out / "scenes/tripo/p1.json").read_text())["source"]
    p2 = json.loads((out / "scenes/tripo/p2.json").read_text())["source"]
    assert (p1["up"], p1["front"]) == ("y", "+z") and p1["size_m"] == pytest.approx([1, 3, 2])
    assert (p2["up"], p2["front"]) == ("x", "-z") and p2["size_m"][2] == pytest.approx(1)
    assert sorted(p2["size_m"]) == pytest.approx([1, 2, 3])
    conv.write_text(json.dumps({"tripo": {"files": {"p9": {"up": "x"}}}}))
    assert main(["import-scenes", str(gens), "--prompts", str(prompts), "--out",
                 str(tmp_path / "o2"), "--conventions", str(conv)]) == 2
    assert "conventions for tripo name file(s) it does not have: p9" in capsys.readouterr().err


def test_import_scene_takes_a_negative_up_axis(tmp_path: Path) -> None:
    obj = tmp_path / "m.obj"
    obj.write_text(BOX_OBJ)
    out = tmp_path / "set"
    assert main(["import-scene", str(obj), "--out", str(out), "--generator", "g",
                 "--prompt-id", "p", "--prompt", "a box", "--up=-x"]) == 0
    src = json.loads((out / "scenes/g/p.json").read_text())["source"]
    assert (src["up"], src["front"]) == ("-x", "+z")
    assert src["size_m"] == pytest.approx([2, 3, 1])  # file y -> scene x, file -z -> scene -y


@pytest.mark.skipif(not (DATA / "anik81__output_0_mesh.obj").is_file(),
                    reason="public generator outputs (shared/data/generator-outputs) absent")
def test_a_real_x_up_triposr_obj_stands_upright(tmp_path: Path) -> None:
    """TripoSR's OBJ from Anik81/2D-Image-to-3D-model-Generator is longest along file x
    (1.0 m against 0.5 m and 0.43 m): with --up x that length becomes the scene's height."""
    out = tmp_path / "set"
    assert main(["import-scene", str(DATA / "anik81__output_0_mesh.obj"), "--out", str(out),
                 "--generator", "triposr", "--prompt-id", "p", "--prompt", "x", "--up", "x"]) == 0
    size = json.loads((out / "scenes/triposr/p.json").read_text())["source"]["size_m"]
    assert size[2] == pytest.approx(1.005, abs=2e-3) and size[2] == max(size)


def _imported_box(tmp_path: Path, *conv: str):
    from harness.render.scene_inputs import load_scene_file

    tmp_path.mkdir(parents=True, exist_ok=True)
    obj = tmp_path / "m.obj"
    obj.write_text(BOX_OBJ)
    out = tmp_path / "set"
    assert main(["import-scene", str(obj), "--out", str(out), "--generator", "g", "--prompt-id", "p",
                 "--prompt", "a box", *conv]) == 0
    return load_scene_file(out / "scenes/g/p.json", out)


def test_oriented_scene_shows_what_each_convention_would_import(tmp_path: Path) -> None:
    """Each of the 24 candidates tilts the imported box to the extents a direct import with
    that convention gives (|rotation(U, F)| @ the file's 1 x 2 x 3), resting on the ground;
    the imported convention itself leaves the box as it is."""
    from harness.scenes.importers.orientations import candidates, oriented_scene

    scene, _ = _imported_box(tmp_path)
    pairs = candidates()
    assert len(pairs) == 24 and len(set(pairs)) == 24
    file_extent = np.array([1.0, 2.0, 3.0])
    for up, front in pairs:
        shown = oriented_scene(scene, up, front)
        corners = shown.objects[0].corners()
        extent = corners.max(0) - corners.min(0)
        assert extent == pytest.approx(np.abs(rotation(up, front)) @ file_extent, abs=1e-9), (up, front)
        assert corners[:, 2].min() == pytest.approx(0.0, abs=1e-12)
        assert (shown.source["up"], shown.source["front"]) == (up, front)
    same = oriented_scene(scene, "y", "+z").objects[0].corners()
    assert same == pytest.approx(scene.objects[0].corners(), abs=1e-9)
    direct, _ = _imported_box(tmp_path / "b", "--up=-x", "--front", "+y")
    tilted = oriented_scene(scene, "-x", "+y").objects[0].corners()
    assert tilted.max(0) - tilted.min(0) == pytest.approx(direct.source["size_m"], abs=1e-9)


def test_orientations_need_an_imported_object_scene(tmp_path: Path, capsys) -> None:
    from harness.scenes.importers.orientations import oriented_scene

    scene, _ = _imported_box(tmp_path)
    from dataclasses import replace

    with pytest.raises(Exception, match="needs an imported object scene"):
        oriented_scene(replace(scene, source=None), "x", "+y")
    from harness.core.paths import BUNDLED_SCENES

    assert main(["contact-sheet", "--scenes", str(BUNDLED_SCENES), "--orientations",
                 "--out", str(tmp_path / "x.png")]) == 2
    assert "no imported object scene in the set to orient" in capsys.readouterr().err


@pytest.mark.slow
def test_orientation_sheet_renders_24_labelled_tiles(tmp_path: Path, capsys) -> None:
    """A real render: 24 tiles at 32 px, 1 sample; the imported tile is outlined in yellow."""
    from PIL import Image

    _imported_box(tmp_path)
    out = tmp_path / "o.png"
    assert main(["contact-sheet", str(tmp_path / "set/scenes/g/p.json"), "--orientations",
                 "--profile", "smoke", "--tile", "64", "--size", "32", "--samples", "1",
                 "--out", str(out), "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "in 24 orientations (imported as up y, front +z: outlined), 24 rendered" in capsys.readouterr().out
    # a scene set: one sheet per imported scene, named after it; the renders come from the cache
    assert main(["contact-sheet", "--scenes", str(tmp_path / "set"), "--orientations",
                 "--profile", "smoke", "--tile", "64", "--size", "32", "--samples", "1",
                 "--out", str(tmp_path / "s.png"), "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "s-g-p.png: g__p in 24 orientations" in capsys.readouterr().out.replace(str(tmp_path) + "/", "")
    assert (tmp_path / "s-g-p.png").read_bytes() == out.read_bytes()
    img = np.asarray(Image.open(out).convert("RGB"))
    assert img.shape == (6 * (64 + 14), 60 + 4 * 64, 3)
    # the yellow outline sits on the row of up y (third) and the column of front +z
    row, col = 2, [f for f in ("+x", "-x", "+z", "-z")].index("+z")
    x0, y0 = 60 + col * 64, row * 78
    assert tuple(img[y0 + 40, x0]) == (255, 210, 0)
