"""Blender's own output goes to ``<render cache>/logs/blender-<pid>.log``, not the terminal.

The fd-level tests need no Blender; the end-to-end one renders in a fresh process (so the
``import bpy`` noise is included) and is marked slow.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.render import blenderlog

REPO = Path(__file__).resolve().parent.parent
NOISE = ("OBJ import of", "CUEW", "Saved:", "io.obj")


def test_capture_sends_fd_and_c_stdio_output_to_the_log(tmp_path: Path, capfd) -> None:
    print("before", flush=True)
    libc = ctypes.CDLL(None)
    with blenderlog.capture(tmp_path) as span:
        os.write(1, b"fd one\n")
        os.write(2, b"fd two\n")
        libc.printf(b"c stdio %d\n", 7)  # buffered in C: must be flushed before fds go back
        with blenderlog.capture(tmp_path / "other") as inner:  # nested: joins the outer log
            os.write(1, b"inner\n")
        assert inner is span
    print("after", flush=True)
    out, err = capfd.readouterr()
    assert (out, err) == ("before\nafter\n", "")
    log = (tmp_path / f"blender-{os.getpid()}.log").read_text()
    assert log.splitlines() == ["fd one", "fd two", "c stdio 7", "inner"]
    assert not (tmp_path / "other").exists()
    assert span.tail(2) == "c stdio 7 | inner"


def test_spans_quote_only_their_own_output(tmp_path: Path, capfd) -> None:
    with blenderlog.capture(tmp_path) as span:
        os.write(1, b"first import\n")
        later = span.from_here()
        os.write(2, b"ERROR second import\n")
        hint = later.describe()
    capfd.readouterr()
    assert hint == (
        f"Blender's output is in {tmp_path / f'blender-{os.getpid()}.log'}; "
        "it ended: ERROR second import"
    )
    with blenderlog.capture(tmp_path) as again:  # appends; a new span starts at the end
        pass
    assert again.start > 0 and again.tail() == ""


def test_unwritable_log_leaves_output_on_the_terminal(tmp_path: Path, capfd) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with blenderlog.capture(blocker / "logs") as span:
        os.write(1, b"still visible\n")
    assert span.path is None and span.describe() == ""
    assert capfd.readouterr().out == "still visible\n"


_SCRIPT = """
import os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from harness.protocol.configurations import RenderConfig
from harness.render.failures import AssetImportFailed
from harness.render.service import RenderService
from harness.scenes.model import scene_identity
from tests._render_helpers import box_scene

root, cache = Path(sys.argv[2]), Path(sys.argv[3])
service = RenderService(cache)
scene = box_scene()
image = service.render(scene, root, scene_identity(scene, root), RenderConfig(resolution_px=32, samples=1))
print("PID", os.getpid())
print("RENDERED", image.shape)
bad = box_scene("test.bad", centre_asset="assets/box/garbage.obj")
try:
    service.render(bad, root, scene_identity(bad, root), RenderConfig(resolution_px=32, samples=1))
except AssetImportFailed as exc:
    print("FAILED", exc)
"""


@pytest.mark.slow
def test_render_in_a_fresh_process_keeps_blender_noise_in_the_log(tmp_path: Path) -> None:
    pytest.importorskip("bpy")
    from tests._render_helpers import write_box_assets

    root = tmp_path / "set"
    write_box_assets(root)
    (root / "assets" / "box" / "garbage.obj").write_text("xyz garbage\n")
    cache = tmp_path / "cache"
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(REPO), str(root), str(cache)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    terminal = proc.stdout + proc.stderr
    noisy = [ln for ln in terminal.splitlines() if any(n in ln for n in NOISE)]
    assert [ln for ln in noisy if not ln.startswith("FAILED ")] == []
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert set(lines) == {"PID", "RENDERED", "FAILED"}, terminal
    assert lines["RENDERED"] == "(32, 32, 4)"
    log_file = cache / "logs" / f"blender-{lines['PID']}.log"
    log = log_file.read_text()
    assert "OBJ import of 'red.obj'" in log
    # the failure names the log and quotes what Blender said about the bad file
    assert "no mesh geometry" in lines["FAILED"]
    assert str(log_file) in lines["FAILED"]
    assert "OBJ element not recognized: 'xyz garbage'" in lines["FAILED"]
