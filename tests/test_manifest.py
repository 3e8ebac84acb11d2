"""Scene-set manifest: byte-reproducible writing, the frozen-scene rule, SceneSet queries."""

from __future__ import annotations

import contextlib
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core.errors import ManifestError, SceneError
from harness.core.hashing import sha256_file
from harness.scenes import SceneSet, build_manifest, scene_identity, verify_manifest, write_manifest
from harness.scenes.set_manifest import MANIFEST_NAME, manifest_bytes
from tests._scene_helpers import ASSETS, dumps, scene_doc, write_scene_set


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    write_scene_set(tmp_path)
    return tmp_path


def test_manifest_content(root: Path) -> None:
    doc = json.loads((root / MANIFEST_NAME).read_text())
    assert doc["schema"] == "t3d-scene-set/1"
    assert [e["path"] for e in doc["scenes"]] == [
        f"scenes/{g}/{p}.json" for g in ("gen-a", "gen-b") for p in ("p01", "p02", "p03")
    ]
    first = doc["scenes"][0]
    assert first == {
        "path": "scenes/gen-a/p01.json",
        "sha256": sha256_file(root / "scenes/gen-a/p01.json"),
        "id": "gen-a__p01",
        "generator": "gen-a",
        "prompt_id": "p01",
    }
    # every asset used or listed as a candidate, sorted
    assert [e["path"] for e in doc["assets"]] == sorted(ASSETS)
    assert doc["generators"] == ["gen-a", "gen-b"]
    assert doc["prompts"][1] == {"prompt_id": "p02", "prompt": "a bedroom for prompt p02"}


def test_manifest_bytes_are_canonical_and_reproducible(root: Path, tmp_path_factory) -> None:
    raw = (root / MANIFEST_NAME).read_bytes()
    assert raw.endswith(b"}\n") and b'\n "assets": [' in raw  # indent 1, sorted keys
    paths = sorted((root / "scenes").rglob("*.json"))
    random.Random(3).shuffle(paths)
    again = build_manifest(root, [p.relative_to(root) for p in paths])  # relative paths too
    assert manifest_bytes(again) == raw
    other = tmp_path_factory.mktemp("copy")
    write_scene_set(other)
    assert (other / MANIFEST_NAME).read_bytes() == raw


def test_write_manifest_is_atomic_and_leaves_no_temp_files(root: Path) -> None:
    doc = verify_manifest(root)
    write_manifest(root, doc)
    assert sorted(p.name for p in root.iterdir()) == ["assets", MANIFEST_NAME, "scenes"]


def test_verify_returns_manifest(root: Path) -> None:
    assert verify_manifest(root)["generators"] == ["gen-a", "gen-b"]


def _flip_one_byte(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at % len(data)] ^= 0x01
    path.write_bytes(bytes(data))


def test_changed_asset_is_named(root: Path) -> None:
    _flip_one_byte(root / "assets/table/a.obj", 10)
    with pytest.raises(ManifestError) as info:
        verify_manifest(root)
    assert info.value.path == str(root / "assets/table/a.obj")
    assert "changed" in info.value.what and "'assets/table/a.obj'" in info.value.what
    with pytest.raises(ManifestError):
        SceneSet.load(root)


def test_changed_scene_is_named(root: Path) -> None:
    _flip_one_byte(root / "scenes/gen-b/p02.json", 40)
    with pytest.raises(ManifestError) as info:
        verify_manifest(root)
    assert info.value.path == str(root / "scenes/gen-b/p02.json")


def test_missing_files_are_named(root: Path) -> None:
    (root / "assets/chair/c.obj").unlink()  # a candidate-only asset
    with pytest.raises(
        ManifestError, match=re.escape("'assets/chair/c.obj' listed in the manifest is missing")
    ):
        verify_manifest(root)
    (root / "scenes/gen-a/p03.json").unlink()
    with pytest.raises(ManifestError, match=re.escape("scenes/gen-a/p03.json")):
        verify_manifest(root)


def test_unlisted_scene_file_is_named(root: Path) -> None:
    (root / "scenes/gen-c").mkdir()
    (root / "scenes/gen-c/p01.json").write_bytes(dumps(scene_doc("gen-c", "p01")))
    with pytest.raises(
        ManifestError, match=re.escape("unlisted scene file 'scenes/gen-c/p01.json'")
    ):
        verify_manifest(root)


def test_unrelated_files_are_ignored(root: Path) -> None:
    (root / "README.md").write_text("notes\n")
    (root / "assets/unused.obj").write_text("v 0 0 0\n")
    assert verify_manifest(root)


def test_top_level_scene_files(tmp_path: Path) -> None:
    paths = write_scene_set(tmp_path, manifest=False)
    flat = []
    for p in paths:
        target = tmp_path / f"{p.parent.name}_{p.name}"
        p.rename(target)
        flat.append(target)
    write_manifest(tmp_path, build_manifest(tmp_path, flat))
    assert len(SceneSet.load(tmp_path)) == 6
    (tmp_path / "stray.json").write_text("{}")
    with pytest.raises(ManifestError, match=re.escape("stray.json")):
        verify_manifest(tmp_path)


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: d.update(schema="x"), "schema must be"),
        (lambda d: d.pop("assets"), "fields must be exactly"),
        (lambda d: d["scenes"][0].pop("sha256"), "string fields"),
        (lambda d: d.update(scenes=[]), "lists no scenes"),
        (lambda d: d["scenes"][0].update(path="../x.json"), "leaves the scene-set root"),
        (lambda d: d["assets"][0].update(path="/etc/passwd"), "absolute"),
    ],
)
def test_malformed_manifest(root: Path, edit, words: str) -> None:
    doc = json.loads((root / MANIFEST_NAME).read_text())
    edit(doc)
    (root / MANIFEST_NAME).write_text(json.dumps(doc))
    with pytest.raises(ManifestError, match=words):
        verify_manifest(root)


def test_missing_or_broken_manifest(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="cannot read manifest"):
        SceneSet.load(tmp_path)
    (tmp_path / MANIFEST_NAME).write_bytes(b"{oops")
    with pytest.raises(ManifestError, match="malformed manifest"):
        verify_manifest(tmp_path)


def test_manifest_entry_must_match_scene(root: Path) -> None:
    doc = json.loads((root / MANIFEST_NAME).read_text())
    doc["scenes"][0]["generator"] = "gen-z"
    write_manifest(root, doc)
    with pytest.raises(ManifestError, match="generator 'gen-a' but the manifest lists 'gen-z'"):
        SceneSet.load(root)


def test_scene_using_unlisted_asset(root: Path) -> None:
    doc = json.loads((root / MANIFEST_NAME).read_text())
    doc["assets"] = [a for a in doc["assets"] if a["path"] != "assets/chair/c.obj"]
    write_manifest(root, doc)
    with pytest.raises(ManifestError, match=re.escape("uses asset file 'assets/chair/c.obj'")):
        SceneSet.load(root)


def test_build_rejects_set_level_conflicts(tmp_path: Path) -> None:
    paths = write_scene_set(tmp_path, manifest=False)
    dup = scene_doc("gen-a", "p01")
    dup["id"] = "other-id"
    (tmp_path / "scenes/dup.json").write_bytes(dumps(dup))
    with pytest.raises(SceneError, match="second scene for generator 'gen-a' and prompt 'p01'"):
        build_manifest(tmp_path, [*paths, tmp_path / "scenes/dup.json"])
    clash = scene_doc("gen-c", "p01")
    clash["prompt"] = "a different prompt"
    (tmp_path / "scenes/clash.json").write_bytes(dumps(clash))
    with pytest.raises(SceneError, match="two different prompt texts"):
        build_manifest(tmp_path, [*paths, tmp_path / "scenes/clash.json"])
    with pytest.raises(SceneError, match="outside the scene-set root"):
        build_manifest(tmp_path / "assets", [paths[0]])


def test_sceneset_queries(root: Path) -> None:
    ss = SceneSet.load(root)
    assert [(s.prompt_id, s.generator) for s in ss.scenes] == [
        (p, g) for p in ("p01", "p02", "p03") for g in ("gen-a", "gen-b")
    ]
    assert ss.generators == ("gen-a", "gen-b")
    assert ss.prompt_ids == ("p01", "p02", "p03")
    assert ss.prompts["p03"] == "a bedroom for prompt p03"
    assert ss.path_of("gen-b__p02") == root.resolve() / "scenes/gen-b/p02.json"
    assert ss.asset_paths == tuple(sorted(ASSETS))
    scene = ss.scene("gen-a__p01")
    assert ss.identity(scene.id) == scene_identity(scene, root)
    assert ss.identity(scene.id) != ss.identity("gen-b__p01")
    with pytest.raises(SceneError, match="no scene with id"):
        ss.path_of("nope")


def test_select(root: Path) -> None:
    ss = SceneSet.load(root)
    sub = ss.select(prompts=2, generators=("gen-b",))
    assert [s.id for s in sub] == ["gen-b__p01", "gen-b__p02"]
    assert sub.path_of("gen-b__p02") == ss.path_of("gen-b__p02")
    assert sub.identity("gen-b__p01") == ss.identity("gen-b__p01")
    assert len(ss.select(prompts=99)) == 6
    assert len(ss.select()) == 6
    with pytest.raises(SceneError, match="unknown generator 'gen-x'"):
        ss.select(generators=("gen-x",))
    with pytest.raises(SceneError, match="positive integer"):
        ss.select(prompts=0)


def test_identity_follows_asset_bytes_without_verify(root: Path) -> None:
    before = SceneSet.load(root).identity("gen-a__p01")
    _flip_one_byte(root / "assets/bed/a.obj", 5)
    # verify=False skips the frozen-scene rule; the identity then reflects the changed mesh
    assert SceneSet.load(root, verify=False).identity("gen-a__p01") != before


def test_from_scenes_validates(root: Path) -> None:
    scenes = SceneSet.load(root).scenes
    mem = SceneSet.from_scenes(root, scenes)
    assert mem.scenes == scenes and mem.manifest is None
    assert mem.identity("gen-a__p02") == scene_identity(scenes[2], root)
    with pytest.raises(SceneError, match="has no file"):
        mem.path_of("gen-a__p02")
    with pytest.raises(SceneError, match="duplicate scene id"):
        SceneSet.from_scenes(root, [scenes[0], scenes[0]])
    with pytest.raises(SceneError, match="no scenes given"):
        SceneSet.from_scenes(root, [])


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(which=st.integers(0, 10**6), at=st.integers(0, 10**6))
def test_any_one_byte_change_is_detected(tmp_path_factory, which: int, at: int) -> None:
    root = tmp_path_factory.mktemp("tamper")
    write_scene_set(root, generators=("g",), prompt_ids=("p1", "p2"))
    doc = verify_manifest(root)
    listed = [e["path"] for e in doc["scenes"]] + [e["path"] for e in doc["assets"]]
    victim = listed[which % len(listed)]
    _flip_one_byte(root / victim, at)
    with pytest.raises(ManifestError) as info:
        verify_manifest(root)
    assert info.value.path == str(root.resolve() / victim)


# --------------------------------------------------------------------------- CLI


def test_cli_validate_scenes_ok(root: Path, capsys) -> None:
    from harness.cli import main

    assert main(["validate-scenes", str(root)]) == 0
    out = capsys.readouterr().out
    assert out == f"OK {root}: 6 scenes, 4 assets, 2 generators (gen-a, gen-b), 3 prompts\n"
    assert main(["validate-scenes", str(root), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload == {
        "root": str(root),
        "scenes": 6,
        "assets": 4,
        "generators": ["gen-a", "gen-b"],
        "prompts": 3,
    }


def test_cli_validate_scenes_reports_typed_errors(root: Path, capsys) -> None:
    from harness.cli import main

    _flip_one_byte(root / "assets/chair/a.obj", 3)
    assert main(["validate-scenes", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("t3d-audit validate-scenes: error: ")
    assert "'assets/chair/a.obj' changed" in err and err.count("\n") == 1


def test_cli_validate_scenes_bad_scene(tmp_path: Path, capsys) -> None:
    from harness.cli import main

    paths = write_scene_set(tmp_path, manifest=False)
    doc = scene_doc("gen-a", "p01")
    doc["objects"][1]["size"][2] = -1.0
    paths[0].write_bytes(dumps(doc))
    write_manifest(tmp_path, _manifest_without_validation(tmp_path, paths))
    assert main(["validate-scenes", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "p01.json#/objects/1/size/2: non-positive value -1.0" in err


def test_cli_validate_scenes_missing_dir(tmp_path: Path, capsys) -> None:
    from harness.cli import main

    assert main(["validate-scenes", str(tmp_path / "nope")]) == 2
    assert "cannot read manifest" in capsys.readouterr().err


def _manifest_without_validation(root: Path, paths: list[Path]) -> dict:
    """A manifest whose hashes match files that build_manifest would refuse (a bad scene)."""
    good = build_manifest(root, paths[1:])
    rel = paths[0].relative_to(root).as_posix()
    good["scenes"].append(
        {
            "path": rel,
            "sha256": sha256_file(paths[0]),
            "id": "gen-a__p01",
            "generator": "gen-a",
            "prompt_id": "p01",
        }
    )
    good["scenes"].sort(key=lambda e: e["path"])
    return good


# --------------------------------------------------------------------------- asset dependencies


def _with_material(root: Path) -> None:
    """Make assets/table/a.obj name a material that names a texture (and a missing map)."""
    obj = root / "assets/table/a.obj"
    obj.write_text("mtllib a.mtl\n" + obj.read_text())
    (root / "assets/table/a.mtl").write_text(
        "newmtl m\nKd 0.5 0.5 0.5\nmap_Kd -s 1 1 1 tex/wood.png\nmap_Bump gone.png\n"
    )
    (root / "assets/table/tex").mkdir()
    (root / "assets/table/tex/wood.png").write_bytes(b"png")


def test_materials_are_part_of_the_asset(tmp_path: Path) -> None:
    from harness.scenes.assetdeps import asset_dependencies

    paths = write_scene_set(tmp_path, manifest=False)
    _with_material(tmp_path)
    assert asset_dependencies(tmp_path, "assets/table/a.obj") == (
        "assets/table/a.mtl",
        "assets/table/tex/wood.png",
    )
    assert asset_dependencies(tmp_path, "assets/chair/a.obj") == ()
    write_manifest(tmp_path, build_manifest(tmp_path, paths))
    listed = [e["path"] for e in verify_manifest(tmp_path)["assets"]]
    assert "assets/table/a.mtl" in listed and "assets/table/tex/wood.png" in listed
    before = SceneSet.load(tmp_path).identity("gen-a__p01")
    (tmp_path / "assets/table/a.mtl").write_text("newmtl m\nKd 1 0 0\n")
    with pytest.raises(ManifestError, match=re.escape("'assets/table/a.mtl' changed")):
        verify_manifest(tmp_path)
    assert SceneSet.load(tmp_path, verify=False).identity("gen-a__p01") != before


def test_material_missing_from_old_manifest_is_reported(tmp_path: Path) -> None:
    paths = write_scene_set(tmp_path)  # manifest written before the material existed
    _with_material(tmp_path)
    doc = build_manifest(tmp_path, paths)
    doc["assets"] = [a for a in doc["assets"] if not a["path"].endswith((".mtl", ".png"))]
    write_manifest(tmp_path, doc)
    with pytest.raises(ManifestError, match=re.escape("uses asset file 'assets/table/a.mtl'")):
        SceneSet.load(tmp_path)


def test_material_outside_root_is_refused(tmp_path: Path, tmp_path_factory) -> None:
    # regression: an outside material used to be ignored, so it reached the render unhashed
    from harness.scenes.assetdeps import asset_dependencies

    write_scene_set(tmp_path, manifest=False)
    outside = tmp_path_factory.mktemp("out")
    (outside / "evil.mtl").write_text("newmtl x\n")
    obj = tmp_path / "assets/bed/a.obj"
    original = obj.read_text()
    obj.write_text(f"mtllib ../../../{outside.name}/evil.mtl\n" + original)
    with pytest.raises(SceneError, match=re.escape("evil.mtl' leaves")):
        asset_dependencies(tmp_path, "assets/bed/a.obj")
    obj.write_text("mtllib /etc/x.mtl\n" + original)
    with pytest.raises(SceneError, match=re.escape("'/etc/x.mtl' is an absolute path")):
        asset_dependencies(tmp_path, "assets/bed/a.obj")


def test_build_accepts_cwd_relative_paths(tmp_path: Path, monkeypatch) -> None:
    paths = write_scene_set(tmp_path / "set", manifest=False)
    monkeypatch.chdir(tmp_path)
    expected = build_manifest(tmp_path / "set", paths)
    cwd_relative = [p.relative_to(tmp_path) for p in paths]  # set/scenes/gen-a/p01.json
    assert build_manifest(Path("set"), cwd_relative) == expected
    with pytest.raises(SceneError, match=re.escape("missing scene file 'nope.json'")):
        build_manifest(Path("set"), ["nope.json"])


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=5,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_fuzz_manifest_mutations(tmp_path_factory, data) -> None:
    """A mutated manifest gives ManifestError/SceneError (or still loads), nothing else."""
    root = tmp_path_factory.mktemp("fz")
    write_scene_set(root, generators=("g",), prompt_ids=("p1", "p2"))
    doc = json.loads((root / MANIFEST_NAME).read_text())
    paths = [()]

    def walk(node, prefix):
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            paths.append((*prefix, k))
            if isinstance(v, dict | list):
                walk(v, (*prefix, k))

    walk(doc, ())
    path = data.draw(st.sampled_from(paths[1:]))
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    if data.draw(st.booleans()):
        parent[path[-1]] = data.draw(_values)
    else:
        del parent[path[-1]]
    (root / MANIFEST_NAME).write_text(json.dumps(doc))
    with contextlib.suppress(SceneError):  # ManifestError is a SceneError
        SceneSet.load(root)
