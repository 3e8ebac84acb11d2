"""Import time and peak memory per supported file format (the bar: a file under 50 MB imports
in <= 10 s and <= 2 GB).

Builds the Blender-exported fixtures of ``tests/_format_fixtures.py`` plus synthetic files just
under 50 MB (a coloured OBJ, a binary PLY mesh, a binary STL and a 3DGS splat PLY), then
imports each with ``import-scene`` in a fresh process (``dispatch.import_file``: detection,
Blender measurement in its child, asset copy, scene validation) and, for the splat file, also
imports and renders it once (32 px, 1 sample: the renderer's own asset build, 875k splat
instances). Prints one line per file: size,
wall seconds, CPU seconds (process and children: on a shared machine the wall time includes
waiting for a core), peak resident memory (the process or its largest child), and whether it
is within the bar (judged on CPU seconds and memory). Extra files can be given as arguments.

    python benchmarks/bench_import_formats.py [FILE ...]
"""

from __future__ import annotations

import json
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S, LIMIT_MB, SIZE_MB = 10.0, 2048.0, 49.0


def _big_obj(path: Path) -> None:
    n = int(SIZE_MB * 1e6 / 60)  # ~60 bytes per "v x y z r g b" line
    rng = np.random.default_rng(0)
    v = rng.uniform(-1, 1, size=(n, 6)).astype(np.float32)
    v[:, 3:] = np.abs(v[:, 3:])
    lines = "\n".join(f"v {a:.6f} {b:.6f} {c:.6f} {r:.4f} {g:.4f} {bl:.4f}" for a, b, c, r, g, bl in v)
    faces = "\n".join(f"f {i} {i + 1} {i + 2}" for i in range(1, min(n - 2, 200_000), 3))
    path.write_text(lines + "\n" + faces + "\n")


def _big_ply_mesh(path: Path) -> None:
    nv = int(SIZE_MB * 1e6 / (15 + 2 * 13))
    nf = 2 * nv
    rng = np.random.default_rng(1)
    verts = np.zeros(nv, dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"),
                                ("r", "u1"), ("g", "u1"), ("b", "u1")])
    for k in "xyz":
        verts[k] = rng.uniform(-1, 1, nv)
    verts["r"] = 200
    faces = np.zeros(nf, dtype=[("n", "u1"), ("i", "<i4", 3)])
    faces["n"] = 3
    faces["i"] = rng.integers(0, nv, size=(nf, 3))
    header = (f"ply\nformat binary_little_endian 1.0\nelement vertex {nv}\nproperty float x\n"
              "property float y\nproperty float z\nproperty uchar red\nproperty uchar green\n"
              f"property uchar blue\nelement face {nf}\nproperty list uchar int vertex_index\n"
              "end_header\n")
    path.write_bytes(header.encode() + verts.tobytes() + faces.tobytes())


def _big_stl(path: Path) -> None:
    n = int(SIZE_MB * 1e6 / 50)
    rng = np.random.default_rng(2)
    tri = np.zeros(n, dtype=[("n", "<f4", 3), ("v", "<f4", 9), ("a", "<u2")])
    tri["v"] = rng.uniform(-1, 1, size=(n, 9))
    path.write_bytes(b"\0" * 80 + struct.pack("<I", n) + tri.tobytes())


def _big_splats(path: Path) -> None:
    names = ["x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1",
             "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"]
    n = int(SIZE_MB * 1e6 / (4 * len(names)))
    rng = np.random.default_rng(3)
    t = rng.normal(size=(n, len(names))).astype("<f4")
    t[:, 7:10] = np.log(rng.uniform(0.001, 0.01, size=(n, 3)))
    header = ("ply\nformat binary_little_endian 1.0\n" + f"element vertex {n}\n"
              + "".join(f"property float {p}\n" for p in names) + "end_header\n")
    path.write_bytes(header.encode() + t.tobytes())


def _child(mode: str, path: str, out: str) -> None:
    """Run one import (or renderer asset build) and print seconds and peak RSS in MB."""
    start = time.perf_counter()
    if mode == "import":
        from harness.scenes.importers.dispatch import import_file

        import_file(Path(path), out_root=Path(out), generator="bench", prompt_id="p",
                    prompt="bench", asset_root=Path(path).parent)
    else:  # import, then one 32 px, 1-sample render (the renderer builds its asset)
        from harness.protocol.configurations import RenderConfig
        from harness.render.service import RenderService
        from harness.scenes.importers.dispatch import import_file
        from harness.scenes.model import scene_identity

        scene = import_file(Path(path), out_root=Path(out), generator="bench", prompt_id="p",
                            prompt="bench", asset_root=Path(path).parent)
        RenderService(Path(out) / "cache").render(
            scene, Path(out), scene_identity(scene, Path(out)),
            RenderConfig(resolution_px=32, samples=1, pitch_deg=60.0))
    elapsed = time.perf_counter() - start
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    print(json.dumps({"s": elapsed, "cpu": cpu, "mb": max(me.ru_maxrss, kids.ru_maxrss) / 1024}))


def _measure(mode: str, path: Path, tmp: Path) -> dict:
    out = tmp / f"out-{mode}-{path.name}"
    proc = subprocess.run([sys.executable, __file__, "--child", mode, str(path), str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(extra: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="t3d-bench-formats-") as tmp_name:
        tmp = Path(tmp_name)
        subprocess.run([sys.executable, str(ROOT / "tests" / "_format_fixtures.py"),
                        str(tmp / "fx")], check=True, capture_output=True, cwd=ROOT)
        files = sorted(p for p in (tmp / "fx").iterdir() if p.suffix != ".json")
        for name, build in (("big.obj", _big_obj), ("big_mesh.ply", _big_ply_mesh),
                            ("big.stl", _big_stl), ("big_splats.ply", _big_splats)):
            build(tmp / name)
            files.append(tmp / name)
        files += [Path(p) for p in extra]
        ok = True
        print(f"{'file':44s} {'MB':>7s} {'mode':>7s} {'wall s':>7s} {'cpu s':>7s} {'peak MB':>8s}")
        jobs = [("import", f) for f in files] + [("render", tmp / "big_splats.ply")]
        jobs += [("render", Path(p)) for p in extra if Path(p).suffix == ".ply"]
        for mode, path in jobs:
            got = _measure(mode, path, tmp)
            size = path.stat().st_size / 1e6
            if "error" in got:
                print(f"{path.name:44s} {size:7.2f} {mode:>7s} refused: {got['error'][:80]}")
                continue
            within = got["cpu"] <= LIMIT_S and got["mb"] <= LIMIT_MB
            ok &= within or size > 50 or mode == "render"
            print(f"{path.name:44s} {size:7.2f} {mode:>7s} {got['s']:7.2f} {got['cpu']:7.2f} "
                  f"{got['mb']:8.0f}"
                  f"{'' if within else '  OVER THE BAR'}")
        return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(*sys.argv[2:5])
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
