"""Oversized mesh bodies are refused fast and small; files within the bound read in a bounded
multiple of their size.

Part 1 (the bar: refused in one line, under 1 s, peak resident memory under 200 MB): sparse
files of 4 GiB and 2 GiB (apparent size; nothing is written to disk) in every format an
importer takes: a PLY with a header longer than the 64 KiB format probe (binary and ASCII), a
splat PLY, an OBJ, a binary STL, a GLB whose BIN chunk fills the file, a small ``.gltf`` whose
``.bin`` buffer is the sparse file, and a USDC. Each is imported (``dispatch.import_file``) in
a fresh process; the line printed gives its seconds, peak RSS (the process and any child) and
the start of the refusal.

Part 2 (the memory budget of docs/formats.md): real files of about ``--mb`` MB (default 64)
read by the Python-side readers an import runs before Blender (format detection, the finite
vertex check, the bounded read of the whole file, the OBJ box, the glTF checks), in a fresh
process each; printed as peak RSS, the same less a bare process's (which imports the same
modules), and that extra as a multiple of the file size.

    python benchmarks/bench_mesh_bounds.py [--mb N]
"""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30
BAR_S, BAR_MB = 1.0, 200.0


def _sparse(path: Path, head: bytes, size: int) -> Path:
    path.write_bytes(head)
    os.truncate(path, size)
    return path


def _ply_head(size: int, fmt: str, props: list[str]) -> bytes:
    comments = "".join(f"comment padding {i:05d} {'x' * 48}\n" for i in range(1300))
    stub = (f"ply\nformat {fmt} 1.0\n{comments}element vertex {{n:012d}}\n"
            + "".join(f"property float {p}\n" for p in props) + "end_header\n")
    n = (size - len(stub.format(n=0))) // (4 * len(props))
    return stub.format(n=n).encode()


def _glb_head(size: int) -> bytes:
    doc = {"asset": {"version": "2.0"}, "buffers": [{"byteLength": 12}]}
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    head = struct.pack("<III", 0x46546C67, 2, size) + struct.pack("<II", len(js), 0x4E4F534A) + js
    return head + struct.pack("<II", size - len(head) - 8, 0x004E4942)


SPLAT = ["x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1",
         "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"]


def _oversized(tmp: Path, size: int) -> list[tuple[str, Path]]:
    """(label, file to import) for each format, ``size`` bytes apparent (sparse)."""
    tag = f"{size // GIB}g"
    out = [
        ("PLY binary, long header", _sparse(tmp / f"{tag}.ply", _ply_head(
            size, "binary_little_endian", ["x", "y", "z"]), size)),
        ("PLY ASCII, long header", _sparse(tmp / f"{tag}-ascii.ply", _ply_head(
            size, "ascii", ["x", "y", "z"]), size)),
        ("PLY 3DGS splats", _sparse(tmp / f"{tag}-splats.ply", _ply_head(
            size, "binary_little_endian", SPLAT), size)),
        ("OBJ", _sparse(tmp / f"{tag}.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", size)),
        ("STL binary", _sparse(tmp / f"{tag}.stl", b"\0" * 80 + struct.pack(
            "<I", (size - 84) // 50), 84 + (size - 84) // 50 * 50)),
        ("GLB", _sparse(tmp / f"{tag}.glb", _glb_head(size - 4), size - 4)),
        ("USDC", _sparse(tmp / f"{tag}.usdc", b"PXR-USDC" + b"\0" * 80, size)),
    ]
    folder = tmp / f"gltf-{tag}"
    folder.mkdir()
    _sparse(folder / "buffer.bin", b"", size)
    doc = {"asset": {"version": "2.0"}, "buffers": [{"uri": "buffer.bin", "byteLength": 12}]}
    (folder / "scene.gltf").write_text(json.dumps(doc))
    out.append(("glTF + sparse .bin", folder / "scene.gltf"))
    return out


REAL = [("PLY binary points", "points.ply"), ("PLY ASCII points", "ascii.ply"),
        ("OBJ", "mesh.obj"), ("STL binary", "mesh.stl"), ("GLB", "mesh.glb")]


def _write_real(tmp: Path, mb: float) -> None:
    """Real files of about ``mb`` MB in each format of :data:`REAL`."""
    rng = np.random.default_rng(0)
    n = int(mb * 1e6 / 15)
    pts = np.zeros(n, dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("red", "u1"),
                             ("green", "u1"), ("blue", "u1")])
    for k in "xyz":
        pts[k] = rng.uniform(-1, 1, n)
    head = (f"ply\nformat binary_little_endian 1.0\nelement vertex {n}\nproperty float x\n"
            "property float y\nproperty float z\nproperty uchar red\nproperty uchar green\n"
            "property uchar blue\nend_header\n").encode()
    (tmp / "points.ply").write_bytes(head + pts.tobytes())
    rows = rng.uniform(-1, 1, (int(mb * 1e6 / 30), 3))
    text = "\n".join(" ".join(f"{v:.6f}" for v in r) for r in rows[: len(rows)]) + "\n"
    (tmp / "ascii.ply").write_text(
        f"ply\nformat ascii 1.0\nelement vertex {len(rows)}\nproperty float x\nproperty float y\n"
        f"property float z\nend_header\n" + text)
    (tmp / "mesh.obj").write_text("".join(f"v {line}\n" for line in text.splitlines())
                                  + "f 1 2 3\n")
    m = int(mb * 1e6 / 50)
    tri = np.zeros(m, dtype=[("n", "<f4", 3), ("v", "<f4", 9), ("a", "<u2")])
    tri["v"] = rng.uniform(-1, 1, (m, 9))
    (tmp / "mesh.stl").write_bytes(b"\0" * 80 + struct.pack("<I", m) + tri.tobytes())
    k = int(mb * 1e6 / 12) // 3 * 3
    pos = rng.uniform(-1, 1, (k, 3)).astype("<f4")
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
           "nodes": [{"mesh": 0}], "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
           "accessors": [{"bufferView": 0, "componentType": 5126, "count": k, "type": "VEC3",
                          "min": [-1, -1, -1], "max": [1, 1, 1]}],
           "bufferViews": [{"buffer": 0, "byteLength": pos.nbytes}],
           "buffers": [{"byteLength": pos.nbytes}]}
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    body = struct.pack("<II", len(js), 0x4E4F534A) + js
    body += struct.pack("<II", pos.nbytes, 0x004E4942) + pos.tobytes()
    (tmp / "mesh.glb").write_bytes(struct.pack("<III", 0x46546C67, 2, 12 + len(body)) + body)


def _child(mode: str, path: str, out: str) -> None:
    from harness.core.errors import AuditError
    from harness.scenes.fileformats import check_finite_vertices, detect_format
    from harness.scenes.gltf_limits import check_gltf_file
    from harness.scenes.importers.dispatch import import_file
    from harness.scenes.importers.meshobject import _measure_obj
    from harness.scenes.meshbytes import mesh_bytes

    start = time.perf_counter()
    said = ""
    try:
        if mode == "import":
            import_file(Path(path), out_root=Path(out), generator="bench", prompt_id="p",
                        prompt="bench", asset_root=Path(path).parent)
        elif mode == "read":  # what an import reads in Python before Blender measures
            found = detect_format(path)
            if found.format == "gltf":
                check_gltf_file(path)
            else:
                check_finite_vertices(path, found.format)
            raw = mesh_bytes(path)
            if found.format == "obj":
                _measure_obj(Path(path), raw)
    except AuditError as exc:
        said = str(exc)
    elapsed = time.perf_counter() - start
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    print(json.dumps({"s": elapsed, "mb": max(me.ru_maxrss, kids.ru_maxrss) / 1024,
                      "said": said}))


def _run(mode: str, path: Path, out: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", mode, str(path), str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        return {"s": float("nan"), "mb": float("nan"),
                "said": "CRASHED: " + (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    mb = float(argv[argv.index("--mb") + 1]) if "--mb" in argv else 64.0
    ok = True
    with tempfile.TemporaryDirectory(prefix="t3d-bench-bounds-") as name:
        tmp = Path(name)
        print("oversized (sparse) files, imported; the bar: refused, "
              f"< {BAR_S:g} s, < {BAR_MB:g} MB peak RSS")
        print(f"{'file':28s} {'GiB':>5s} {'s':>6s} {'peak MB':>8s}  refusal")
        for size in (4 * GIB, 2 * GIB):
            for label, path in _oversized(tmp, size):
                got = _run("import", path, tmp / "out")
                refused = "over the input limit" in got["said"]
                within = refused and got["s"] < BAR_S and got["mb"] < BAR_MB
                ok &= within
                print(f"{label:28s} {size / GIB:5.0f} {got['s']:6.2f} {got['mb']:8.0f}  "
                      f"{got['said'][:150]}{'' if within else '  OVER THE BAR'}")
                os.truncate(path, 0)
        base = _run("read", tmp / "none", tmp / "out")["mb"]  # imports only: a missing file
        print(f"\nfiles within the bound, Python-side reads (bare process: {base:.0f} MB)")
        print(f"{'file':28s} {'MB':>7s} {'s':>6s} {'peak MB':>8s} {'extra MB':>9s} {'x size':>7s}")
        # built in a child: a peak of this process would be inherited by the readers' children
        subprocess.run([sys.executable, __file__, "--build", str(tmp), str(mb)], check=True,
                       cwd=ROOT)
        for label, path in REAL:
            path = tmp / path
            got = _run("read", path, tmp / "out")
            size = path.stat().st_size / 2**20
            extra = got["mb"] - base
            print(f"{label:28s} {size:7.1f} {got['s']:6.2f} {got['mb']:8.0f} {extra:9.0f} "
                  f"{extra / size:7.2f}{'  ' + got['said'][:80] if got['said'] else ''}")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--build":
        _write_real(Path(sys.argv[2]), float(sys.argv[3]))
        sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(*sys.argv[2:5])
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
