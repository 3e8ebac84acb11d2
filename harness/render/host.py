"""Facts about the render host, for ``manifest.json#/render_host``.

Cycles output differs slightly from one CPU to another (instruction-set kernels, floating-point
order), and so can every number computed from the renders: the same run id gave a ref-clipiqa
peak-ρ interval upper bound of 20.60 on one machine and 20.66 on another. The manifest records
what could explain such a difference: the CPU model and architecture, the Blender build and
the Cycles device and CPU kernel.

The Blender facts come from a short child process (``import bpy``, about 0.7 s), so neither
this module nor the process writing the report imports bpy. They describe the Blender install
of the machine that writes the report: renders taken from a render cache filled elsewhere
were made by whichever machine filled it (docs/report-format.md, "Reproducibility").
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from functools import cache
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
PROBE_TIMEOUT_S = 120.0

# Runs in a child interpreter; prints one JSON object. ``_cycles.system_info()`` reads e.g.
# "CPU device capabilities: AVX2": the kernel Cycles picks for this CPU.
_BLENDER_PROBE = """
import json, bpy, _cycles
def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)
caps = ""
for line in _cycles.system_info().splitlines():
    if line.startswith("CPU device capabilities:"):
        caps = line.split(":", 1)[1].strip()
app = bpy.app
print(json.dumps({
    "version": text(app.version_string),
    "build_hash": text(app.build_hash),
    "build_branch": text(app.build_branch),
    "build_platform": text(app.build_platform),
    "cycles_cpu_kernel": caps or "unknown",
}))
"""


def cpu_model(cpuinfo: Path = CPUINFO) -> str:
    """The CPU model name (``/proc/cpuinfo``; elsewhere ``platform.processor()``)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for key in ("model name", "Model", "Hardware", "cpu model"):
        for line in text.splitlines():
            name, _, value = line.partition(":")
            if name.strip() == key and value.strip():
                return value.strip()
    return platform.processor() or platform.machine() or "unknown"


@cache
def blender_build(python: str = sys.executable) -> dict[str, str]:
    """Blender's version string, build hash, branch, platform and the Cycles CPU kernel, from a
    child ``python``; ``{"error": ...}`` when bpy cannot be imported there."""
    try:
        done = subprocess.run(
            [python, "-c", _BLENDER_PROBE],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return {"error": f"cannot start the Blender probe: {exc}"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"bpy could not be imported: {tail}"}
    try:
        facts = json.loads(lines[-1])
    except ValueError:
        return {"error": f"the Blender probe printed {lines[-1][:80]!r}"}
    return {str(k): str(v) for k, v in facts.items()}


def _probe_key(python: str) -> str | None:
    """What :func:`blender_build` depends on for ``python`` (this interpreter only): the bpy
    install (distribution version, file, size and mtime) and this machine (CPU model, node,
    architecture, OS); ``None`` when bpy is not found here."""
    import importlib.util
    from importlib import metadata

    from harness.core.hashing import sha256_json

    if python != sys.executable:
        return None
    try:
        spec = importlib.util.find_spec("bpy")
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        stat = origin.stat() if origin is not None else None
        version = metadata.version("bpy")
    except (ImportError, ValueError, OSError, metadata.PackageNotFoundError):
        return None
    if stat is None:
        return None
    return sha256_json({
        "python": python, "bpy": version, "file": str(origin), "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns, "cpu_model": cpu_model(), "node": platform.node(),
        "machine": platform.machine(), "system": platform.system(),
    })


def blender_build_cached(cache_dir: Path | None, python: str = sys.executable) -> dict[str, str]:
    """:func:`blender_build`, kept as a sealed file ``<cache_dir>/<key>.json`` (``key``: the bpy
    install and the machine, :func:`_probe_key`) so a warm run starts no Blender probe. A
    failed probe is never stored; an entry that fails its seal is discarded and probed again."""
    from harness.core import cacheseal
    from harness.core.fileio import write_bytes_atomic

    key = _probe_key(python) if cache_dir is not None else None
    if key is None:
        return blender_build(python)
    path = Path(cache_dir) / f"{key}.json"
    if path.is_file():
        try:
            found = json.loads(cacheseal.read_sealed(path, key))
            if isinstance(found, dict):
                return {str(k): str(v) for k, v in found.items()}
            raise cacheseal.CorruptEntry("render host facts are not a JSON object")
        except (cacheseal.CorruptEntry, ValueError) as exc:
            path.unlink(missing_ok=True)
            cacheseal.discarded("render host", path, str(exc))
    facts = blender_build(python)
    if "error" not in facts:
        write_bytes_atomic(path, cacheseal.sealed(key, json.dumps(facts, sort_keys=True).encode("utf-8")))
    return facts


def render_host(device: str, cache_dir: Path | None = None) -> dict[str, object]:
    """``manifest.json#/render_host`` for renders on ``device`` (``cpu`` or ``gpu``); with
    ``cache_dir`` the Blender facts are cached there (:func:`blender_build_cached`)::

        {"cpu_model": "AMD EPYC", "machine": "x86_64", "system": "Linux",
         "cycles_device": "CPU", "blender": {"version": "5.0.1", "build_hash": "a3db93c5b259",
         "build_branch": ..., "build_platform": ..., "cycles_cpu_kernel": "AVX2"}}
    """
    return {
        "cpu_model": cpu_model(),
        "machine": platform.machine() or "unknown",
        "system": platform.system() or "unknown",
        "cycles_device": str(device).upper(),
        "blender": blender_build_cached(cache_dir),
    }
