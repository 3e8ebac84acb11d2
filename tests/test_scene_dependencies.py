"""Every file a scene reads is inside the scene set.

Hostile assets are built in ``tmp_path``: an OBJ whose ``mtllib`` or MTL texture is absolute,
a URI, a Windows path, percent-encoded, ``..`` or a symlink out; USD layers whose sublayers,
references, payloads or textures leave the folder; a USDZ whose layer names a file outside
the package. Each is refused at import and when a scene set is read (``validate-scenes``);
relative files beside the asset are copied at import, listed in the manifest and hashed into
the render key.
"""

from __future__ import annotations

import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.errors import ImportError_, ManifestError, SceneError
from harness.scenes import SceneSet, build_manifest
from harness.scenes.assetdeps import (
    asset_dependencies,
    check_reference,
    copy_dependencies,
    dependency_files,
)
from harness.scenes.assetrefs import usd_references
from tests._public_data import GENERATOR_OUTPUTS as SHARED_USDZ  # public data
from tests._scene_helpers import write_scene_set

CUBE = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\nf 1 2 3 4\n"

# every hostile form a reference can take; each must be refused, not ignored
HOSTILE = [
    "/etc/passwd.png",
    "C:\\textures\\wood.png",
    "C:/textures/wood.png",
    "\\\\server\\share\\wood.png",
    "file:///etc/wood.png",
    "https://example.com/wood.png",
    "~/wood.png",
    "%2e%2e/%2e%2e/wood.png",
    "..%2Fwood.png",
    "../../../../../../etc/wood.png",
    "tex/../../../../../wood.png",
    "pkg.usdz[inner.png]",
    "tex.<UDIM>.png",
]


def _obj_set(tmp_path: Path, mtl_line: str) -> Path:
    """A source folder with m.obj naming m.mtl, whose map line is ``mtl_line``."""
    src = tmp_path / "src"
    (src / "tex").mkdir(parents=True)
    (src / "m.obj").write_text("mtllib m.mtl\n" + CUBE)
    (src / "m.mtl").write_text(f"newmtl m\nKd 1 1 1\n{mtl_line}\n")
    (src / "tex/wood.png").write_bytes(b"\x89PNG wood")
    return src / "m.obj"


def _import(obj: Path, out: Path) -> int:
    return main(["import-scene", str(obj), "--out", str(out), "--generator", "g",
                 "--prompt-id", "p", "--prompt", "a box"])


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_texture_reference_is_refused_at_import(tmp_path: Path, name: str, capsys) -> None:
    obj = _obj_set(tmp_path, f"map_Kd {name}")
    out = tmp_path / "set"
    assert _import(obj, out) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "m.mtl" in err[0] and repr(name) in err[0], err
    assert not out.exists()  # nothing half-written


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_mtllib_is_refused_when_the_scene_set_is_read(tmp_path: Path, name: str) -> None:
    paths = write_scene_set(tmp_path, manifest=False)
    obj = tmp_path / "assets/bed/a.obj"
    obj.write_text(f"mtllib {name}\n" + obj.read_text())
    with pytest.raises(SceneError, match=re.escape(repr(name))):
        build_manifest(tmp_path, paths)


def test_an_absolute_mtllib_is_refused_at_import(tmp_path: Path, capsys) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "evil.mtl").write_text("newmtl m\nKd 1 0 0\n")
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.obj").write_text(f"mtllib {outside / 'evil.mtl'}\n" + CUBE)
    assert _import(src / "m.obj", tmp_path / "set") != 0
    assert "is an absolute path" in capsys.readouterr().err


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "wood.png").write_bytes(b"png")
    obj = _obj_set(tmp_path, "map_Kd tex/link.png")
    (obj.parent / "tex/link.png").symlink_to(outside / "wood.png")
    with pytest.raises(ImportError_, match=re.escape("'tex/link.png' leaves")):
        dependency_files(obj.parent.resolve(), obj.resolve(), error=ImportError_)


def test_a_device_or_fifo_is_refused(tmp_path: Path) -> None:
    obj = _obj_set(tmp_path, "map_Kd tex/pipe.png")
    os.mkfifo(obj.parent / "tex/pipe.png")
    with pytest.raises(ImportError_, match="not a regular file"):
        dependency_files(obj.parent.resolve(), obj.resolve(), error=ImportError_)


def test_relative_materials_are_copied_listed_and_hashed(tmp_path: Path) -> None:
    obj = _obj_set(tmp_path, "map_Kd tex/wood.png")
    out = tmp_path / "set"
    assert _import(obj, out) == 0
    assert (out / "assets/m/m.mtl").is_file() and (out / "assets/m/tex/wood.png").is_file()
    sset = SceneSet.load(out)
    listed = {e["path"] for e in sset.manifest["assets"]}
    assert {"assets/m/m.mtl", "assets/m/tex/wood.png"} <= listed
    before = sset.identity("g__p")
    (out / "assets/m/tex/wood.png").write_bytes(b"\x89PNG oak")
    with pytest.raises(ManifestError, match=re.escape("wood.png' changed")):
        SceneSet.load(out)
    assert SceneSet.load(out, verify=False).identity("g__p") != before


def test_validate_scenes_catches_a_material_edited_to_point_outside(tmp_path: Path, capsys) -> None:
    obj = _obj_set(tmp_path, "map_Kd tex/wood.png")
    out = tmp_path / "set"
    assert _import(obj, out) == 0
    assert main(["validate-scenes", str(out)]) == 0
    outside = tmp_path / "outside.png"
    outside.write_bytes(b"png")
    (out / "assets/m/m.mtl").write_text(f"newmtl m\nmap_Kd {outside}\n")
    capsys.readouterr()
    assert main(["validate-scenes", str(out)]) != 0
    # a manifest rebuilt around the edit is refused too: the reference itself is the fault
    with pytest.raises(SceneError, match="is an absolute path"):
        build_manifest(out, [out / "scenes/g/p.json"])


# --------------------------------------------------------------------------------------- USD

GEOM = """#usda 1.0
(
    defaultPrim = "Tet"
)

def Mesh "Tet"
{
    int[] faceVertexCounts = [3, 3, 3, 3]
    int[] faceVertexIndices = [0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3]
    point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
}
"""


def _usda(ref: str, how: str = "references") -> str:
    if how == "subLayers":
        return f'#usda 1.0\n(\n    upAxis = "Z"\n    subLayers = [@{ref}@]\n)\n'
    if how == "texture":
        return (
            '#usda 1.0\n(\n    upAxis = "Z"\n)\n\ndef Shader "T"\n{\n'
            f"    asset inputs:file = @{ref}@\n}}\n"
        )
    return (
        '#usda 1.0\n(\n    upAxis = "Z"\n    defaultPrim = "Root"\n)\n\n'
        f'def "Root" (\n    prepend {how} = @{ref}@</Tet>\n)\n{{\n}}\n'
    )


def test_usda_asset_paths_are_read_everywhere() -> None:
    text = (
        '#usda 1.0\n(\n    subLayers = [@a.usda@, @@@b@c.usda@@@]\n)\n'
        'def "X" (\n    variants = { string v = "one" }\n    prepend variantSets = "v"\n)\n{\n'
        '    variantSet "v" = {\n        "one" (\n            prepend payload = @p.usdc@\n'
        '        ) {\n        }\n    }\n    asset inputs:file = @tex/w.png@\n}\n'
    )
    assert usd_references(text.encode(), "x.usda") == ["a.usda", "b@c.usda", "p.usdc", "tex/w.png"]


@pytest.mark.parametrize("how", ["references", "payload", "subLayers", "texture"])
@pytest.mark.parametrize("name", ["/abs/geom.usda", "../geom.usda", "file:///abs/geom.usda"])
def test_a_usd_reference_outside_the_folder_is_refused_at_import(
    tmp_path: Path, how: str, name: str, capsys
) -> None:
    (tmp_path / "geom.usda").write_text(GEOM)
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.usda").write_text(_usda(name, how))
    assert _import(src / "m.usda", tmp_path / "set") != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "m.usda" in err and repr(name) in err, err


def test_a_missing_usd_layer_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.usda").write_text(_usda("./gone.usda"))
    with pytest.raises(ImportError_, match=re.escape("'./gone.usda' names a missing file")):
        dependency_files(tmp_path.resolve(), (tmp_path / "m.usda").resolve(), error=ImportError_)


def test_a_usd_sibling_layer_is_followed_copied_and_hashed(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "parts").mkdir(parents=True)
    (src / "m.usda").write_text(_usda("./parts/geom.usda"))
    (src / "parts/geom.usda").write_text(GEOM.replace("}\n", "    rel material:binding = </M>\n}\n")
                                         + _usda("../tex/w.png", "texture").split("\n", 1)[1])
    (src / "tex").mkdir()
    (src / "tex/w.png").write_bytes(b"png")
    dest = tmp_path / "copy"
    written: dict[Path, bytes] = {}
    copied = copy_dependencies(src / "m.usda", dest, lambda p, d: written.__setitem__(p, d))
    assert copied == ["parts/geom.usda", "tex/w.png"]  # the layer's own texture too
    assert written[dest / "parts/geom.usda"] == (src / "parts/geom.usda").read_bytes()
    # read back inside a scene set: listed relative to the root
    root = tmp_path / "root"
    shutil.copytree(src, root / "assets/m")
    assert asset_dependencies(root, "assets/m/m.usda") == (
        "assets/m/parts/geom.usda", "assets/m/tex/w.png")


def test_a_usdz_layer_naming_a_file_outside_the_package_is_refused(tmp_path: Path) -> None:
    package = tmp_path / "m.usdz"
    with zipfile.ZipFile(package, "w") as z:
        z.writestr("m.usda", _usda("/tmp/evil.png", "texture"))
    with pytest.raises(ImportError_, match=re.escape("'/tmp/evil.png' is an absolute path")):
        dependency_files(tmp_path.resolve(), package.resolve(), error=ImportError_)
    with zipfile.ZipFile(package, "w") as z:
        z.writestr("m.usda", _usda("tex/w.png", "texture"))
    with pytest.raises(ImportError_, match="not in the package"):
        dependency_files(tmp_path.resolve(), package.resolve(), error=ImportError_)
    with zipfile.ZipFile(package, "w") as z:
        z.writestr("m.usda", _usda("tex/w.png", "texture"))
        z.writestr("tex/w.png", b"png")
    assert dependency_files(tmp_path.resolve(), package.resolve()) == ()


@pytest.mark.skipif(not SHARED_USDZ.is_dir(), reason="public data folder absent")
def test_a_real_usdc_token_table_is_read() -> None:
    with zipfile.ZipFile(SHARED_USDZ / "glb2usdz__model.usdz") as z:
        data = z.read("model.usdc")
    from harness.scenes.assetrefs import _crate_tokens

    tokens = _crate_tokens(data, "model.usdc")
    assert len(tokens) == 64 and "faceVertexIndices" in tokens and "UsdPreviewSurface" in tokens
    assert usd_references(data, "model.usdc") == []  # self-contained: no file names


@pytest.mark.slow
def test_a_usd_whose_geometry_sits_in_a_sibling_file_imports_with_it(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "parts").mkdir(parents=True)
    (src / "m.usda").write_text(_usda("./parts/geom.usda"))
    (src / "parts/geom.usda").write_text(GEOM)
    out = tmp_path / "set"
    assert _import(src / "m.usda", out) == 0
    assert (out / "assets/m/parts/geom.usda").read_text() == GEOM
    sset = SceneSet.load(out)
    assert "assets/m/parts/geom.usda" in {e["path"] for e in sset.manifest["assets"]}
    (scene,) = sset.scenes
    assert scene.objects[0].size == pytest.approx([1.0, 1.0, 1.0])  # the sibling's geometry
    before = sset.identity(scene.id)
    (out / "assets/m/parts/geom.usda").write_text(GEOM.replace("(0, 0, 1)]", "(0, 0, 2)]"))
    assert SceneSet.load(out, verify=False).identity(scene.id) != before  # the render key moves


def test_a_name_with_spaces_is_checked_whole(tmp_path: Path) -> None:
    # Blender may read "/tmp/evil dir/x.png" as one name: its words alone look harmless
    obj = _obj_set(tmp_path, "map_Kd /tmp/evil dir/x.png")
    with pytest.raises(ImportError_, match=re.escape("'/tmp/evil dir/x.png' is an absolute path")):
        dependency_files(obj.parent.resolve(), obj.resolve(), error=ImportError_)
    obj = _obj_set(tmp_path / "b", "map_Kd -s 1 1 1 tex/wood.png")  # options: last word counts
    assert [p.name for p in dependency_files(obj.parent.resolve(), obj.resolve())] == [
        "m.mtl", "wood.png"]


_USDC_WITH_TEXTURE = """
import sys, bpy
out, tex = sys.argv[1], sys.argv[2]
bpy.ops.wm.read_factory_settings(use_empty=True)
img = bpy.data.images.new("evil", 4, 4)
img.filepath_raw = tex
img.file_format = "PNG"
img.save()
bpy.ops.mesh.primitive_cube_add()
ob = bpy.context.active_object
mat = bpy.data.materials.new("m")
mat.use_nodes = True
nt = mat.node_tree
texnode = nt.nodes.new("ShaderNodeTexImage")
texnode.image = img
bsdf = next(n for n in nt.nodes if n.bl_idname == "ShaderNodeBsdfPrincipled")
nt.links.new(texnode.outputs["Color"], bsdf.inputs["Base Color"])
ob.data.materials.append(mat)
kw = dict(filepath=out, selected_objects_only=False, export_materials=True,
          relative_paths=sys.argv[3] == 'relative')
try:
    bpy.ops.wm.usd_export(**kw, export_textures_mode="KEEP")
except TypeError:
    bpy.ops.wm.usd_export(**kw, export_textures=False)
"""


@pytest.mark.slow
@pytest.mark.parametrize("paths", ["absolute", "relative"])
def test_a_blender_usdc_texture_reference_is_read_from_its_token_table(tmp_path: Path, paths: str) -> None:
    import subprocess
    import sys

    (tmp_path / "make.py").write_text(_USDC_WITH_TEXTURE)
    usdc, tex = tmp_path / "m.usdc", tmp_path / "tex" / "wood.png"
    tex.parent.mkdir()
    subprocess.run([sys.executable, str(tmp_path / "make.py"), str(usdc), str(tex), paths],
                   check=True, capture_output=True, timeout=300)
    names = usd_references(usdc.read_bytes(), usdc)
    if paths == "absolute":
        assert names == [str(tex)]
        with pytest.raises(ImportError_, match="is an absolute path"):
            dependency_files(tmp_path.resolve(), usdc.resolve(), error=ImportError_)
    else:
        assert [p.name for p in dependency_files(tmp_path.resolve(), usdc.resolve())] == ["wood.png"]


_NAME = st.text(alphabet="ab./\\:%2e~@[]<> -", min_size=1, max_size=24)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=_NAME)
def test_any_reference_resolves_inside_the_folder_or_is_refused(tmp_path: Path, name: str) -> None:
    base = tmp_path / "set" / "assets"
    (base / "a").mkdir(parents=True, exist_ok=True)
    (base / "a" / "b").write_bytes(b"x")
    (tmp_path / "set" / "b").write_bytes(b"outside the assets folder")
    referrer = base / "m.mtl"
    try:
        found = check_reference(base.resolve(), referrer, name, missing_ok=True)
    except SceneError as exc:
        assert repr(name) in exc.what and "\n" not in str(exc)
        return
    if found is not None:
        assert found.is_relative_to(base.resolve()) and found.is_file()


def test_a_missing_map_found_by_its_name_beside_the_material_counts(tmp_path: Path) -> None:
    obj = _obj_set(tmp_path, "map_Kd elsewhere/wood.png")
    assert [p.name for p in dependency_files(obj.parent.resolve(), obj.resolve())] == ["m.mtl"]
    (obj.parent / "wood.png").write_bytes(b"png")  # appears later: the cache must see it
    assert [p.name for p in dependency_files(obj.parent.resolve(), obj.resolve())] == [
        "m.mtl", "wood.png"]


@pytest.mark.parametrize("line", ["map_Kd -s 1 1 1 ../out dir/x.png", "bump -bm 0.5 ../out dir/x.png",
                                  "disp -o 0 0 -mm 0 1 ../out dir/x.png"])
def test_options_before_a_name_with_spaces_do_not_hide_an_escape(tmp_path: Path, line: str) -> None:
    """Regression: Blender reads the options, then the rest of the line as one name;
    the last word ("dir/x.png") and the rest with the options ("-s 1 1 1 ../out dir/x.png",
    whose "-s 1 1 1 .." is a folder name) both resolve inside, "../out dir/x.png" does not."""
    (tmp_path / "out dir").mkdir()
    (tmp_path / "out dir/x.png").write_bytes(b"\x89PNG outside")
    obj = _obj_set(tmp_path, line)
    with pytest.raises(ImportError_, match=re.escape("'../out dir/x.png' leaves")):
        dependency_files(obj.parent.resolve(), obj.resolve(), error=ImportError_)


def test_an_at_sign_in_a_usda_string_cannot_hide_an_asset_path(tmp_path: Path) -> None:
    """Regression: '"a@b";' then '@/abs/geom.usda@' on one line paired the string's
    "@" with the asset's opening one; the folder held a file of that odd name, so the
    outside layer was never seen."""
    (tmp_path / "geom.usda").write_text(GEOM)
    src = tmp_path / "src"
    src.mkdir()
    outside = tmp_path / "geom.usda"
    (src / 'b"; prepend references = ').write_text("")  # what the naive pairing took for a path
    (src / "m.usda").write_text(
        '#usda 1.0\n(\n    defaultPrim = "Root"\n)\n\n'
        f'def "Root" (\n    doc = "a@b"; prepend references = @{outside}@</Tet>\n)\n{{\n}}\n')
    assert str(outside) in usd_references((src / "m.usda").read_bytes(), "m.usda")
    with pytest.raises(ImportError_, match="is an absolute path"):
        dependency_files(src.resolve(), (src / "m.usda").resolve(), error=ImportError_)


def test_a_material_library_not_named_mtl_is_still_read(tmp_path: Path) -> None:
    """Regression: Blender opens whatever file an OBJ's mtllib names; one named
    "mat.txt" was copied but never read, so its outside texture was not seen."""
    (tmp_path / "evil.png").write_bytes(b"\x89PNG outside")
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.obj").write_text("mtllib mat.txt\n" + CUBE)
    (src / "mat.txt").write_text(f"newmtl m\nmap_Kd {tmp_path / 'evil.png'}\n")
    with pytest.raises(ImportError_, match="is an absolute path"):
        dependency_files(src.resolve(), (src / "m.obj").resolve(), error=ImportError_)
    (src / "mat.txt").write_text("newmtl m\nmap_Kd wood.png\n")
    (src / "wood.png").write_bytes(b"\x89PNG wood")
    assert sorted(p.name for p in dependency_files(src.resolve(), (src / "m.obj").resolve())) == [
        "mat.txt", "wood.png"]


@pytest.mark.parametrize("sep", ["\x0c", "\x0b", "\x1c", "\x85"])
def test_a_line_break_python_knows_cannot_hide_a_second_mtllib(tmp_path: Path, sep: str) -> None:
    """Regression: Python's splitlines() breaks "mtllib m.mtl<FF>/abs/evil.mtl" in two
    (the second half no statement), while Blender splits at "\\n" only and may read the form
    feed as a space: two libraries, one outside."""
    (tmp_path / "evil.mtl").write_text("newmtl m\nKd 1 0 0\n")
    obj = _obj_set(tmp_path, "map_Kd tex/wood.png")
    obj.write_text(f"mtllib m.mtl{sep}{tmp_path / 'evil.mtl'}\n" + CUBE)
    with pytest.raises(ImportError_, match=re.escape("evil.mtl")):
        dependency_files(obj.parent.resolve(), obj.resolve(), error=ImportError_)
