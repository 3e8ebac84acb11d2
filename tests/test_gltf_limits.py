"""glTF/GLB bounds checked before Blender reads a file (``harness.scenes.gltf_limits``).

Hostile files (an accessor of 2**31 - 1 elements in a 404-byte file, 200,000
nodes, a 30000 x 30000 PNG texture, a 1 TiB buffer declared for 36 bytes) are refused in
milliseconds with one-line errors naming the field; the Khronos samples still pass.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import struct
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, features

from harness.core.errors import AuditError, ImportError_, SceneError
from harness.scenes.gltf_limits import (
    LIMITS_ENV,
    GltfLimits,
    check_gltf,
    check_gltf_file,
    element_size,
    image_size,
)
from harness.scenes.importers import import_gltf
from harness.scenes.importers.gltf_io import read_gltf
from tests._gltf_docs import glb, png_header, triangle, write_glb
from tests._public_data import GENERATOR_OUTPUTS, SAMPLES

INVALID = {"IndexOutOfRange.gltf": 255, "AllIndicesOutOfRange.gltf": 65535}


def refused(path: Path, limits: GltfLimits | None = None) -> ImportError_:
    with pytest.raises(ImportError_) as info:
        check_gltf(read_gltf(path), limits)
    err = info.value
    assert "\n" not in str(err) and err.path == str(path)
    return err


# -- the four attacks on the glTF limits ------------------------------------------------


def test_accessor_count_2_31_in_a_tiny_file_is_refused_before_allocating(tmp_path: Path) -> None:
    doc, binary = triangle()
    doc["accessors"][0]["count"] = 2**31 - 1
    doc["accessors"][0].pop("min"), doc["accessors"][0].pop("max")
    doc["buffers"][0]["uri"] = (
        "data:application/octet-stream;base64," + base64.b64encode(binary[:36]).decode()
    )
    doc["buffers"][0]["byteLength"] = 36
    doc["bufferViews"] = doc["bufferViews"][:1]
    doc["meshes"][0]["primitives"][0].pop("indices")
    doc["accessors"] = doc["accessors"][:1]
    path = tmp_path / "count.gltf"
    path.write_text(json.dumps(doc, separators=(",", ":")))
    assert len(path.read_bytes()) < 450  # the attack file is 404 bytes
    err = refused(path)
    assert (
        err.what == "accessors[0].count 2147483647 × 12 bytes exceeds bufferViews[0].byteLength 36"
    )
    assert err.pointer == "/accessors/0/count"
    # through the importer: refused before Blender starts, in a process that stays small
    code = (
        "import sys\n"
        "from harness.core.errors import ImportError_\n"
        "from harness.scenes.importers import import_gltf\n"
        "try:\n"
        f"    import_gltf({str(path)!r}, out_root={str(tmp_path / 'o')!r}, generator='g', prompt_id='p', prompt='x')\n"
        "except ImportError_ as e:\n"
        "    print('refused', e.pointer)\n"
        # VmHWM: this process's peak RSS (ru_maxrss would carry the forking parent's over exec)
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))\n"
    )
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - start
    refused_line, rss_kb = done.stdout.split("\n")[:2]
    assert refused_line == "refused /accessors/0/count", done.stderr
    assert int(rss_kb) < 400 * 1024  # KiB: the interpreter and numpy, never the declared 24 GB
    assert elapsed < 60


def test_two_hundred_thousand_nodes_are_refused_fast(tmp_path: Path) -> None:
    doc, binary = triangle()
    doc["nodes"] = [{"mesh": 0}] * 200_000
    doc["scenes"] = [{"nodes": list(range(200_000))}]
    path = write_glb(tmp_path, doc, binary)
    start = time.monotonic()
    err = refused(path)
    assert time.monotonic() - start < 5.0
    assert err.what == "nodes has 200000 entries, over the limit of 20000"
    assert err.pointer == "/nodes" and LIMITS_ENV in (err.hint or "")


def test_json_too_large_to_parse_is_refused_before_parsing(tmp_path: Path, monkeypatch) -> None:
    doc, binary = triangle()
    doc["nodes"] = [{"mesh": 0}] * 5_000
    path = write_glb(tmp_path, doc, binary)
    monkeypatch.setenv(LIMITS_ENV, "json_containers=4000")
    parsed = []
    monkeypatch.setattr("json.loads", lambda *a, **k: parsed.append(1))
    with pytest.raises(ImportError_) as info:
        read_gltf(path)
    # 5,000 nodes, plus the triangle's 21 other objects and arrays
    assert info.value.what == "the glTF JSON holds 5021 objects and arrays, over the limit of 4000"
    assert parsed == [] and LIMITS_ENV in (info.value.hint or "")


def test_a_30000_pixel_square_png_texture_is_refused(tmp_path: Path) -> None:
    doc, binary = triangle()
    (tmp_path / "huge.png").write_bytes(png_header(30_000, 30_000))
    doc["images"] = [{"uri": "huge.png"}]
    doc["textures"] = [{"source": 0}]
    err = refused(write_glb(tmp_path, doc, binary))
    assert err.what.startswith(
        "images[0] is a 30000 × 30000 PNG (900000000 pixels), over the limit"
    )
    assert err.pointer == "/images/0"
    # the same bytes embedded in the BIN chunk (a bufferView image)
    png = png_header(30_000, 30_000)
    doc["images"] = [{"bufferView": 2, "mimeType": "image/png"}]
    doc["bufferViews"].append({"buffer": 0, "byteOffset": 44, "byteLength": len(png)})
    doc["buffers"][0]["byteLength"] = 44 + len(png)
    assert "30000 × 30000 PNG" in refused(write_glb(tmp_path, doc, binary + png)).what


def test_a_one_tebibyte_buffer_for_36_bytes_is_refused(tmp_path: Path) -> None:
    doc, binary = triangle()
    doc["buffers"][0]["byteLength"] = 1 << 40
    path = write_glb(tmp_path, doc, binary[:36])
    err = refused(path)
    assert (
        err.what == "buffers[0].byteLength 1099511627776 exceeds the 36 bytes of the GLB BIN chunk"
    )
    assert err.pointer == "/buffers/0/byteLength"
    (tmp_path / "x.bin").write_bytes(binary[:36])  # the same for a 36-byte .bin beside a .gltf
    doc["buffers"][0]["uri"] = "x.bin"
    (tmp_path / "x.gltf").write_text(json.dumps(doc))
    assert refused(tmp_path / "x.gltf").what == (
        "buffers[0].byteLength 1099511627776 exceeds the 36 bytes of file 'x.bin'"
    )


@pytest.mark.parametrize("form", ["file", "data"])
def test_buffer_length_is_checked_against_files_and_data_uris(tmp_path: Path, form: str) -> None:
    doc, binary = triangle()
    if form == "file":
        (tmp_path / "x.bin").write_bytes(binary)
        doc["buffers"][0]["uri"] = "x.bin"
        real = "file 'x.bin'"
    else:
        doc["buffers"][0]["uri"] = (
            "data:application/octet-stream;base64," + base64.b64encode(binary).decode()
        )
        real = "its data: URI"
    path = tmp_path / "x.gltf"
    path.write_text(json.dumps(doc))
    check_gltf(read_gltf(path))  # valid as written
    doc["buffers"][0]["byteLength"] = 45
    path.write_text(json.dumps(doc))
    assert refused(path).what == f"buffers[0].byteLength 45 exceeds the 44 bytes of {real}"


# -- the other rules, one case each -----------------------------------------------------------------


def _mutations():
    def set_(path, value):
        def apply(doc):
            target = doc
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value

        return apply

    return [
        (
            set_(("bufferViews", 1, "byteLength"), 60),
            "/bufferViews/1/byteLength",
            "bufferViews[1] byteOffset 36 + byteLength 60 = 96 exceeds buffers[0].byteLength 44",
        ),
        (
            set_(("bufferViews", 0, "byteStride"), 6),
            "/bufferViews/0/byteStride",
            "bufferViews[0].byteStride 6 must be a multiple of 4 in [4, 252]",
        ),
        (
            set_(("bufferViews", 0, "byteStride"), 16),
            "/accessors/0/count",
            "accessors[0] byteOffset 0 + (count 3 - 1) × stride 16 + 12 bytes = 44 exceeds "
            "bufferViews[0].byteLength 36",
        ),
        (
            set_(("accessors", 0, "byteOffset"), 4),
            "/accessors/0/count",
            "accessors[0] byteOffset 4 + (count 3 - 1) × stride 12 + 12 bytes = 40 exceeds "
            "bufferViews[0].byteLength 36",
        ),
        (
            set_(("accessors", 0, "componentType"), 5124),
            "/accessors/0/componentType",
            "accessors[0].componentType 5124 is not a glTF component type",
        ),
        (
            set_(("accessors", 0, "count"), 0),
            "/accessors/0/count",
            "accessors[0].count 0 must be a whole number >= 1",
        ),
        (
            set_(("accessors", 1, "count"), 4),
            "/accessors/1/count",
            "accessors[1].count 4 × 2 bytes exceeds bufferViews[1].byteLength 6",
        ),
        (
            set_(("accessors", 0, "bufferView"), 7),
            "/accessors/0/bufferView",
            "accessors[0].bufferView 7 is not an index into bufferViews",
        ),
        (
            set_(("meshes", 0, "primitives", 0, "attributes", "NORMAL"), 9),
            "/meshes/0/primitives/0/attributes/NORMAL",
            "meshes[0].primitives[0].attributes.NORMAL 9 is not an index into accessors",
        ),
        (
            set_(("nodes", 0, "children"), [0]),
            "/nodes/0/children/0",
            "node 0 has more than one parent (nodes[0] too)",
        ),
        (
            set_(("nodes",), [{"children": [1]}, {"children": [0]}]),
            "/nodes/0",
            "the node hierarchy has a cycle through nodes[0]",
        ),
        (
            set_(("nodes",), [{"children": [2]}, {"children": [2]}, {}]),
            "/nodes/1/children/0",
            "node 2 has more than one parent (nodes[1] too)",
        ),
        (
            set_(("buffers", 0, "byteLength"), 0),
            "/buffers/0/byteLength",
            "buffers[0].byteLength 0 must be a whole number >= 1",
        ),
    ]


@pytest.mark.parametrize(("mutate", "pointer", "what"), _mutations())
def test_each_rule_names_its_field(tmp_path: Path, mutate, pointer: str, what: str) -> None:
    doc, binary = triangle()
    mutate(doc)
    err = refused(write_glb(tmp_path, doc, binary))
    assert (err.what, err.pointer) == (what, pointer)


def test_index_out_of_range_is_read_from_the_index_buffer(tmp_path: Path) -> None:
    doc, binary = triangle()
    bad = binary[:36] + np.array([0, 1, 3], dtype="<u2").tobytes() + b"\0\0"
    err = refused(write_glb(tmp_path, doc, bad))
    assert err.what == (
        "meshes[0].primitives[0].indices: accessors[1] holds index 3, out of range for 3 "
        "vertices (POSITION count)"
    )
    assert err.pointer == "/meshes/0/primitives/0/indices"


def test_attributes_must_be_as_long_as_position(tmp_path: Path) -> None:
    doc, binary = triangle()
    doc["accessors"].append({"bufferView": 0, "componentType": 5126, "count": 2, "type": "VEC3"})
    doc["meshes"][0]["primitives"][0]["attributes"]["NORMAL"] = 2
    err = refused(write_glb(tmp_path, doc, binary))
    assert err.what == "meshes[0].primitives[0].attributes.NORMAL has 2 elements, POSITION 3"
    assert err.pointer == "/meshes/0/primitives/0/attributes/NORMAL"


def test_sparse_accessors(tmp_path: Path) -> None:
    doc, binary = triangle()
    sparse_idx = np.array([2], dtype="<u1").tobytes() + b"\0\0\0"
    sparse_val = np.array([5, 5, 5], dtype="<f4").tobytes()
    doc["bufferViews"] += [
        {"buffer": 0, "byteOffset": 44, "byteLength": 1},
        {"buffer": 0, "byteOffset": 48, "byteLength": 12},
    ]
    doc["buffers"][0]["byteLength"] = 60
    doc["accessors"][0]["sparse"] = {
        "count": 1,
        "indices": {"bufferView": 2, "componentType": 5121},
        "values": {"bufferView": 3},
    }
    data = binary + sparse_idx + sparse_val
    check_gltf(read_gltf(write_glb(tmp_path, doc, data)))  # valid
    doc["accessors"][0]["sparse"]["count"] = 2
    err = refused(write_glb(tmp_path, doc, data))
    assert err.what == (
        "accessors[0].sparse.indices byteOffset 0 + count 2 × 1 bytes exceeds "
        "bufferViews[2].byteLength 1"
    )
    doc["accessors"][0]["sparse"]["count"] = 1
    err = refused(write_glb(tmp_path, doc, binary + b"\x07\0\0\0" + sparse_val))
    assert err.what == "accessors[0].sparse.indices holds 7, not below count 3"
    doc["accessors"][0]["sparse"]["count"] = 4
    assert refused(write_glb(tmp_path, doc, data)).what == (
        "accessors[0].sparse.count 4 exceeds accessors[0].count 3"
    )


def test_accessor_without_buffer_view_is_bounded_by_the_count_limit(tmp_path: Path) -> None:
    doc, binary = triangle()
    doc["accessors"].append({"componentType": 5126, "count": 1 << 25, "type": "VEC3"})
    err = refused(write_glb(tmp_path, doc, binary))
    assert err.what == "accessors[2].count 33554432 is over the limit of 16777216 elements"
    small = GltfLimits(accessor_count=1 << 26, decoded_bytes=1 << 20)
    err = refused(write_glb(tmp_path, doc, binary), small)
    assert err.what.startswith(
        "the accessors up to accessors[2] decode to 402653226 bytes"
    )  # 2**25 × 12 + 36 + 6


def test_node_depth_limit(tmp_path: Path) -> None:
    doc, binary = triangle()
    doc["nodes"] = [{"children": [i + 1]} for i in range(50)] + [{"mesh": 0}]
    path = write_glb(tmp_path, doc, binary)
    check_gltf(read_gltf(path))
    assert refused(path, GltfLimits(node_depth=10)).what == (
        "nodes[11] is 11 levels deep, over the limit of 10"
    )


def test_total_texture_pixels(tmp_path: Path) -> None:
    doc, binary = triangle()
    (tmp_path / "a.png").write_bytes(png_header(1000, 1000))
    doc["images"] = [{"uri": "a.png"}, {"uri": "a.png"}]
    path = write_glb(tmp_path, doc, binary)
    check_gltf(read_gltf(path))
    err = refused(path, GltfLimits(total_texture_pixels=1_500_000))
    assert err.what == "the images up to images[1] hold 2000000 pixels, over the limit of 1500000"


def test_unknown_or_truncated_images_are_refused(tmp_path: Path) -> None:
    doc, binary = triangle()
    (tmp_path / "a.gif").write_bytes(b"GIF89a" + b"\0" * 40)
    (tmp_path / "b.png").write_bytes(png_header(4, 4)[:20])
    doc["images"] = [{"uri": "a.gif"}]
    path = write_glb(tmp_path, doc, binary)
    assert refused(path).what == "images[0]: not a PNG, JPEG, WebP or KTX2 image"
    doc["images"] = [{"uri": "b.png"}]
    assert refused(write_glb(tmp_path, doc, binary)).what == "images[0]: truncated PNG header"


def test_element_sizes_pad_matrix_columns() -> None:
    assert element_size(5126, "VEC3") == 12
    assert element_size(5121, "MAT2") == 8  # two 2-byte columns, each padded to 4
    assert element_size(5121, "MAT3") == 12
    assert element_size(5123, "MAT3") == 24
    assert element_size(5126, "MAT4") == 64
    assert element_size(5121, "SCALAR") == 1


def test_limits_from_the_environment() -> None:
    assert GltfLimits.from_env({}) == GltfLimits()
    lim = GltfLimits.from_env({LIMITS_ENV: "nodes=5, texture_pixels=1e8"})
    assert (lim.nodes, lim.texture_pixels, lim.meshes) == (5, 100_000_000, GltfLimits().meshes)
    for bad in ("nodes", "nodes=0", "nodes=x", "bogus=3", "nodes=-1"):
        with pytest.raises(AuditError, match=LIMITS_ENV):
            GltfLimits.from_env({LIMITS_ENV: bad})


# -- image headers against Pillow ---------------------------------------------------------------------


def _encoded(fmt: str, width: int, height: int, **kw) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, fmt, **kw)
    return out.getvalue()


@settings(max_examples=25, deadline=None)
@given(
    width=st.integers(1, 300),
    height=st.integers(1, 300),
    fmt=st.sampled_from(["PNG", "JPEG", "WEBP", "WEBPL"]),
)
def test_header_sizes_match_pillow(width: int, height: int, fmt: str) -> None:
    if fmt.startswith("WEBP") and not features.check("webp"):
        pytest.skip("Pillow built without WebP")
    kw = {"lossless": True} if fmt == "WEBPL" else {}
    data = _encoded(fmt[:4] if fmt.startswith("WEBP") else fmt, width, height, **kw)
    kind, w, h = image_size(data)
    with Image.open(io.BytesIO(data)) as im:
        assert (w, h) == im.size
    assert kind == {"PNG": "PNG", "JPEG": "JPEG"}.get(fmt, "WebP")


def test_jpeg_with_large_metadata_before_its_frame_header() -> None:
    data = _encoded("JPEG", 33, 17, exif=b"Exif\0\0" + b"\0" * 60_000)
    assert image_size(data) == ("JPEG", 33, 17)
    assert image_size(memoryview(data)) == ("JPEG", 33, 17)


def test_ktx2_header_counts_layers_and_faces() -> None:
    head = b"\xabKTX 20\xbb\r\n\x1a\n" + struct.pack("<IIIIIIII", 37, 1, 512, 256, 0, 0, 6, 1)
    assert image_size(head) == ("KTX2", 512, 256 * 6)


# -- the importer and the renderer call it ----------------------------------------------------------


def test_the_importer_refuses_before_blender(tmp_path: Path, monkeypatch) -> None:
    import harness.scenes.importers.gltf as gltf_importer

    def no_blender(*a, **k):
        raise AssertionError("Blender must not be started for a refused file")

    monkeypatch.setattr(gltf_importer, "run_jobs", no_blender)
    doc, binary = triangle()
    doc["buffers"][0]["byteLength"] = 1 << 40
    with pytest.raises(ImportError_, match="exceeds the 44 bytes of the GLB BIN chunk"):
        import_gltf(
            write_glb(tmp_path, doc, binary),
            out_root=tmp_path / "o",
            generator="g",
            prompt_id="p",
            prompt="x",
        )


def test_the_renderer_refuses_as_a_typed_asset_failure(tmp_path: Path) -> None:
    from harness.render.asset_import import AssetLibrary
    from harness.render.failures import AssetImportFailed
    from harness.render.materials import Materials

    doc, binary = triangle()
    doc["nodes"] = [{"mesh": 0}] * 30_000
    path = write_glb(tmp_path, doc, binary)
    scene = SimpleNamespace(id="gen.scene-1")
    with pytest.raises(AssetImportFailed) as info:  # raised before bpy is imported
        AssetLibrary(Materials()).asset(path, scene, "obj-0")  # type: ignore[arg-type]
    assert "refused: nodes has 30000 entries, over the limit of 20000 at /nodes" in str(info.value)
    assert info.value.kind == "asset_import_failed"


def test_a_bad_limits_variable_fails_the_render_not_the_run(tmp_path: Path, monkeypatch) -> None:
    from harness.render.asset_import import AssetLibrary
    from harness.render.failures import AssetImportFailed
    from harness.render.materials import Materials

    doc, binary = triangle()
    monkeypatch.setenv(LIMITS_ENV, "nodes=lots")
    with pytest.raises(AssetImportFailed, match="'nodes=lots' is not field=positive number"):
        AssetLibrary(Materials()).asset(
            write_glb(tmp_path, doc, binary), SimpleNamespace(id="s"), "o"
        )  # type: ignore[arg-type]


# -- real files -------------------------------------------------------------------------------------


def _real_files() -> list[Path]:
    return sorted(
        [
            *SAMPLES.glob("*/*.glb"),
            *SAMPLES.glob("*/*.gltf"),
            *GENERATOR_OUTPUTS.glob("*.glb"),
            *GENERATOR_OUTPUTS.glob("*.gltf"),
        ]
    )


def test_every_valid_sample_passes_and_the_invalid_ones_say_why() -> None:
    if not SAMPLES.is_dir():
        pytest.skip(f"public glTF samples not present at {SAMPLES}")
    files = _real_files()
    assert len(files) >= 20
    for path in files:
        if path.name in INVALID:
            err = refused(path)
            assert err.pointer == "/meshes/0/primitives/0/indices"
            assert f"holds index {INVALID[path.name]}, out of range for 24 vertices" in err.what
        else:
            check_gltf_file(path)


# -- fuzz: only typed errors ---------------------------------------------------------------------------


_values = st.none() | st.booleans() | st.integers(-3, 2**40) | st.text(max_size=4)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_fuzz_mutated_documents_give_typed_errors(tmp_path_factory, data) -> None:
    doc, binary = triangle()
    doc["images"] = [{"bufferView": 1}]
    for _ in range(data.draw(st.integers(1, 3))):
        section = data.draw(
            st.sampled_from(["accessors", "bufferViews", "buffers", "nodes", "meshes", "images"])
        )
        items = doc[section]
        item = items[data.draw(st.integers(0, len(items) - 1))]
        key = data.draw(st.sampled_from([*sorted(item), "byteStride", "sparse", "children", "uri"]))
        item[key] = data.draw(_values | st.lists(_values, max_size=3))
    path = tmp_path_factory.mktemp("f") / "x.glb"
    path.write_bytes(glb(doc, binary))
    with contextlib.suppress(SceneError):
        check_gltf(read_gltf(path))


def test_validate_scenes_checks_gltf_assets(tmp_path: Path, capsys) -> None:
    from harness.cli import main
    from harness.scenes.set_manifest import build_manifest, write_manifest
    from tests._scene_helpers import dumps, scene_doc, write_assets

    write_assets(tmp_path)
    doc, binary = triangle()
    doc["nodes"] = [{"mesh": 0}] * 25_000
    (tmp_path / "assets" / "evil.glb").write_bytes(glb(doc, binary))
    scene = scene_doc()
    scene["objects"][1]["asset"] = "assets/evil.glb"
    target = tmp_path / "scenes" / "gen-a" / "p01.json"
    target.parent.mkdir(parents=True)
    target.write_bytes(dumps(scene))
    write_manifest(tmp_path, build_manifest(tmp_path, [target]))
    assert main(["validate-scenes", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "evil.glb#/nodes: nodes has 25000 entries, over the limit of 20000" in err


@pytest.mark.slow
def test_a_render_of_a_scene_with_a_huge_texture_is_a_recorded_asset_failure(
    tmp_path: Path,
) -> None:
    """A 30000 x 30000 texture used to kill the renderer with SIGABRT and no message."""
    pytest.importorskip("bpy")
    from harness.protocol.configurations import RenderConfig
    from harness.render.failures import AssetImportFailed
    from harness.render.service import RenderService
    from harness.scenes.model import scene_identity
    from tests._render_helpers import box_scene, write_box_assets

    write_box_assets(tmp_path)
    doc, binary = triangle()
    doc["images"] = [{"uri": "huge.png"}]
    doc["textures"] = [{"source": 0}]
    (tmp_path / "assets" / "huge.png").write_bytes(png_header(30_000, 30_000))
    write_glb(tmp_path / "assets", doc, binary, "textured.glb")
    scene = box_scene("test.huge-texture", centre_asset="assets/textured.glb")
    service = RenderService(tmp_path / "renders")
    with pytest.raises(AssetImportFailed) as info:
        service.render(
            scene, tmp_path, scene_identity(scene, tmp_path), RenderConfig(32, samples=1)
        )
    assert "images[0] is a 30000 × 30000 PNG" in str(info.value)
    assert str(info.value).count("\n") == 0
