"""Staging folders left by a killed import are removed by the next import.

``import-scenes`` killed with SIGKILL left ``.set.import-XXXX`` next to the set for good. Stage
names now carry their owner (pid and host), so the next import into the same set removes them.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.scenes.importers import staging
from harness.scenes.importers.staging import STALE_AGE_S, prune_stale_stages, staged_directory
from tests._scenestate import write_scenestate

META = ["--generator", "gen-a", "--prompt-id", "p1", "--prompt", "a bedroom"]


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _host() -> str:
    return staging._host()


def _plant(parent: Path, name: str, *, age_s: float = 0.0) -> Path:
    folder = parent / name
    (folder / "scenes").mkdir(parents=True)
    (folder / "scenes" / "half.json").write_text("{")
    if age_s:
        old = time.time() - age_s
        os.utime(folder, (old, old))
    return folder


def test_a_stage_of_a_dead_owner_is_removed_at_once(tmp_path: Path) -> None:
    dead = _plant(tmp_path, f".set.import-{_dead_pid()}+{_host()}+abc123")
    live = _plant(tmp_path, f".set.import-{os.getpid()}+{_host()}+def456")
    other_set = _plant(tmp_path, f".other.import-{_dead_pid()}+{_host()}+ghi789")
    assert prune_stale_stages(tmp_path / "set") == 1
    assert not dead.exists() and live.exists() and other_set.exists()


def test_stages_without_a_checkable_owner_go_by_age(tmp_path: Path) -> None:
    legacy_old = _plant(tmp_path, ".set.import-k2j3h4g5", age_s=STALE_AGE_S + 60)
    legacy_new = _plant(tmp_path, ".set.import-a1b2c3d4", age_s=60)
    remote_old = _plant(
        tmp_path, f".set.import-{_dead_pid()}+elsewhere.example+x1", age_s=STALE_AGE_S + 60
    )
    remote_new = _plant(tmp_path, f".set.import-{_dead_pid()}+elsewhere.example+x2")
    assert prune_stale_stages(tmp_path / "set") == 2
    assert not legacy_old.exists() and not remote_old.exists()
    assert legacy_new.exists() and remote_new.exists()


def test_a_swap_killed_between_its_renames_gets_the_old_set_back(tmp_path: Path) -> None:
    aside = tmp_path / f".set.old-{_dead_pid()}+{_host()}+zz"
    (aside / "old" / "scenes").mkdir(parents=True)
    (aside / "old" / "manifest.json").write_text("{}")
    stage = _plant(tmp_path, f".set.import-{_dead_pid()}+{_host()}+yy")
    assert prune_stale_stages(tmp_path / "set") == 2
    assert (tmp_path / "set" / "manifest.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set"]
    assert not stage.exists()


def test_own_stage_names_carry_pid_and_host(tmp_path: Path) -> None:
    with staged_directory(tmp_path / "set") as stage:
        assert stage.name.startswith(f".set.import-{os.getpid()}+{_host()}+")
        assert prune_stale_stages(tmp_path / "set") == 0  # a live owner's stage stays
        assert stage.exists()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_import_killed_with_sigkill_is_cleaned_up_by_the_next_run(tmp_path: Path, capsys) -> None:
    out = tmp_path / "set"
    holder = (
        "import sys, time\n"
        "from harness.scenes.importers.staging import staged_directory\n"
        f"with staged_directory({str(out)!r}) as stage:\n"
        "    (stage / 'scenes').mkdir()\n"
        "    (stage / 'scenes' / 'partial.json').write_text('{')\n"
        "    print('staged', flush=True)\n"
        "    time.sleep(120)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "staged"
        leftovers = [p.name for p in tmp_path.iterdir()]
        assert len(leftovers) == 1 and leftovers[0].startswith(f".set.import-{proc.pid}+")
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert [p.name for p in tmp_path.iterdir()] == leftovers  # the kill left the stage behind
    src, assets = write_scenestate(tmp_path / "src")
    argv = ["import-scene", str(src), "--out", str(out), "--asset-root", str(assets), *META]
    assert main(argv) == 0, capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set", "src"]
    assert not (out / "scenes" / "partial.json").exists()


def test_host_names_are_safe_in_folder_names(monkeypatch) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "we+ird/host name")
    assert staging._host() == "we_ird_host_name"


@pytest.mark.slow
def test_import_scenes_killed_with_sigkill_mid_import(tmp_path: Path, capsys) -> None:
    """A killed import: ``t3d-audit import-scenes`` (and its Blender child) killed with -9
    while importing; the next ``import-scenes`` into the same set succeeds and leaves no stage."""
    pytest.importorskip("bpy")
    from tests._gltf_docs import glb, triangle

    gens = tmp_path / "outputs"
    (gens / "gen-a").mkdir(parents=True)
    doc, binary = triangle()
    for pid in ("p01", "p02"):
        (gens / "gen-a" / f"{pid}.glb").write_bytes(glb(doc, binary))
    prompts = tmp_path / "prompts.json"
    prompts.write_text('{"p01": "a shard", "p02": "a wedge"}')
    out = tmp_path / "set"
    argv = ["import-scenes", str(gens), "--prompts", str(prompts), "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", *argv],
        env=env,
        start_new_session=True,  # its own process group: the Blender child dies with it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        stop = time.monotonic() + 120
        while time.monotonic() < stop and proc.poll() is None:
            stages = [p for p in tmp_path.iterdir() if p.name.startswith(".set.import-")]
            if stages and (stages[0] / "assets").exists():  # mid-import: assets being written
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the import finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".set.")]  # left behind
    assert not out.exists()
    assert main(argv) == 0, capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outputs", "prompts.json", "set"]
    assert len(list((out / "scenes").rglob("*.json"))) == 2
