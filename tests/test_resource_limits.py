"""Memory and time bounds of the processes that run Blender (``harness.render.resource_limits``).

A 404-byte glTF can drive an import to tens of GB, and Blender then dies of SIGABRT with no
message. The measuring child starts under an address-space limit and a deadline, and a
breach comes back as a typed error naming the limit and its variable.
"""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from harness.core.errors import AuditError, ImportError_, RenderError
from harness.render import resource_limits as rl


def test_memory_limit_parsing() -> None:
    assert rl.memory_limit({}) == rl.DEFAULT_MEMORY == 8 * 1024**3
    assert rl.memory_limit({rl.MEMORY_ENV: "512M"}) == 512 * 1024**2
    assert rl.memory_limit({rl.MEMORY_ENV: "1.5G"}) == 1536 * 1024**2
    assert rl.memory_limit({rl.MEMORY_ENV: "2GiB"}) == 2 * 1024**3
    assert rl.memory_limit({rl.MEMORY_ENV: "4096"}) == 4096
    for off in ("0", "off", "none"):
        assert rl.memory_limit({rl.MEMORY_ENV: off}) is None
    for bad in ("lots", "-1G", "8X", "1e9", "0.0G"):
        with pytest.raises(AuditError, match=rl.MEMORY_ENV):
            rl.memory_limit({rl.MEMORY_ENV: bad})


def test_import_timeout_parsing() -> None:
    assert rl.import_timeout({}) == 600.0
    assert rl.import_timeout({rl.IMPORT_TIMEOUT_ENV: "2.5"}) == 2.5
    for bad in ("0", "-3", "soon", "inf", "nan"):
        with pytest.raises(AuditError, match=rl.IMPORT_TIMEOUT_ENV):
            rl.import_timeout({rl.IMPORT_TIMEOUT_ENV: bad})


def test_human_sizes_and_deaths() -> None:
    assert rl.human(8 << 30) == "8 GiB" and rl.human(None) == "no limit"
    assert rl.human(1536 << 20) == "1.5 GiB" and rl.human(12) == "12 B"
    assert rl.describe_death(0, 1 << 30) is None and rl.describe_death(1, None) is None
    msg = rl.describe_death(-signal.SIGABRT, 1 << 30)
    assert msg is not None and msg.startswith("killed by SIGABRT") and "1 GiB" in msg
    assert rl.MEMORY_ENV in msg
    assert rl.describe_death(-signal.SIGTERM, None) == "killed by SIGTERM"


def test_apply_memory_limit_makes_a_runaway_allocation_a_memory_error() -> None:
    code = (
        "from harness.render.resource_limits import apply_memory_limit\n"
        "apply_memory_limit(400 << 20)\n"
        "try:\n"
        "    block = bytearray(800 << 20)\n"
        "    print('allocated')\n"
        "except MemoryError:\n"
        "    print('MemoryError')\n"
        "import resource\n"
        "print(resource.getrlimit(resource.RLIMIT_AS)[0])\n"
        "apply_memory_limit(800 << 20)\n"  # never raised again
        "print(resource.getrlimit(resource.RLIMIT_AS)[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["MemoryError", str(400 << 20), str(400 << 20)], out.stderr


def test_a_dead_render_worker_is_a_typed_error() -> None:
    from harness.render.cache_warmer import _worker_died

    def workers(code):
        return [SimpleNamespace(exitcode=code)]

    err = _worker_died(workers(-signal.SIGABRT), "cpu", 8 << 30, 1800.0)  # type: ignore[arg-type]
    assert isinstance(err, RenderError)
    assert "a render worker process died (killed by SIGABRT" in err.what
    assert "8 GiB memory limit" in err.what and rl.MEMORY_ENV in (err.hint or "")
    late = _worker_died(workers(-signal.SIGALRM), "cpu", None, 90.0)  # type: ignore[arg-type]
    assert "(a render ran past the 90 s deadline, T3D_AUDIT_RENDER_DEADLINE)" in late.what
    gone = _worker_died([], "cpu", None, 90.0)  # type: ignore[arg-type]
    assert gone.what.startswith("a render worker process died; renders finished before it")


def test_a_worker_not_yet_reaped_is_waited_for(monkeypatch) -> None:
    """Regression: a broken pool can be seen before the dead worker has an exit status; the
    deadline's SIGALRM was then reported as an unexplained death."""
    import threading

    import harness.render.cache_warmer as cw

    worker = SimpleNamespace(exitcode=None)
    threading.Timer(0.3, lambda: setattr(worker, "exitcode", -signal.SIGALRM)).start()
    err = cw._worker_died([worker], "cpu", None, 0.2)  # type: ignore[list-item]
    assert "(a render ran past the 0.2 s deadline, T3D_AUDIT_RENDER_DEADLINE)" in err.what
    monkeypatch.setattr(cw, "REAP_WAIT_S", 0.1)
    alive = cw._worker_died([SimpleNamespace(exitcode=None)], "cpu", None, 0.2)  # type: ignore[list-item]
    assert alive.what.startswith("a render worker process died; renders finished before it")


def test_render_deadline_parsing() -> None:
    assert rl.render_deadline(600.0, {}) == 1800.0
    assert rl.render_deadline(5.0, {}) == 60.0  # at least a minute: Blender starts first
    assert rl.render_deadline(600.0, {rl.RENDER_DEADLINE_ENV: "45.5"}) == 45.5
    for bad in ("0", "-1", "later", "inf"):
        with pytest.raises(AuditError, match=rl.RENDER_DEADLINE_ENV):
            rl.render_deadline(600.0, {rl.RENDER_DEADLINE_ENV: bad})


def test_a_memory_error_in_a_render_is_a_recorded_failure() -> None:
    from harness.render.cache_warmer import _render_group

    class Hungry:
        rendered = 0

        def render(self, *a):
            raise MemoryError

    request = SimpleNamespace(
        scene=SimpleNamespace(id="g.p1"), scene_root=".", identity="i", cfg=None
    )
    reports: list[str | None] = []
    _render_group(Hungry(), [request], reports.append)  # type: ignore[arg-type]
    assert reports == [f"scene g.p1: {rl.out_of_memory(rl.memory_limit())}"]


# -- the glTF measuring child (needs bpy) -----------------------------------------------------------


def _runaway_gltf(tmp_path: Path) -> Path:
    """An attack: 2**31 - 1 VEC3 positions declared over a 36-byte buffer."""
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype="<f4").tobytes()
    doc = {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [
            {
                "bufferView": 0,
                "componentType": 5126,
                "count": 2**31 - 1,
                "type": "VEC3",
                "min": [0, 0, 0],
                "max": [1, 1, 0],
            }
        ],
        "bufferViews": [{"buffer": 0, "byteLength": 36}],
        "buffers": [
            {
                "byteLength": 36,
                "uri": "data:application/octet-stream;base64," + base64.b64encode(pos).decode(),
            }
        ],
    }
    path = tmp_path / "runaway.gltf"
    path.write_text(json.dumps(doc, separators=(",", ":")))
    return path


@pytest.mark.slow
def test_blender_behind_the_validator_is_still_bounded(tmp_path: Path, monkeypatch) -> None:
    """Even a file that reached Blender (the validator bypassed) cannot take the machine: the
    child fails at its memory limit, in seconds, with a message naming the limit."""
    pytest.importorskip("bpy")
    from harness.render.gltfmeasure import run_jobs

    monkeypatch.setenv(rl.MEMORY_ENV, "3G")
    (result,) = run_jobs([{"op": "measure", "file": str(_runaway_gltf(tmp_path))}], where="x")
    assert "ran out of memory under the 3 GiB limit" in result["error"]


@pytest.mark.slow
def test_a_limit_below_blenders_own_needs_is_a_typed_crash(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("bpy")
    from harness.render.gltfmeasure import run_jobs

    monkeypatch.setenv(rl.MEMORY_ENV, "900M")
    with pytest.raises(ImportError_) as info:
        run_jobs([{"op": "measure", "file": str(_runaway_gltf(tmp_path))}], where="x.gltf")
    assert info.value.what.startswith("Blender's importer crashed: ")
    assert "900 MiB" in info.value.what and "\n" not in info.value.what


@pytest.mark.slow
def test_the_import_deadline_is_settable(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("bpy")
    from harness.render.gltfmeasure import run_jobs

    monkeypatch.setenv(rl.IMPORT_TIMEOUT_ENV, "0.3")
    with pytest.raises(ImportError_, match=r"Blender took over 0\.3 s to read the assets"):
        run_jobs([{"op": "measure", "file": str(_runaway_gltf(tmp_path))}], where="x.gltf")
    monkeypatch.setenv(rl.IMPORT_TIMEOUT_ENV, "never")
    with pytest.raises(AuditError, match=rl.IMPORT_TIMEOUT_ENV):
        run_jobs([{"op": "measure", "file": "x"}])


@pytest.mark.slow
def test_a_render_worker_past_its_deadline_is_a_typed_error(tmp_path: Path, monkeypatch) -> None:
    """``warm --jobs 2``: a worker whose render outlives the deadline is ended by SIGALRM (even
    inside Blender's C code) and the run stops with one typed error naming the variable."""
    pytest.importorskip("bpy")
    from harness.protocol.configurations import RenderConfig
    from harness.render.cache_warmer import warm
    from harness.render.service import RenderRequest
    from harness.scenes.model import scene_identity
    from tests._render_helpers import box_scene, write_box_assets

    write_box_assets(tmp_path)
    scene = box_scene("test.slow")
    request = RenderRequest(
        scene, tmp_path, scene_identity(scene, tmp_path), RenderConfig(64, samples=4)
    )
    monkeypatch.setenv(rl.RENDER_DEADLINE_ENV, "0.2")  # Blender alone takes longer to start
    with pytest.raises(RenderError) as info:
        warm([request, request], tmp_path / "renders", jobs=2)
    assert "a render ran past the 0.2 s deadline, T3D_AUDIT_RENDER_DEADLINE" in info.value.what
    monkeypatch.setenv(rl.MEMORY_ENV, "plenty")
    with pytest.raises(AuditError, match=rl.MEMORY_ENV):  # refused before a worker starts
        warm([request], tmp_path / "renders", jobs=2)
