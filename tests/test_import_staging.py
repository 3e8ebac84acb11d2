"""``import-scene --out DIR`` is all or nothing: a failed import leaves no files and DIR as it was.

The failing imports here fail *after* the importer has written asset files (a later object
names a missing mesh, or an object lies 1 km outside its floor), which is what used to leave
``assets/`` behind in DIR.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.core.errors import ImportError_
from harness.scenes.importers.staging import staged_directory
from harness.scenes.sceneset import SceneSet
from tests._scenestate import write_scenestate

META = ["--generator", "gen-a", "--prompt-id", "p1", "--prompt", "a bedroom"]


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every entry under ``folder``: relative path -> (bytes or b'<dir>', inode)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        data = b"<dir>" if path.is_dir() else path.read_bytes()
        out[str(path.relative_to(folder))] = (data, path.stat().st_ino)
    return out


def _break_last_object(path: Path, how: str) -> None:
    """Make the import fail after the first objects' assets are written."""
    doc = json.loads(path.read_text())
    last = doc["scene"]["object"][-1]
    if how == "missing mesh":
        last["modelId"] = "test.missing"
    else:  # 1 km east of the 4 x 6 m floor: fails in validate_scene, after every asset
        m = np.array(last["transform"]["data"]).reshape(4, 4).T
        m[0, 3] += 1000.0
        last["transform"]["data"] = m.T.reshape(-1).tolist()
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("how", ["missing mesh", "outside the room"])
def test_failed_import_into_a_new_folder_leaves_nothing(tmp_path: Path, capsys, how) -> None:
    src, assets = write_scenestate(tmp_path / "src")
    _break_last_object(src, how)
    parent = tmp_path / "work"
    parent.mkdir()
    out = parent / "nested" / "set"
    argv = ["import-scene", str(src), "--out", str(out), "--asset-root", str(assets), *META]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err and ".import-" not in err
    assert list(parent.iterdir()) == []  # no set, no staging folder, no created parent


def test_failed_import_leaves_an_existing_set_untouched(tmp_path: Path, capsys) -> None:
    src, assets = write_scenestate(tmp_path / "src")
    out = tmp_path / "set"
    argv = ["import-scene", str(src), "--out", str(out), "--asset-root", str(assets)]
    assert main([*argv, *META]) == 0
    before = _snapshot(out)
    entries = sorted(tmp_path.iterdir())
    # the failing import first writes a mesh the set does not have yet
    (assets / "test" / "bed02.obj").write_bytes((assets / "test" / "bed01.obj").read_bytes())
    doc = json.loads(src.read_text())
    doc["scene"]["object"][0]["modelId"] = "test.bed02"
    src.write_text(json.dumps(doc))
    _break_last_object(src, "missing mesh")
    meta_b = ["--generator", "gen-b", "--prompt-id", "p1", "--prompt", "a bedroom"]
    assert main([*argv, *meta_b]) == 2
    assert "not found" in capsys.readouterr().err
    assert _snapshot(out) == before  # same names, bytes and inodes
    assert sorted(tmp_path.iterdir()) == entries


def test_successful_import_extends_an_existing_set(tmp_path: Path, capsys) -> None:
    src, assets = write_scenestate(tmp_path / "src")
    out = tmp_path / "set"
    argv = ["import-scene", str(src), "--out", str(out), "--asset-root", str(assets)]
    assert main([*argv, *META]) == 0
    first = (out / "scenes/gen-a/p1.json").read_bytes()
    meta_b = ["--generator", "gen-b", "--prompt-id", "p1", "--prompt", "a bedroom"]
    assert main([*argv, *meta_b]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == str(out / "scenes/gen-b/p1.json")
    assert (out / "scenes/gen-a/p1.json").read_bytes() == first
    assert [s.generator for s in SceneSet.load(out)] == ["gen-a", "gen-b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set", "src"]


def test_out_naming_an_existing_file_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    src, assets = write_scenestate(tmp_path / "src")
    target = tmp_path / "taken.txt"
    target.write_text("keep me")
    argv = ["import-scene", str(src), "--out", str(target), "--asset-root", str(assets), *META]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a folder" in err and "Traceback" not in err
    assert target.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "taken.txt"]


def test_out_below_a_file_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    src, assets = write_scenestate(tmp_path / "src")
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "set"
    argv = ["import-scene", str(src), "--out", str(out), "--asset-root", str(assets), *META]
    assert main(argv) == 2
    assert "cannot create" in capsys.readouterr().err


def test_staged_directory_cleans_up_on_any_exception(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "out"
    with pytest.raises(KeyboardInterrupt), staged_directory(out) as stage:
        (stage / "half.obj").write_text("v 0 0 0\n")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_staged_directory_writes_never_reach_the_original(tmp_path: Path) -> None:
    """The stage hard-links the original's files; replacing one in the stage (as every writer
    does) leaves the original's bytes alone, and a failure discards the change."""
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / "f.txt").write_text("old")
    os.symlink("sub/f.txt", out / "link")
    from harness.core.fileio import write_text_atomic

    with pytest.raises(RuntimeError), staged_directory(out) as stage:
        assert (stage / "sub" / "f.txt").read_text() == "old"
        assert os.readlink(stage / "link") == "sub/f.txt"
        write_text_atomic(stage / "sub" / "f.txt", "new")
        raise RuntimeError("boom")
    assert (out / "sub" / "f.txt").read_text() == "old"
    with staged_directory(out) as stage:
        write_text_atomic(stage / "sub" / "f.txt", "new")
    assert (out / "sub" / "f.txt").read_text() == "new"
    assert os.readlink(out / "link") == "sub/f.txt"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_staged_directory_rejects_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(ImportError_, match="not a folder"), staged_directory(tmp_path / "f"):
        pass
