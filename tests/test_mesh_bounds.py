"""Mesh bodies within the one input bound (``harness.scenes.meshbytes``): every importer sizes
a file on its opened handle and refuses it above ``$T3D_AUDIT_MAX_INPUT_BYTES`` before reading
its body or handing it to Blender; header counts are never trusted beyond the body's bytes.
"""

from __future__ import annotations

import json
import os
import struct
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core import bounded_input
from harness.core.errors import ImportError_, SceneError
from harness.scenes.fileformats import (
    check_finite_vertices,
    detect_format,
    read_ply_vertices,
)
from harness.scenes.importers.dispatch import import_file
from tests._gltf_docs import glb, triangle
from tests._public_data import GENERATOR_OUTPUTS

pytest_plugins = ["pytester"]

GIB = 1 << 30
BOUND = "T3D_AUDIT_MAX_INPUT_BYTES"


def _sparse(path: Path, head: bytes, size: int) -> Path:
    """``head`` then zeros up to ``size`` bytes, without writing them (a sparse file)."""
    path.write_bytes(head)
    os.truncate(path, size)
    return path


def _long_header_ply(path: Path, size: int, fmt: str = "binary_little_endian") -> Path:
    """A PLY with a header longer than the 64 KiB format probe, whose vertex count fits the
    ``size``-byte body exactly (binary xyz floats): a header that does not lie."""
    comments = "".join(f"comment padding line {i:05d} {'x' * 40}\n" for i in range(1500))
    stub = f"ply\nformat {fmt} 1.0\n{comments}element vertex {{n:012d}}\nproperty float x\n" \
           "property float y\nproperty float z\nend_header\n"
    head_len = len(stub.format(n=0))
    header = stub.format(n=(size - head_len) // 12).encode()
    return _sparse(path, header, size)


def _one_line(exc: BaseException, path: Path) -> str:
    text = str(exc)
    assert "\n" not in text and str(path) in text, text
    return text


@pytest.fixture
def no_blender(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if an import reaches Blender's measuring child."""

    def refuse(*_a, **_k):
        raise AssertionError("the file reached Blender")

    import harness.render.gltfmeasure as gltfmeasure
    import harness.scenes.importers.gltf as gltf

    monkeypatch.setattr(gltfmeasure, "run_jobs", refuse)
    monkeypatch.setattr(gltf, "run_jobs", refuse)


def _import(path: Path, out: Path) -> None:
    import_file(path, out_root=out, generator="g", prompt_id="p", prompt="a thing",
                asset_root=path.parent)


# -- the sparse 4 GB PLY and its 2 GB sibling ------------------------------------------------------


@pytest.mark.parametrize("size", [4 * GIB, 2 * GIB])
@pytest.mark.parametrize("fmt", ["binary_little_endian", "ascii"])
def test_a_sparse_ply_over_the_bound_is_refused_in_one_line_without_reading_it(
        tmp_path: Path, size: int, fmt: str, no_blender: None) -> None:
    path = _long_header_ply(tmp_path / "huge.ply", size, fmt)
    tracemalloc.start()
    try:
        for read in (detect_format, read_ply_vertices,
                     lambda p: check_finite_vertices(p, "ply"),
                     lambda p: _import(p, tmp_path / "out")):
            with pytest.raises(ImportError_) as info:
                read(path)
            text = _one_line(info.value, path)
            assert f"is {size} bytes, over the input limit of {256 << 20} bytes" in text
            assert BOUND in text
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20  # a header probe, never the body


# -- every format, oversized under a lowered bound --------------------------------------------------


def _formats(tmp_path: Path) -> dict[str, tuple[Path, Path]]:
    """name -> (file to import, the file the refusal names), each over 4 KiB."""
    rows = np.random.default_rng(0).uniform(-1, 1, (600, 3))
    out: dict[str, tuple[Path, Path]] = {}
    obj = tmp_path / "big.obj"
    obj.write_text("".join(f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in rows) + "f 1 2 3\n")
    out["obj"] = (obj, obj)
    ply = tmp_path / "mesh.ply"
    ply.write_bytes(b"ply\nformat binary_little_endian 1.0\nelement vertex 600\nproperty float x\n"
                    b"property float y\nproperty float z\nelement face 1\n"
                    b"property list uchar int vertex_index\nend_header\n"
                    + rows.astype("<f4").tobytes() + struct.pack("<Biii", 3, 0, 1, 2))
    out["ply mesh"] = (ply, ply)
    ascii_ply = tmp_path / "points.ply"
    ascii_ply.write_text("ply\nformat ascii 1.0\nelement vertex 600\nproperty float x\n"
                         "property float y\nproperty float z\nend_header\n"
                         + "".join(f"{x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in rows))
    out["ply points ascii"] = (ascii_ply, ascii_ply)
    props = ["x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1",
             "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"]
    splats = tmp_path / "splats.ply"
    splats.write_bytes(("ply\nformat binary_little_endian 1.0\nelement vertex 100\n"
                        + "".join(f"property float {p}\n" for p in props) + "end_header\n").encode()
                       + np.ones((100, len(props)), dtype="<f4").tobytes())
    out["splats"] = (splats, splats)
    stl = tmp_path / "binary.stl"
    stl.write_bytes(b"\0" * 80 + struct.pack("<I", 100)
                    + np.ones((100, 25), dtype="<u2").tobytes())
    out["stl binary"] = (stl, stl)
    stl_text = tmp_path / "text.stl"
    facet = "facet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n" \
            "endloop\nendfacet\n"
    stl_text.write_text("solid s\n" + facet * 60 + "endsolid s\n")
    out["stl ascii"] = (stl_text, stl_text)
    doc, binary = triangle()
    big_glb = tmp_path / "big.glb"
    doc_glb = json.loads(json.dumps(doc))
    doc_glb["buffers"][0]["byteLength"] = 8192
    big_glb.write_bytes(glb(doc_glb, binary + b"\0" * (8192 - len(binary))))
    out["glb"] = (big_glb, big_glb)
    gltf_dir = tmp_path / "gltf"
    gltf_dir.mkdir()
    (gltf_dir / "data.bin").write_bytes(binary + b"\0" * (8192 - len(binary)))
    doc["buffers"][0].update(uri="data.bin", byteLength=8192)
    (gltf_dir / "small.gltf").write_text(json.dumps(doc))
    out["gltf with a big .bin"] = (gltf_dir / "small.gltf", gltf_dir / "data.bin")
    usda = tmp_path / "big.usda"
    usda.write_text('#usda 1.0\n(\n    doc = "' + "x" * 5000 + '"\n)\ndef Mesh "m"\n{\n}\n')
    out["usda"] = (usda, usda)
    usdz = tmp_path / "big.usdz"
    with zipfile.ZipFile(usdz, "w", zipfile.ZIP_STORED) as z:
        z.writestr("root.usda", usda.read_text())
    out["usdz"] = (usdz, usdz)
    return out


def test_each_format_over_a_lowered_bound_is_refused_before_blender(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_blender: None) -> None:
    files = _formats(tmp_path)
    monkeypatch.setenv(BOUND, "4K")
    for name, (path, named) in files.items():
        with pytest.raises(ImportError_) as info:
            _import(path, tmp_path / f"out-{path.stem}")
        text = _one_line(info.value, named)
        assert "over the input limit of 4096 bytes" in text, (name, text)
        assert BOUND in text, name
        assert not (tmp_path / f"out-{path.stem}").exists(), name  # nothing written


def test_an_oversized_obj_is_refused_by_the_reader_of_every_importer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.scenes.importers.meshobject import import_object_file

    obj = _formats(tmp_path)["obj"][0]
    monkeypatch.setenv(BOUND, "4K")
    with pytest.raises(ImportError_, match="over the input limit of 4096 bytes"):
        import_object_file(obj, out_root=tmp_path / "o", meta={}, label="x")


def test_the_renderer_refuses_an_oversized_asset_before_blender(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The renderer's own asset path (OBJ goes straight to bpy.ops.wm.obj_import) is sized
    first: an over-bound asset never reaches Blender."""
    from harness.render import bpyaccess
    from harness.render.asset_import import AssetLibrary
    from harness.render.failures import AssetImportFailed
    from harness.render.materials import Materials
    from harness.scenes.model import Room, Scene

    obj = _sparse(tmp_path / "huge.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", 4 * GIB)
    monkeypatch.setattr(bpyaccess, "load", lambda: pytest.fail("Blender was reached"))
    library = AssetLibrary(Materials())  # no Blender session needed to refuse
    scene = Scene(id="s", generator="g", prompt_id="p", prompt="x", prompt_source="t",
                  room=Room(size=(1.0, 1.0), wall_height=1.0), objects=())
    with pytest.raises(AssetImportFailed) as info:
        library.asset(obj, scene, "o1")
    assert "over the input limit" in str(info.value) and BOUND in str(info.value)


def test_a_scene_asset_over_the_bound_is_refused_when_the_scene_is_loaded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.scenes.load import check_asset_path

    (tmp_path / "assets").mkdir()
    _sparse(tmp_path / "assets" / "a.ply", b"ply\n", 4 * GIB)
    with pytest.raises(SceneError) as info:
        check_asset_path("assets/a.ply", tmp_path.resolve(), path="scene.json",
                         where="/objects/0/asset")
    assert "asset 'assets/a.ply': the asset file is 4294967296 bytes" in str(info.value)
    assert info.value.pointer == "/objects/0/asset"


def test_a_file_an_asset_pulls_in_is_bounded_too(tmp_path: Path) -> None:
    from harness.scenes.assetdeps import dependency_files

    (tmp_path / "m.obj").write_text("mtllib m.mtl\nv 0 0 0\n")
    (tmp_path / "m.mtl").write_text("newmtl a\nmap_Kd tex.png\n")
    _sparse(tmp_path / "tex.png", b"\x89PNG", 4 * GIB)
    with pytest.raises(SceneError, match="the file the asset pulls in is 4294967296 bytes"):
        dependency_files(tmp_path.resolve(), (tmp_path / "m.obj").resolve())


def test_usdz_layers_are_bounded_once_decompressed(tmp_path: Path, monkeypatch) -> None:
    from harness.scenes.assetrefs import usdz_layers

    usdz = tmp_path / "bomb.usdz"
    with zipfile.ZipFile(usdz, "w", zipfile.ZIP_DEFLATED) as z:  # 2 x 6 KB of text in ~100 B
        z.writestr("a.usda", "#usda 1.0\n" + " " * 6000)
        z.writestr("b.usda", "#usda 1.0\n" + " " * 6000)
    assert usdz.stat().st_size < 4096
    monkeypatch.setenv(BOUND, "8K")
    with pytest.raises(SceneError, match=r"up to 'b\.usda' are over the input limit of 8192"):
        usdz_layers(usdz)


# -- header counts never trusted -------------------------------------------------------------------


def test_a_glb_whose_buffer_byte_length_lies_is_refused_before_blender(
        tmp_path: Path, no_blender: None) -> None:
    doc, binary = triangle()
    doc["buffers"][0]["byteLength"] = 1 << 40
    path = tmp_path / "lies.glb"
    path.write_bytes(glb(doc, binary))
    with pytest.raises(ImportError_, match=r"byteLength 1099511627776 exceeds the 44 bytes"):
        _import(path, tmp_path / "out")


def test_a_glb_whose_bin_chunk_length_lies_is_refused_before_blender(
        tmp_path: Path, no_blender: None) -> None:
    doc, binary = triangle()
    raw = bytearray(glb(doc, binary))
    bin_at = 20 + struct.unpack_from("<I", raw, 12)[0]
    struct.pack_into("<I", raw, bin_at, 0xFFFFFFF0)  # the BIN chunk claims ~4 GiB
    path = tmp_path / "chunk.glb"
    path.write_bytes(bytes(raw))
    with pytest.raises(ImportError_, match="GLB chunk runs past the end of the file"):
        _import(path, tmp_path / "out")


def test_a_sparse_glb_reads_its_json_only(tmp_path: Path, monkeypatch) -> None:
    """Under a raised bound the 1 GiB sparse BIN chunk of a GLB is mapped, never read: the
    JSON is all read_gltf takes."""
    from harness.scenes.importers.gltf_io import read_gltf

    doc, binary = triangle()
    small = glb(doc, binary)
    size = GIB
    js_len = struct.unpack_from("<I", small, 12)[0]
    head = bytearray(small[: 20 + js_len])
    struct.pack_into("<I", head, 8, size)
    head += struct.pack("<II", size - len(head) - 8, 0x004E4942)
    path = _sparse(tmp_path / "sparse.glb", bytes(head), size)
    monkeypatch.setenv(BOUND, "2G")
    tracemalloc.start()
    try:
        g = read_gltf(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert g.doc["asset"]["version"] == "2.0"
    assert peak < 1 << 20


@pytest.mark.parametrize("count", [10**9, 2**63, 10**30])
@pytest.mark.parametrize("fmt", ["binary_little_endian", "binary_big_endian", "ascii"])
def test_a_ply_vertex_count_beyond_its_body_is_refused_before_allocating(
        tmp_path: Path, count: int, fmt: str) -> None:
    path = tmp_path / "liar.ply"
    path.write_bytes(f"ply\nformat {fmt} 1.0\nelement vertex {count}\nproperty float x\n"
                     "property float y\nproperty float z\nend_header\n".encode() + b"\0" * 120)
    for read in (read_ply_vertices, detect_format, lambda p: check_finite_vertices(p, "ply")):
        with pytest.raises(ImportError_) as info:
            read(path)
        assert f"declares vertex {count}" in _one_line(info.value, path)


_PLY_TYPES = st.sampled_from(["uchar", "short", "int", "float", "double"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(count=st.integers(0, 10**40), body=st.integers(0, 4096), ptype=_PLY_TYPES,
       fmt=st.sampled_from(["binary_little_endian", "ascii"]), width=st.integers(1, 6))
def test_any_declared_count_never_allocates_more_than_the_body(
        tmp_path: Path, count: int, body: int, ptype: str, fmt: str, width: int) -> None:
    """Whatever the header declares, reading allocates at most a small multiple of the file:
    the result holds 8 bytes per value, and a value takes at least one byte of the body."""
    path = tmp_path / "any.ply"
    props = "".join(f"property {ptype} p{i}\n" for i in range(width))
    fill = b"1 " * (body // 2) if fmt == "ascii" else b"\x01" * body
    path.write_bytes(f"ply\nformat {fmt} 1.0\nelement vertex {count}\n{props}end_header\n"
                     .encode() + fill)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        try:
            table = read_ply_vertices(path)
        except ImportError_ as exc:
            assert "\n" not in str(exc)
            table = {}
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(a.nbytes for a in table.values()) <= 8 * size
    assert peak <= 64 * 1024 + 20 * size


# -- a file that grows while it is read ------------------------------------------------------------


def _shrunk_stat(monkeypatch: pytest.MonkeyPatch, reported: int) -> None:
    """``os.fstat`` reports ``reported`` bytes: the file grew after it was sized."""
    real = os.fstat

    def fstat(fd: int) -> os.stat_result:
        st = real(fd)
        fields = list(st[:10])
        fields[6] = min(st.st_size, reported)
        return os.stat_result(fields)

    monkeypatch.setattr(bounded_input.os, "fstat", fstat)


def test_a_file_that_grows_past_the_bound_while_read_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _formats(tmp_path)
    ply = files["ply points ascii"][0]
    obj = files["obj"][0]
    monkeypatch.setenv(BOUND, "4K")
    _shrunk_stat(monkeypatch, 100)
    with pytest.raises(ImportError_) as info:
        read_ply_vertices(ply)
    assert "grew while read, over the input limit of 4096 bytes" in _one_line(info.value, ply)
    from harness.scenes.meshbytes import mesh_bytes

    with pytest.raises(ImportError_, match="grew while read"):
        mesh_bytes(obj)
    with pytest.raises(bounded_input.InputFileError, match="grew while read"):
        bounded_input.read_bytes(obj, what="OBJ file")


# -- the readers themselves -----------------------------------------------------------------------


def test_ascii_ply_vertices_follow_earlier_elements_and_pick_properties(tmp_path: Path) -> None:
    path = tmp_path / "a.ply"
    path.write_text("ply\nformat ascii 1.0\nelement camera 2\nproperty float f\n"
                    "element vertex 2\nproperty float x\nproperty float y\nproperty float z\n"
                    "property uchar red\nend_header\n7\n8\n1 2 3 255\n4 5 6 0\n")
    got = read_ply_vertices(path, ("x", "z"))
    assert sorted(got) == ["x", "z"]
    assert got["x"].tolist() == [1.0, 4.0] and got["z"].tolist() == [3.0, 6.0]
    assert read_ply_vertices(path)["red"].tolist() == [255.0, 0.0]


def test_obj_box_reads_across_blocks_and_names_the_bad_line(monkeypatch) -> None:
    from harness.scenes.importers import objbox

    monkeypatch.setattr(objbox, "BLOCK_BYTES", 16)  # many blocks: one line or two each
    raw = b"mtllib a.mtl\r\nv 1 2 3 0.5 0.5 0.5\r\nvn 0 0 1\nv -1 5 2\rv 0 0 -7 1 1\nf 1 2 3\n"
    box = objbox.obj_box(raw, "t.obj")
    assert box.lo.tolist() == [-1, 0, -7] and box.hi.tolist() == [1, 5, 3]
    assert box.width == 7 and box.mtllibs == ("a.mtl",) and box.vertices == 3
    with pytest.raises(ImportError_, match="bad vertex on line 4"):
        objbox.obj_box(b"v 0 0 0\nv 1 1 1\nf 1 2 3\nv 1 nan 2\n", "t.obj")
    with pytest.raises(ImportError_, match="no vertices"):
        objbox.obj_box(b"f 1 2 3\n", "t.obj")


@settings(max_examples=40, deadline=None)
@given(lines=st.lists(st.sampled_from([b"v 1 2 3", b"v -4.5 0 9 0.1 0.2 0.3", b"vn 0 1 0",
                                       b"f 1 2 3", b"# c", b"", b"v 7e2 -3 1e-3"]),
                      min_size=1, max_size=30),
       ending=st.sampled_from([b"\n", b"\r\n", b"\r"]), block=st.integers(1, 64))
def test_block_reading_gives_the_whole_file_answer(lines, ending, block) -> None:
    """The box and the rebased bytes do not depend on where the blocks are cut."""
    from harness.scenes.importers import meshobject, objbox

    raw = ending.join(lines) + ending
    axes = np.array([[0, 1, 0], [0, 0, -1], [-1, 0, 0]])
    whole_rebased = meshobject.rebase_obj(raw, axes)
    try:
        whole = objbox.obj_box(raw, "t.obj")
    except ImportError_:
        whole = None
    saved = objbox.BLOCK_BYTES
    objbox.BLOCK_BYTES = block
    try:
        assert meshobject.rebase_obj(raw, axes) == whole_rebased
        try:
            cut = objbox.obj_box(raw, "t.obj")
        except ImportError_:
            cut = None
    finally:
        objbox.BLOCK_BYTES = saved
    assert (whole is None) == (cut is None)
    if whole is not None:
        assert whole.lo.tolist() == cut.lo.tolist() and whole.hi.tolist() == cut.hi.tolist()
        assert whole.width == cut.width and whole.vertices == cut.vertices


# -- real generator outputs still read ------------------------------------------------------------


def _public_files() -> list[Path]:
    if not GENERATOR_OUTPUTS.is_dir():
        return []
    return sorted(p for p in GENERATOR_OUTPUTS.iterdir()
                  if p.suffix.lower() in (".obj", ".ply", ".glb", ".gltf", ".usdz"))


@pytest.mark.skipif(not _public_files(), reason="public generator outputs absent")
def test_real_generator_outputs_read_within_the_bound() -> None:
    from harness.scenes.gltf_limits import check_gltf_file
    from harness.scenes.importers.meshobject import _measure_obj
    from harness.scenes.meshbytes import mesh_bytes

    for path in _public_files():
        found = detect_format(path)
        if found.format == "gltf":
            check_gltf_file(path)
        elif found.format == "obj":
            box = _measure_obj(path, mesh_bytes(path))
            assert np.all(np.asarray(box["hi"]) > np.asarray(box["lo"])), path
        elif found.format == "ply":
            check_finite_vertices(path, "ply")
            if found.variant != "mesh":
                assert len(read_ply_vertices(path, ("x", "y", "z"))["x"]) > 0, path


@pytest.mark.slow
@pytest.mark.skipif(not _public_files(), reason="public generator outputs absent")
def test_real_generator_outputs_import(tmp_path: Path) -> None:
    for k, path in enumerate(_public_files()):
        scene = import_file(path, out_root=tmp_path / f"o{k}", generator="g", prompt_id=f"p{k}",
                            prompt="a generated object")
        assert scene.objects, path


def test_check_size_reports_the_size_and_reads_nothing(tmp_path: Path) -> None:
    path = _sparse(tmp_path / "f.bin", b"", 3 * GIB)
    with pytest.raises(bounded_input.InputFileError) as info:
        bounded_input.checked_size(path, what="mesh file")
    assert info.value.what == ("the mesh file is 3221225472 bytes, over the input limit of "
                               "268435456 bytes")
    assert bounded_input.checked_size(path, limit=4 * GIB) == 3 * GIB
    head, size = bounded_input.read_head(path, 8, limit=4 * GIB)
    assert head == b"\0" * 8 and size == 3 * GIB


# -- an audit whose scene set holds an oversized asset ----------------------------------------------


@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_audit_refuses_an_oversized_asset_in_one_line(pytester: pytest.Pytester,
                                                         workers: str) -> None:
    from tests._audit_project import make_project, run_audit

    root = make_project(pytester)
    asset = sorted((root / "scenes" / "assets").glob("*.obj"))[0]
    os.truncate(asset, 4 * GIB)  # the same text, then a sparse 4 GiB body
    result = run_audit(pytester, f"big{workers}", "-n", workers)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret != 0
    lines = [ln for ln in out.splitlines() if "over the input limit" in ln]
    assert lines and f"assets/{asset.name}" in lines[0], out[-2000:]
    assert "4294967296 bytes" in lines[0] and BOUND in lines[0]
    assert "Traceback" not in out and "MemoryError" not in out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(0, 1 << 34), bound=st.integers(1, 1 << 34))
def test_the_bound_refuses_exactly_the_files_above_it(tmp_path: Path, size: int, bound: int) -> None:
    from harness.scenes.meshbytes import mesh_size

    path = _sparse(tmp_path / "any.ply", b"", size)
    os.environ[BOUND] = str(bound)
    try:
        if size > bound:
            with pytest.raises(ImportError_, match=f"is {size} bytes, over the input limit of {bound} "):
                mesh_size(path)
        else:
            assert mesh_size(path) == size
    finally:
        del os.environ[BOUND]
