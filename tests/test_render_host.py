"""``manifest.json#/render_host``: CPU model, Blender build, Cycles device and kernel."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from importlib import metadata

import pytest

from harness.render.host import blender_build, cpu_model, render_host
from harness.render.renderer import host_facts
from harness.testing import BoxRasterizer

HAVE_BPY = importlib.util.find_spec("bpy") is not None


@pytest.mark.parametrize(
    ("text", "model"),
    [
        ("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t: avx2\n", "AMD EPYC 7B13"),
        ("processor\t: 0\nBogoMIPS\t: 48.00\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n",
         "Raspberry Pi 4 Model B Rev 1.4"),
        ("processor\t: 0\nHardware\t: Qualcomm Technologies, Inc SM8150\n", "Qualcomm Technologies, Inc SM8150"),
    ],
)
def test_cpu_model_from_cpuinfo(tmp_path, text, model):
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    assert cpu_model(path) == model


def test_cpu_model_without_cpuinfo_falls_back_to_platform(tmp_path):
    assert cpu_model(tmp_path / "absent")  # platform.processor() or the machine name


def test_blender_probe_failures_are_facts_not_errors(tmp_path):
    assert blender_build(str(tmp_path / "no-python"))["error"].startswith("cannot start the Blender probe")
    fake = tmp_path / "fake-python"
    fake.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named bpy' >&2\nexit 1\n")
    fake.chmod(0o755)
    assert blender_build(str(fake)) == {"error": "bpy could not be imported: ModuleNotFoundError: No module named bpy"}


@pytest.mark.skipif(not HAVE_BPY, reason="bpy is not installed")
def test_blender_build_names_the_installed_blender_and_cycles_kernel():
    facts = blender_build()
    assert "error" not in facts, facts
    assert facts["version"].startswith(metadata.version("bpy").rsplit(".", 1)[0])
    assert re.fullmatch(r"[0-9a-f]{12,40}", facts["build_hash"])
    assert facts["cycles_cpu_kernel"] not in ("", "unknown")


def test_render_host_shape():
    host = render_host("cpu")
    assert set(host) == {"cpu_model", "machine", "system", "cycles_device", "blender"}
    assert host["cycles_device"] == "CPU"
    json.dumps(host, allow_nan=False)


def test_the_render_service_gives_host_facts_without_importing_bpy(tmp_path):
    code = (
        "import json, sys\n"
        "from harness.render.service import RenderService\n"
        f"host = RenderService({str(tmp_path)!r}).host()\n"
        "print(json.dumps({'bpy_loaded': 'bpy' in sys.modules, 'device': host['cycles_device']}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == {"bpy_loaded": False, "device": "CPU"}


def test_host_facts_only_for_renderers_that_have_one():
    assert host_facts(BoxRasterizer()) is None

    class WithHost(BoxRasterizer):
        def host(self):
            return {"cpu_model": "x", "cycles_device": "CPU"}

    assert host_facts(WithHost()) == {"cpu_model": "x", "cycles_device": "CPU"}
