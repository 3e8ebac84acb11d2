"""Readers with bounds: one bounded reader of user JSON/text files, regular
files only, memory-bounded pairwise statistics and non-finite geometry refused.

Every hostile file is built in ``tmp_path``; none allocates more than a few MB, so a
regression fails fast instead of exhausting the machine.
"""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core import bounded_input as bi
from harness.core.errors import (
    AuditError,
    CardError,
    HumanDataError,
    ImportError_,
    ManifestError,
    SceneError,
)

DEEP = "[" * 50_000 + "]" * 50_000  # a RecursionError in json.loads without the bound

# ----------------------------------------------------------------------- limits and their values


def test_limits_come_from_the_environment_and_are_checked() -> None:
    assert bi.max_bytes({}) == 256 << 20
    assert bi.max_bytes({bi.MAX_BYTES_ENV: "4096"}) == 4096
    assert bi.max_bytes({bi.MAX_BYTES_ENV: "64M"}) == 64 << 20
    assert bi.max_bytes({bi.MAX_BYTES_ENV: "1GiB"}) == 1 << 30
    assert bi.max_depth({}) == 200
    assert bi.max_depth({bi.MAX_DEPTH_ENV: "12"}) == 12
    for bad in ("0", "-3", "nan", "1.5", "12 apples", "inf"):
        with pytest.raises(AuditError, match=bi.MAX_BYTES_ENV):
            bi.max_bytes({bi.MAX_BYTES_ENV: bad})
    for bad in ("0", "-1", "nan", "10001", "3.0", "lots"):
        with pytest.raises(AuditError, match=bi.MAX_DEPTH_ENV):
            bi.max_depth({bi.MAX_DEPTH_ENV: bad})


def test_json_depth_is_hand_computed() -> None:
    assert bi.json_depth("1") == 0
    assert bi.json_depth('{"a": [1, {"b": []}]}') == 4
    assert bi.json_depth('["[[[[", "\\"[[", {"}}}": 1}]') == 2  # brackets in strings don't count


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(0, 400), kinds=st.lists(st.sampled_from("[{"), min_size=1, max_size=4))
def test_any_depth_gives_a_value_or_the_one_typed_error(depth: int, kinds: list[str]) -> None:
    text = "1"
    for level in range(depth):
        text = f"[{text}]" if kinds[level % len(kinds)] == "[" else f'{{"k": {text}}}'
    if depth <= 200:
        assert bi.loads(text, limit=200) == json.loads(text)
    else:
        with pytest.raises(bi.JsonDepthError, match="nested too deeply"):
            bi.loads(text, limit=200)


def test_a_limit_above_the_parser_is_still_a_typed_error() -> None:
    with pytest.raises(bi.JsonDepthError, match="parser"):
        bi.loads("[" * 9_000 + "]" * 9_000, limit=10_000)
    with pytest.raises(bi.JsonDepthError):  # unbalanced too: never a RecursionError
        bi.loads("[" * 60_000, limit=10_000)


def test_typed_errors_fit_old_handlers_and_the_cli() -> None:
    err = bi.JsonDepthError(3, "f.json")
    assert isinstance(err, json.JSONDecodeError) and isinstance(err, AuditError)
    err2 = bi.InputFileError("x", path="f")
    assert isinstance(err2, OSError) and isinstance(err2, AuditError) and err2.strerror == "x"


# ------------------------------------------------------------------------- regular files only


def test_devices_fifos_and_folders_are_refused_before_a_byte_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # no writer: a plain open() would block forever
    for path in (Path("/dev/zero"), fifo, tmp_path):
        with pytest.raises(bi.InputFileError, match="not a regular file"):
            bi.read_bytes(path)


def test_a_file_over_the_limit_is_refused(tmp_path: Path, monkeypatch) -> None:
    big = tmp_path / "big.json"
    big.write_text("[" + "1," * 3000 + "1]")
    monkeypatch.setenv(bi.MAX_BYTES_ENV, "4K")
    with pytest.raises(bi.InputFileError, match="over the input limit of 4096 bytes"):
        bi.read_json(big)
    monkeypatch.setenv(bi.MAX_BYTES_ENV, "8K")
    assert len(bi.read_json(big)) == 3001


def test_a_cache_key_file_on_dev_zero_is_refused(monkeypatch) -> None:
    from harness.core import cacheseal
    cacheseal._key_file.cache_clear()
    monkeypatch.delenv(cacheseal.KEY_ENV, raising=False)
    monkeypatch.setenv(cacheseal.KEY_FILE_ENV, "/dev/zero")
    with pytest.raises(cacheseal.CacheKeyError, match="not a regular file"):
        cacheseal.secret()
    cacheseal._key_file.cache_clear()


def test_a_scene_set_manifest_on_dev_zero_is_refused(tmp_path: Path) -> None:
    from harness.scenes.set_manifest import read_manifest

    (tmp_path / "manifest.json").symlink_to("/dev/zero")
    with pytest.raises(ManifestError, match="not a regular file"):
        read_manifest(tmp_path)


def test_a_conventions_file_on_dev_zero_is_refused(tmp_path: Path) -> None:
    from harness.scenes.importers.batch import read_conventions

    with pytest.raises(ImportError_, match="not a regular file"):
        read_conventions("/dev/zero")


# ------------------------------------------------------------------- every reader of deep JSON


def _deep(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text(DEEP)
    return path


def test_deep_json_is_one_typed_error_in_every_reader(tmp_path: Path) -> None:
    from harness.cards.provenance import load_manifest
    from harness.human.importers import import_stanfordt23d
    from harness.scenes.fileformats import detect_format
    from harness.scenes.importers.batch import read_conventions, read_prompts
    from harness.scenes.load import load_scene
    from harness.scenes.prompts import load_pool, load_prompts
    from harness.scenes.set_manifest import read_manifest

    cases = [
        (ImportError_, lambda: detect_format(_deep(tmp_path, "d.json"))),
        (SceneError, lambda: load_prompts(_deep(tmp_path, "prompts.json"))),
        (SceneError, lambda: load_pool(_deep(tmp_path, "pool.jsonl"))),
        (ImportError_, lambda: read_prompts(_deep(tmp_path, "p.json"))),
        (ImportError_, lambda: read_conventions(_deep(tmp_path, "conv.json"))),
        (HumanDataError, lambda: import_stanfordt23d(_deep(tmp_path, "ratings.json"))),
        (SceneError, lambda: load_scene(_deep(tmp_path, "s.json"), tmp_path)),
    ]
    for error, call in cases:
        with pytest.raises(error, match="nested too deeply"):
            call()
    report = tmp_path / "report"
    report.mkdir()
    _deep(report, "manifest.json")
    with pytest.raises(CardError, match="nested too deeply"):
        load_manifest(report)
    sset = tmp_path / "set"
    sset.mkdir()
    _deep(sset, "manifest.json")
    with pytest.raises(ManifestError, match="nested too deeply"):
        read_manifest(sset)


@pytest.mark.parametrize("command", ["import-scene", "leaderboard"])
def test_deep_json_on_the_command_line_is_one_line(tmp_path: Path, command: str, capsys) -> None:
    if command == "import-scene":
        argv = [command, str(_deep(tmp_path, "scene.json")), "--out", str(tmp_path / "o")]
    else:
        report = tmp_path / "r"
        report.mkdir()
        _deep(report, "summary.json")
        (report / "manifest.json").write_text("{}")
        argv = [command, str(report)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nested too deeply" in err and "Traceback" not in err


# ------------------------------------------------------------------------------ asset-map patterns


@pytest.mark.parametrize("pattern", ["{id:>4000000000}", "{id!r}", "{id.__class__}", "{id[0]}",
                                     "x/{source:{id}}"])
def test_an_asset_map_pattern_with_a_format_spec_is_refused(pattern: str) -> None:
    from harness.scenes.importers.scenestate import candidate_paths

    with pytest.raises(ImportError_, match="format spec"):
        candidate_paths("src", "abc", {"src": pattern})


def test_asset_map_patterns_expand_bare_names() -> None:
    from harness.scenes.importers.scenestate import candidate_paths

    got = candidate_paths("src", "ab_c", {"src": ["m/{id0}/{base}/{id}.glb", "{nope}/x", "{"]})
    assert got[0] == "m/a/ab/ab_c.glb" and not any("nope" in p for p in got)


# ----------------------------------------------------------------------------- mesh readers


def test_the_fast_obj_reader_never_sizes_an_array_by_a_huge_token() -> None:
    from harness.scenes.importers.objbox import fast_vertices as _fast_vertices

    # a finite number 10 000 characters long: np.array of these bytes would be 4 tokens x
    # 10 000 bytes; with 150 000 such lines, 149 GiB
    lines = [b"v 1 2 3", b"v 0." + b"0" * 10_000 + b"1 2 3"]
    assert _fast_vertices(lines) is None  # the careful reader takes over
    assert _fast_vertices([b"v 1 2 3", b"v 4 5 6"]).tolist() == [[1, 2, 3], [4, 5, 6]]


def test_an_obj_with_a_huge_number_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    obj = tmp_path / "m.obj"
    obj.write_bytes(b"v 0 0 0\nv 1 1 1\n" * 20_000 + b"v " + b"9" * 400_000 + b" 0 0\nf 1 2 3\n")
    assert main(["import-scene", str(obj), "--out", str(tmp_path / "o"), "--generator", "g",
                 "--prompt-id", "p", "--prompt", "x"]) == 2
    assert "bad vertex on line 40001" in capsys.readouterr().err


def test_a_ply_header_is_probed_without_reading_the_body(tmp_path: Path, monkeypatch) -> None:
    from harness.scenes import fileformats

    ply = tmp_path / "long.ply"
    comment = b"comment " + b"x" * 100_000 + b"\n"  # the header outgrows the 64 KiB probe
    ply.write_bytes(b"ply\nformat binary_little_endian 1.0\n" + comment
                    + b"element vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
                    + b"end_header\n" + struct.pack("<3f", 0, 0, 0))

    def no_whole_file(self) -> bytes:
        raise AssertionError("read the whole file to find a header")

    monkeypatch.setattr(Path, "read_bytes", no_whole_file)
    assert fileformats.detect_format(ply).format == "ply"


def _ply_points(path: Path, rows: list[tuple[float, float, float]], faces: bool = False) -> Path:
    head = ["ply", "format binary_little_endian 1.0", f"element vertex {len(rows)}",
            "property float x", "property float y", "property float z"]
    body = b"".join(struct.pack("<3f", *r) for r in rows)
    if faces:
        head += ["element face 1", "property list uchar int vertex_indices"]
        body += struct.pack("<B3i", 3, 0, 1, 2)
    path.write_bytes(("\n".join([*head, "end_header"]) + "\n").encode() + body)
    return path


def _stl_binary(path: Path, corner: float) -> Path:
    facet = struct.pack("<3f", 0, 0, 1) + struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, corner, 0)
    path.write_bytes(b"\0" * 80 + struct.pack("<I", 1) + facet + b"\0\0")
    return path


@pytest.mark.parametrize("make", [
    lambda d: _ply_points(d / "cloud.ply", [(0, 0, 0), (float("nan"), 1, 1), (1, 1, 1)]),
    lambda d: _ply_points(d / "mesh.ply", [(0, 0, 0), (1, 0, 0), (0, float("inf"), 0)], faces=True),
    lambda d: _stl_binary(d / "inf.stl", float("inf")),
    lambda d: (d / "nan.stl").write_text(
        "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 nan 0\n"
        "endloop\nendfacet\nendsolid x\n") and d / "nan.stl",
])
def test_non_finite_vertices_are_refused_in_every_format(tmp_path: Path, make, capsys) -> None:
    path = make(tmp_path)
    assert main(["import-scene", str(path), "--out", str(tmp_path / "o"), "--generator", "g",
                 "--prompt-id", "p", "--prompt", "x"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "NaN or infinite" in err, err
    assert not (tmp_path / "o").exists()


def test_finite_ply_and_stl_pass_the_check(tmp_path: Path) -> None:
    from harness.scenes.fileformats import check_finite_vertices

    check_finite_vertices(_ply_points(tmp_path / "ok.ply", [(0, 0, 0), (1, 2, 3)]), "ply")
    check_finite_vertices(_stl_binary(tmp_path / "ok.stl", 1.0), "stl")


# ------------------------------------------------------------------------- pairwise statistics


def test_pooled_pairwise_accuracy_refuses_above_the_bound_before_allocating() -> None:
    from harness.human import item_agreement as hc
    from harness.stats.pair_bounds import MAX_PAIRS

    n = 7_100  # 25.2 million pairs: ~3 GB through the ε search
    assert n * (n - 1) // 2 > MAX_PAIRS
    x = np.arange(n, dtype=float)
    with pytest.raises(HumanDataError, match=re.escape("over the bound of 25,000,000")):
        hc.tie_calibrated_accuracy(x, x)
    with pytest.raises(HumanDataError, match="item pairs"):
        hc.tie_calibrated_epsilons(x[None, :], x)
    # grouped, the same items form few pairs and are computed
    groups = np.arange(n) // 10
    assert hc.tie_calibrated_accuracy(x, x, groups).accuracy == pytest.approx(1.0)


def test_the_bounds_are_hand_computed(monkeypatch) -> None:
    from harness.human import item_agreement as hc
    from harness.stats import pair_bounds

    assert pair_bounds.pair_count([1, 2, 5]) == 0 + 1 + 10
    monkeypatch.setattr(pair_bounds, "MAX_PAIRS", 45)
    x = np.arange(10, dtype=float)
    assert hc.tie_calibrated_accuracy(x, -x).accuracy == 0.0  # 45 pairs: at the bound
    with pytest.raises(HumanDataError, match="55 item pairs"):
        hc.tie_calibrated_accuracy(np.arange(11.0), np.arange(11.0))


def test_a_ratings_matrix_above_the_bound_is_refused(monkeypatch) -> None:
    import pandas as pd

    from harness.human import data as human_data
    from harness.stats import pair_bounds

    frame = pd.DataFrame({"item": [f"i{k}" for k in range(30)], "rater": [f"r{k}" for k in range(30)],
                          "dimension": "overall", "rating": np.linspace(1, 5, 30)})
    ratings = human_data.Ratings.__new__(human_data.Ratings)
    object.__setattr__(ratings, "frame", frame)
    monkeypatch.setattr(pair_bounds, "MAX_CELLS", 899)
    with pytest.raises(HumanDataError, match="30 × 30 cells"):
        ratings.matrix("overall")
    monkeypatch.setattr(pair_bounds, "MAX_CELLS", 900)
    assert ratings.matrix("overall")[2].shape == (30, 30)


@pytest.mark.slow
def test_a_usd_with_a_nan_point_is_refused_on_its_measured_box(tmp_path: Path, capsys) -> None:
    usd = tmp_path / "m.usda"
    usd.write_text(
        '#usda 1.0\n(\n    upAxis = "Z"\n    defaultPrim = "Tet"\n)\n\ndef Mesh "Tet"\n{\n'
        "    int[] faceVertexCounts = [3, 3, 3, 3]\n"
        "    int[] faceVertexIndices = [0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3]\n"
        "    point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (nan, 0, 1)]\n}\n"
    )
    assert main(["import-scene", str(usd), "--out", str(tmp_path / "o"), "--generator", "g",
                 "--prompt-id", "p", "--prompt", "x"]) == 2
    assert "NaN or infinite" in capsys.readouterr().err


def _nan_gltf(path: Path) -> Path:
    import base64

    verts = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, float("nan"), 1.0)]
    data = b"".join(struct.pack("<3f", *v) for v in verts) + struct.pack("<3H", 0, 1, 2) + b"\0\0"
    uri = "data:application/octet-stream;base64," + base64.b64encode(data).decode()
    doc = {
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "buffers": [{"byteLength": len(data), "uri": uri}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 36},
                        {"buffer": 0, "byteOffset": 36, "byteLength": 6}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 0, 1]},
                      {"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"}],
    }
    path.write_text(json.dumps(doc))
    return path


def test_a_gltf_with_a_nan_position_is_refused_before_blender(tmp_path: Path, capsys) -> None:
    path = _nan_gltf(tmp_path / "nan.gltf")
    assert main(["import-scene", str(path), "--out", str(tmp_path / "o"), "--generator", "g",
                 "--prompt-id", "p", "--prompt", "x"]) == 2
    err = capsys.readouterr().err
    assert "POSITION" in err and "NaN or infinite" in err


def test_a_pyproject_nested_too_deeply_is_a_toml_error(tmp_path: Path) -> None:
    import tomllib

    path = tmp_path / "pyproject.toml"
    path.write_text("a = " + "[" * 5_000 + "]" * 5_000 + "\n")
    with pytest.raises(tomllib.TOMLDecodeError, match="nested too deeply"):
        bi.read_toml(path)
    path.write_text('[tool.t3d-audit]\nscenes = "s"\n')
    assert bi.read_toml(path) == {"tool": {"t3d-audit": {"scenes": "s"}}}


# ------------------------------------------------------------------------------ held-out


def test_an_integer_too_long_for_python_is_a_json_error_not_a_traceback(tmp_path: Path, capsys) -> None:
    """json raises a plain ValueError (not JSONDecodeError) for an integer over 4300 digits, so a
    reader catching JSONDecodeError let it through: validate-scenes was a traceback."""
    with pytest.raises(json.JSONDecodeError, match="integer too long"):
        bi.loads("[" + "7" * 5000 + "]")
    sset = tmp_path / "set"
    sset.mkdir()
    (sset / "manifest.json").write_text('{"schema": ' + "1" * 5000 + "}")
    assert main(["validate-scenes", str(sset)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "integer too long" in err and "Traceback" not in err


@pytest.mark.parametrize("what", ["ratings", "tifa", "votes"])
def test_human_ratings_and_votes_json_go_through_the_bounded_reader(tmp_path: Path, what: str) -> None:
    """TIFA ratings, format detection and GPTEval3D votes read JSON with a bare json.loads:
    deep nesting was a RecursionError traceback."""
    from harness.human.formats import import_gpteval3d_votes, import_tifa
    from harness.human.importers import detect_format

    path = _deep(tmp_path, f"{what}.json")
    call = {"ratings": detect_format, "tifa": import_tifa, "votes": import_gpteval3d_votes}[what]
    with pytest.raises(HumanDataError, match="nested too deeply"):
        call(path)


def test_a_pyproject_integer_too_long_is_a_toml_error(tmp_path: Path) -> None:
    """Regression: the audit's, compare's and the plugin's pyproject readers catch
    TOMLDecodeError; tomllib raised a plain ValueError for 5000 digits."""
    import tomllib

    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.t3d-audit]\nseed = " + "9" * 5000 + "\n")
    with pytest.raises(tomllib.TOMLDecodeError, match="integer too long"):
        bi.read_toml(path)


def test_a_model_id_or_asset_map_path_too_long_for_the_file_system_is_one_line(tmp_path: Path, capsys) -> None:
    """Regression: a sceneState modelId of 5000 characters made Path.is_file() raise
    OSError (ENAMETOOLONG) while the assets were looked up: a traceback."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from _scenestate import write_scenestate

    from harness.scenes.importers.scenestate import _MeshCache

    path, assets = write_scenestate(tmp_path)
    doc = json.loads(path.read_text())
    doc["scene"]["object"][0]["modelId"] = "test." + "a" * 5000
    path.write_text(json.dumps(doc))
    assert main(["import-scene", str(path), "--asset-root", str(assets), "--out", str(tmp_path / "o"),
                 "--generator", "g", "--prompt-id", "p", "--prompt", "x"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "invalid modelId" in err and "Traceback" not in err
    assert len(err) < 600
    cache = _MeshCache(assets, tmp_path / "o", path, {"test": "{id}" * 400})
    assert cache._find("test", "abcdefghij") is None  # a 4000-character name: not found


def test_a_gltf_uri_too_long_for_the_file_system_is_one_line(tmp_path: Path, capsys) -> None:
    """Regression: a 5000-character buffer uri made Path.is_file() raise OSError
    (ENAMETOOLONG): a traceback instead of "not found"."""
    gltf = tmp_path / "m.gltf"
    gltf.write_text(json.dumps({"asset": {"version": "2.0"},
                                "buffers": [{"uri": "a" * 5000 + ".bin", "byteLength": 4}]}))
    assert main(["import-scene", str(gltf), "--out", str(tmp_path / "o"), "--generator", "g",
                 "--prompt-id", "p", "--prompt", "x"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not found" in err and len(err) < 400


# ------------------------------------------------------------ the pre-scan on hostile strings


@pytest.mark.parametrize("text", ['"' + '\\"' * 100_000, '"' + '\\"' * 100_000 + "\\", '["' + '\\"' * 100_000])
def test_escaped_quotes_are_scanned_in_linear_time(text: str) -> None:
    # regression: the string pattern could fail, and was retried from every later quote: 200 KB
    # of escaped quotes took over 100 s (T3D_AUDIT_STORE_OPTIONS stalled every command)
    import time

    started = time.perf_counter()
    with pytest.raises(json.JSONDecodeError):
        bi.loads(text)
    assert time.perf_counter() - started < 5.0


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet='[]{}"\\,:a1 ', max_size=60))
def test_the_depth_scan_agrees_with_the_parser_on_any_text(text: str) -> None:
    """Whatever the text, loads gives json's value, json's error, or the depth error when the
    parser's own nesting of the text is deeper than the limit."""
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            bi.loads(text, limit=3)
        return
    if bi.json_depth(text) <= 3:
        assert bi.loads(text, limit=3) == expected
    else:
        with pytest.raises(bi.JsonDepthError):
            bi.loads(text, limit=3)


@pytest.mark.parametrize("limit", [1, 5, 200])
def test_depth_exactly_at_the_limit_passes_and_one_more_fails(limit: int) -> None:
    at = "[" * limit + '"]]]}}}"' + "]" * limit
    wide = "[" + ",".join([at] * 50) + "]"
    assert bi.loads(at, limit=limit) is not None
    assert bi.loads(wide, limit=limit + 1) is not None
    with pytest.raises(bi.JsonDepthError):
        bi.loads(wide, limit=limit)


def test_thousands_of_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"caption": "[" * 50_000 + "{" * 50_000, "k": ["]" * 10_000]})
    assert bi.loads(text, limit=2)["k"] == ["]" * 10_000]


def test_a_file_that_states_size_zero_is_read_to_its_end_within_the_limit(tmp_path: Path) -> None:
    proc = Path("/proc/self/status")
    if not proc.is_file():
        pytest.skip("no /proc")
    assert b"Name:" in bi.read_bytes(proc)
    with pytest.raises(bi.InputFileError, match="over the input limit"):
        bi.read_bytes(proc, limit=10)
    link = tmp_path / "link"
    link.symlink_to("/dev/zero")
    with pytest.raises(bi.InputFileError, match="not a regular file"):
        bi.read_bytes(link)


def test_a_file_that_grows_while_read_is_cut_at_the_limit(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "grows.json"
    path.write_bytes(b"[1]")
    real_fstat = os.fstat

    def stale_fstat(fd: int) -> os.stat_result:  # the size as it was before the file grew
        result = real_fstat(fd)
        path.write_bytes(b"[" + b"1," * 100 + b"1]")
        return result

    monkeypatch.setattr(bi.os, "fstat", stale_fstat)
    with pytest.raises(bi.InputFileError, match="over the input limit"):
        bi.read_bytes(path, limit=50)


def test_the_report_s_own_files_are_not_held_to_a_low_user_depth(tmp_path: Path, monkeypatch) -> None:
    # regression: with T3D_AUDIT_MAX_JSON_DEPTH=2 a partial rerun could not read its own
    # results.json (depth 3), took it for absent, and replaced the earlier results
    from harness.report.writer import previous_results

    monkeypatch.setenv(bi.MAX_DEPTH_ENV, "2")
    (tmp_path / "results.json").write_text(json.dumps(
        {"complete": True, "results": [{"test": "t", "details": {"rho": [1, 2]}}]}))  # fmt: skip
    kept, complete = previous_results(tmp_path)
    assert complete and kept[0]["test"] == "t"
    with pytest.raises(bi.JsonDepthError):  # a file the user names is still bounded
        bi.read_json(tmp_path / "results.json")
