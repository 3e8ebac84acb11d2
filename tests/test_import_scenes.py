"""``t3d-audit import-scenes``: generator outputs (one folder per generator, one file per prompt)
become one scene set that ``--audit-scenes=DIR`` audits and ``contact-sheet --scenes`` shows.

Fast tests use OBJ objects and a sceneState layout (no Blender); the glTF test builds tiny GLBs
with Blender's exporter (``tests/_gltf_fixtures.py``) and renders a contact sheet (slow).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from harness.cli import main
from harness.core.errors import ImportError_, SceneError
from harness.scenes.importers.batch import read_prompts
from harness.scenes.sceneset import SceneSet
from tests._audit_project import CONFTEST
from tests._scenestate import BED_BOX, LAMP_BOX, obj_text, write_scenestate

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent
PROMPTS = {
    "p1": {"prompt": "a wooden bed", "label": "bed"},
    "p2": {"prompt": "a floor lamp", "objects": {"lamp": 1}},
    "p3": {
        "prompt": "a bedroom with a bed and a lamp",
        "labels": {"test.bed01": "bed", "objaverse.lamp02": "lamp"},  # modelId -> label
    },
}


def _generators(tmp: Path) -> tuple[Path, Path, Path]:
    """gen-a: p1, p2 as OBJ; gen-b: p1 as OBJ, p3 as sceneState. Returns (dir, prompts file, asset root)."""
    gens = tmp / "outputs"
    (gens / "gen-a").mkdir(parents=True)
    (gens / "gen-b").mkdir(parents=True)
    y_up_bed = ((-0.5, 0.0, -1.0), (0.5, 1.0, 1.0))  # OBJ is y up: 1 m tall, 2 m deep
    (gens / "gen-a" / "p1.obj").write_text(obj_text(*y_up_bed))
    (gens / "gen-a" / "p2.obj").write_text(obj_text(*LAMP_BOX))
    (gens / "gen-b" / "p1.obj").write_text(obj_text(*BED_BOX))
    state, assets = write_scenestate(tmp)
    shutil.move(state, gens / "gen-b" / "p3.json")
    prompts = tmp / "prompts.json"
    prompts.write_text(json.dumps(PROMPTS))
    return gens, prompts, assets


def _import(gens: Path, prompts: Path, out: Path, assets: Path | None = None) -> int:
    extra = ["--asset-root", str(assets)] if assets is not None else []
    return main(["import-scenes", str(gens), "--prompts", str(prompts), "--out", str(out), *extra])


def test_batch_import_writes_a_complete_scene_set(tmp_path, capsys):
    gens, prompts, assets = _generators(tmp_path)
    out = tmp_path / "set"
    assert _import(gens, prompts, out, assets) == 0
    printed = capsys.readouterr().out
    assert "gen-a: 2 scene(s); no file for 1 prompt(s): p3" in printed
    assert "gen-b: 2 scene(s); no file for 1 prompt(s): p2" in printed
    sset = SceneSet.load(out, verify=True)
    assert sorted(s.id for s in sset) == ["gen-a__p1", "gen-a__p2", "gen-b__p1", "gen-b__p3"]
    assert list(sset.generators) == ["gen-a", "gen-b"]
    assert list(sset.prompt_ids) == ["p1", "p2", "p3"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(e["path"] for e in manifest["scenes"]) == [
        "scenes/gen-a/p1.json", "scenes/gen-a/p2.json", "scenes/gen-b/p1.json", "scenes/gen-b/p3.json",
    ]
    by_id = {s.id: s for s in sset}
    bed = by_id["gen-a__p1"]
    assert bed.prompt == "a wooden bed" and bed.kind == "object"
    assert [o.label for o in bed.objects] == ["bed"]  # the prompts file's label
    # y-up OBJ: 1 m tall along +y becomes z; 2 m deep along z becomes y
    corners = bed.objects[0].corners()
    np.testing.assert_allclose(corners.max(axis=0) - corners.min(axis=0), (1.0, 2.0, 1.0), atol=1e-9)
    assert bed.objects[0].tilt is None
    assert [o.label for o in by_id["gen-a__p2"].objects] == ["lamp"]  # the spec's one category
    assert by_id["gen-b__p3"].prompt == PROMPTS["p3"]["prompt"]
    assert sorted(o.label for o in by_id["gen-b__p3"].objects) == ["bed", "bed", "lamp"]
    # the two generators' p1 assets do not overwrite each other
    assert {by_id["gen-a__p1"].objects[0].asset, by_id["gen-b__p1"].objects[0].asset} == {
        "assets/gen-a__p1/p1.obj", "assets/gen-b__p1/p1.obj",
    }


@pytest.mark.parametrize("kind", ["unknown stem", "unreadable", "bad glb"])
def test_bad_files_are_all_reported_and_nothing_is_written(tmp_path, capsys, kind):
    gens, prompts, assets = _generators(tmp_path)
    (gens / "gen-a" / "p9.obj").write_text(obj_text(*BED_BOX))  # p9: not in the prompts file
    if kind == "unreadable":
        (gens / "gen-b" / "p1.obj").write_text("v 0 0 zero\nf 1 1 1\n")
    elif kind == "bad glb":
        (gens / "gen-b" / "p2.glb").write_bytes(b"not a glb")
    out = tmp_path / "new" / "set"
    assert _import(gens, prompts, out, assets) == 2
    err = capsys.readouterr().err
    assert f"{gens / 'gen-a' / 'p9.obj'}: prompt id 'p9' is not in the prompts file" in err
    if kind == "unreadable":
        assert f"{gens / 'gen-b' / 'p1.obj'}#/: bad vertex on line 1" in err
        assert "2 file(s) cannot be imported" in err
    elif kind == "bad glb":
        assert str(gens / "gen-b" / "p2.glb") in err
        assert "2 file(s) cannot be imported" in err
    assert not (tmp_path / "new").exists()  # no output, not even the created parent
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_out_must_be_new_or_empty(tmp_path, capsys):
    gens, prompts, assets = _generators(tmp_path)
    out = tmp_path / "set"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    assert _import(gens, prompts, out, assets) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_prompts_file_formats(tmp_path):
    csv = tmp_path / "prompts.csv"
    csv.write_text("id,prompt,label\np1,a red chair,chair\np2,\"a lamp, tall\",\n")
    entries = read_prompts(csv)
    assert entries["p1"].prompt == "a red chair" and entries["p1"].label == "chair"
    assert entries["p2"].prompt == "a lamp, tall" and entries["p2"].label is None
    listed = tmp_path / "pool.json"
    listed.write_text(json.dumps([{"id": "bedroom-01", "text": "a bed", "objects": {"bed": 1}}]))
    assert read_prompts(listed)["bedroom-01"].label == "bed"
    for body, message in [
        ('{"p1": ""}', "prompt text missing"),
        ('[{"id": "p1", "text": "a"}, {"id": "p1", "text": "b"}]', "duplicate prompt id 'p1'"),
        ("[1]", "prompt without an id"),
        ("{}", "lists no prompts"),
        ("{", "not valid JSON"),
    ]:
        listed.write_text(body)
        with pytest.raises(ImportError_, match=message):
            read_prompts(listed)
    csv.write_text("name,text\np1,a\n")
    with pytest.raises(ImportError_, match="needs 'id' and 'prompt' columns"):
        read_prompts(csv)


def test_profile_selection_on_an_imported_set(tmp_path):
    gens, prompts, assets = _generators(tmp_path)
    out = tmp_path / "set"
    assert _import(gens, prompts, out, assets) == 0
    sset = SceneSet.load(out)
    # a profile's generator list written for the bundled set names none of these: all kept
    two = sset.select_for_profile(2, ("gen-perfect", "gen-rough"))
    assert sorted(s.id for s in two) == ["gen-a__p1", "gen-a__p2", "gen-b__p1"]
    assert len(sset.select_for_profile(6, None)) == 4  # more prompts than the set has: all
    assert [s.id for s in sset.select_for_profile(None, ("gen-b",))] == ["gen-b__p1", "gen-b__p3"]
    with pytest.raises(SceneError, match="unknown generator 'gen-x'"):
        sset.select_for_profile(None, ("gen-a", "gen-x"))  # half a match is a mistake


def test_audit_collects_an_imported_set(tmp_path, pytester):
    gens, prompts, assets = _generators(tmp_path)
    out = tmp_path / "set"
    assert _import(gens, prompts, out, assets) == 0
    from harness.core.paths import REPO_ROOT

    shutil.copytree(REPO_ROOT / "audit_tests", pytester.path / "audit_tests")
    (pytester.path / "conftest.py").write_text(CONFTEST)
    (pytester.path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["audit_tests"]\n'
        '[tool.t3d-audit]\nevaluators = ["tiny-*"]\n'
    )
    (pytester.path / "audit_tests" / "test_zz_selected.py").write_text(
        "def test_selected(audit_scene_set):\n"
        "    print('SELECTED', ' '.join(sorted(s.id for s in audit_scene_set)))\n"
    )
    args = ("-p", "no:cacheprovider", f"--audit-scenes={out}", "--audit-profile=smoke")
    collected = pytester.runpytest(*args, "--collect-only", "-q")
    assert collected.ret == 0, collected.stdout.str() + collected.stderr.str()
    nodes = [line for line in collected.stdout.lines if "::" in line]
    assert any("test_rho[tiny-grid-pitch]" in n for n in nodes), nodes
    # smoke audits 2 prompts: the set's first two prompt ids (p1, p2) of both generators
    result = pytester.runpytest(*args, "-s", "-k", "test_selected")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*SELECTED gen-a__p1 gen-a__p2 gen-b__p1*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.slow
def test_glb_outputs_import_and_contact_sheet(tmp_path, capsys):
    fixtures = tmp_path / "fx"
    proc = subprocess.run(
        [sys.executable, str(HERE / "_gltf_fixtures.py"), str(fixtures)],
        capture_output=True, text=True, cwd=HERE.parent,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    gens = tmp_path / "outputs"
    files = {("gen-a", "p1"): "red_textured", ("gen-a", "p2"): "green_vcol",
             ("gen-b", "p1"): "truck", ("gen-b", "p2"): "tiny"}
    for (gen, pid), name in files.items():
        (gens / gen).mkdir(parents=True, exist_ok=True)
        shutil.copy(fixtures / f"{name}.glb", gens / gen / f"{pid}.glb")
    prompts = tmp_path / "prompts.csv"
    prompts.write_text("id,prompt,label\np1,a red cube,cube\np2,a small cube,\n")
    out = tmp_path / "set"
    assert main(["import-scenes", str(gens), "--prompts", str(prompts), "--out", str(out)]) == 0
    sset = SceneSet.load(out, verify=True)
    assert sorted(s.id for s in sset) == ["gen-a__p1", "gen-a__p2", "gen-b__p1", "gen-b__p2"]
    by_id = {s.id: s for s in sset}
    assert by_id["gen-b__p1"].objects[0].label == "cube"  # not the mesh or node name
    assert by_id["gen-a__p2"].objects[0].label == "a small cube"
    assert by_id["gen-a__p1"].objects[0].asset == "assets/gen-a__p1/p1.glb"
    sheet = tmp_path / "sheet.png"
    capsys.readouterr()
    assert main(["contact-sheet", "--scenes", str(out), "--out", str(sheet), "--profile", "smoke",
                 "--samples", "2", "--size", "64", "--tile", "64",
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "4 scenes (2 generators x 2 prompts) at c0, 4 rendered" in capsys.readouterr().out
    img = np.asarray(Image.open(sheet).convert("RGB"), dtype=float)
    assert img.shape == (2 * (64 + 14), 2 * 64, 3)
    # tile gen-a/p1 (row 0, col 0) is mostly red; gen-a/p2 (row 0, col 1) mostly green
    red = img[14 + 16:14 + 48, 16:48].mean(axis=(0, 1))
    green = img[14 + 16:14 + 48, 64 + 16:64 + 48].mean(axis=(0, 1))
    assert red[0] > red[1] + 40 and green[1] > green[0] + 40, (red, green)


def test_contact_sheet_needs_a_file_or_scenes(tmp_path, capsys):
    assert main(["contact-sheet", "--out", str(tmp_path / "x.png")]) == 2
    assert "give either a scene file or --scenes DIR" in capsys.readouterr().err
