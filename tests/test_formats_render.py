"""Every format a text-to-3D generator writes renders in its colours (slow: Blender).

Fixtures are built by Blender's own exporters (``tests/_format_fixtures.py``: OBJ and PLY with
vertex colours, a PLY point cloud, USDC/USDZ, STL, two standees in other conventions) plus a
synthetic 3DGS splat PLY written with numpy. Renders are 48-64 px with a few samples.

* colour: the mean hue of the object's pixels is within 15° of the file's colour;
* STL: grey, and the scene's ``source`` says why;
* conventions: a z-up standee facing +x and a y-up standee facing -z (Stable Fast 3D) stand
  upright and show their red front at c0 when given ``--up``/``--front``;
* splats: coverage and mean colour match a numpy EWA splatting of the same splats;
* public sample files next to the checkout (``$T3D_AUDIT_SHARED_DATA``; skipped when absent): each renders in colour or is
  refused with a clear message.
"""

from __future__ import annotations

import colorsys
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.protocol.configurations import RenderConfig
from harness.protocol.profiles import get_profile
from harness.scenes.importers.conventions import Conventions
from harness.scenes.importers.dispatch import import_file
from harness.scenes.model import scene_identity

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
# public test files next to the checkout; $T3D_AUDIT_SHARED_DATA points elsewhere (a worktree)
SHARED = Path(os.environ.get("T3D_AUDIT_SHARED_DATA") or HERE.parent.parent / "shared" / "data")


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> Path:
    pytest.importorskip("bpy")
    out = tmp_path_factory.mktemp("formats")
    proc = subprocess.run([sys.executable, str(HERE / "_format_fixtures.py"), str(out)],
                          capture_output=True, text=True, cwd=HERE.parent)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def _scene(path: Path, out: Path, conventions: Conventions | None = None, **kw):
    from harness.scenes.importers import write_scene_file

    kw.setdefault("asset_root", path.parent)  # sceneState: its modelIds resolve next to it
    scene = import_file(path, out_root=out, generator="gen", prompt_id=path.stem.replace("_", "-"),
                        prompt=f"a {path.stem}", ground=False, conventions=conventions, **kw)
    write_scene_file(scene, out)
    return scene


def _render(scene, root: Path, cache: Path, px: int = 48, samples: int = 4, **cfg) -> np.ndarray:
    from harness.render.service import RenderService

    config = RenderConfig(resolution_px=px, samples=samples, **cfg)
    return RenderService(cache).render(scene, root, scene_identity(scene, root), config)


def _hue(rgb) -> tuple[float, float]:
    h, _, s = colorsys.rgb_to_hls(*(float(v) for v in rgb))
    return h * 360, s


def _mean_hue(rgba: np.ndarray, mask: np.ndarray | None = None) -> tuple[float, float]:
    mask = rgba[..., 3] > 200 if mask is None else mask
    return _hue(rgba[..., :3][mask].astype(float).mean(0) / 255)


def _hue_gap(a: float, b: float) -> float:
    return min(abs(a - b), 360 - abs(a - b))


@pytest.mark.parametrize("name", ["red.obj", "green.ply", "blue_points.ply", "yellow.usdc",
                                  "yellow.usda", "yellow.usdz"])
def test_each_format_renders_in_its_colours(fixtures: Path, tmp_path: Path, name: str) -> None:
    """Regression: an OBJ with per-vertex colours rendered grey (saturation 0.002)."""
    scene = _scene(fixtures / name, tmp_path / "set")
    want, _ = _hue(json.loads((fixtures / "truth.json").read_text())[name])
    rgba = _render(scene, tmp_path / "set", tmp_path / "cache", pitch_deg=45.0)
    got, sat = _mean_hue(rgba)
    assert sat > 0.25, f"{name}: grey render (saturation {sat:.2f})"
    assert _hue_gap(got, want) < 15, f"{name}: hue {got:.0f}°, file {want:.0f}°"
    assert scene.source["colour"] in ("vertex", "material")


def test_stl_is_grey_and_says_so(fixtures: Path, tmp_path: Path) -> None:
    scene = _scene(fixtures / "grey.stl", tmp_path / "set")
    assert scene.source["colour"] == "none" and "STL carries no colour" in scene.source["note"]
    _, sat = _mean_hue(_render(scene, tmp_path / "set", tmp_path / "cache", pitch_deg=45.0))
    assert sat < 0.1


@pytest.mark.parametrize(("name", "up", "front"), [("standee_zup.obj", "z", "+x"),
                                                    ("standee_yup.ply", "y", "-z")])
def test_conventions_stand_the_object_up_facing_the_camera(
    fixtures: Path, tmp_path: Path, name: str, up: str, front: str
) -> None:
    """With the matching --up/--front the standee (0.6 wide, 1.2 tall, red front, blue back)
    is taller than wide and red at c0; with the format's default it is not both."""
    c0 = get_profile("smoke").for_scene_kind("object").c0
    red, _ = _hue(json.loads((fixtures / "truth.json").read_text())["standee_front"])

    def look(conv: Conventions | None, sub: str) -> tuple[float, float, float]:
        scene = _scene(fixtures / name, tmp_path / sub, conv)
        rgba = _render(scene, tmp_path / sub, tmp_path / "cache", px=64,
                       pitch_deg=c0.pitch_deg, yaw_deg=c0.yaw_deg)
        rows, cols = np.nonzero(rgba[..., 3] > 128)
        hue, _ = _mean_hue(rgba)
        return float(np.ptp(rows)), float(np.ptp(cols)), hue

    h, w, hue = look(Conventions(up=up, front=front), "right")
    assert h > 1.3 * w, f"not upright: {h} x {w} px"
    assert _hue_gap(hue, red) < 15, f"shows its back or side: hue {hue:.0f}°"
    h0, w0, hue0 = look(None, "default")
    assert not (h0 > 1.3 * w0 and _hue_gap(hue0, red) < 15)


def _ewa_reference(scene, splats: dict, px: int, cfg: RenderConfig) -> tuple[np.ndarray, np.ndarray]:
    """Front-to-back EWA splatting of ``splats`` (``meshformats.splat_arrays``, asset
    coordinates) placed as ``scene``'s object and seen by the renderer's camera: (px, px)
    alpha and (px, px, 3) premultiplied colour."""
    from harness.render import framing
    from harness.render.meshformats import splat_bounds

    (obj,) = scene.objects
    lo, hi = splat_bounds(splats)
    scale = np.asarray(obj.size) / (hi - lo)
    offset = -np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]])
    rot = obj.rotation()

    def world(p: np.ndarray) -> np.ndarray:
        return (rot @ (scale * (p + offset)).T).T + np.asarray(obj.position)

    pose = framing.solve_camera(framing.scene_box(scene), cfg.focal_length_mm, cfg.pitch_deg,
                                cfg.yaw_deg)
    cam_rot = framing.rotation(cfg.pitch_deg, cfg.yaw_deg)
    loc = np.asarray(pose.location)

    def pixel(p: np.ndarray) -> np.ndarray:
        uv = framing.project(world(p), loc, cam_rot, pose.lens_mm) - np.asarray(pose.shift)
        return np.stack([(uv[:, 0] + 0.5) * px, (0.5 - uv[:, 1]) * px], axis=1)

    centres = splats["centre"]
    mu = pixel(centres)
    eps = 1e-4
    jac = np.stack([(pixel(centres + eps * e) - mu) / eps for e in np.eye(3)], axis=2)  # (N,2,3)
    cov3 = splats["rotation"] @ (splats["sigma"][:, :, None] ** 2 * np.transpose(
        splats["rotation"], (0, 2, 1)))
    cov2 = jac @ cov3 @ np.transpose(jac, (0, 2, 1))
    depth = np.linalg.norm(world(centres) - loc, axis=1)
    ys, xs = np.mgrid[0:px, 0:px] + 0.5
    grid = np.stack([xs, ys], axis=-1)
    trans = np.ones((px, px))
    colour = np.zeros((px, px, 3))
    for i in np.argsort(depth):
        d = grid - mu[i]
        inv = np.linalg.inv(cov2[i])
        q = np.einsum("hwi,ij,hwj->hw", d, inv, d)
        a = splats["alpha"][i] * np.exp(-0.5 * q)
        colour += (trans * a)[..., None] * splats["rgb"][i]
        trans *= 1 - a
    return 1 - trans, colour


def test_splats_match_an_ewa_reference(fixtures: Path, tmp_path: Path) -> None:
    """Each splat an ellipsoid of semi-axes sqrt(2) sigma, opacity as alpha, DC colour as
    emission: top-down, its coverage (mean alpha) is within 15 % of a numpy EWA splatting of
    the same 40 splats and its mean colour within 0.06 per channel (a uniform ellipse carries
    the Gaussian's alpha mass, not its profile). Lighting has no effect on it."""
    from harness.render.meshformats import splat_arrays
    from harness.scenes.fileformats import read_ply_vertices

    path = fixtures / "splats.ply"
    scene = _scene(path, tmp_path / "set")
    assert scene.source["variant"] == "splats" and "lighting does not apply" in scene.source["note"]
    px = 64
    cfg = RenderConfig(resolution_px=px, samples=16, pitch_deg=0.0)
    rgba = _render(scene, tmp_path / "set", tmp_path / "cache", px=px, samples=16, pitch_deg=0.0)
    alpha_ref, colour_ref = _ewa_reference(scene, splat_arrays(read_ply_vertices(path)), px, cfg)
    alpha = rgba[..., 3] / 255.0
    assert alpha.mean() == pytest.approx(alpha_ref.mean(), rel=0.15)
    mean_ref = colour_ref.reshape(-1, 3).sum(0) / alpha_ref.sum()
    mean = (rgba[..., :3] / 255.0 * alpha[..., None]).reshape(-1, 3).sum(0) / alpha.sum()
    assert np.abs(mean - mean_ref).max() < 0.06, (mean, mean_ref)
    night = _render(scene, tmp_path / "set", tmp_path / "cache", px=px, samples=16,
                    pitch_deg=0.0, lighting="night")
    assert np.abs(night.astype(int) - rgba.astype(int)).mean() < 2.0  # baked radiance


def _shared_files() -> list[Path]:
    if not SHARED.is_dir():
        return []
    out = []
    for folder in ("gltf-samples", "generator-outputs"):
        for path in sorted((SHARED / folder).rglob("*")):
            if path.is_file() and path.suffix.lower() not in (
                ".bin", ".png", ".jpg", ".txt", ".md"
            ):
                out.append(path)
    return out


#: conventions a user gives these files (their generators' documented conventions)
SHARED_CONVENTIONS = {
    "speakandsee3d__output_0_mesh.obj": Conventions(up="z"),  # TripoSR writes z up
    "anik81__output_0_mesh.obj": Conventions(up="z"),
    "2CylinderEngine.gltf": Conventions(unit="mm"),
    "speakandsee3d__output_0_points.ply": Conventions(front="+x"),  # the text "BLANT AUDIO"
    # Stable Fast 3D-style GLBs face -z: with glTF's +z they show the cat's back, mirrored text
    **{f"speakandsee3d__{n}.glb": Conventions(front="-z")
       for n in ("3D_models_cat", "3D_models_elephant", "3D_models_volcano", "output_0_mesh")},
    **{f"sf3d_prnyc__{n}.glb": Conventions(front="-z") for n in ("output_0_mesh", "train_mesh_0_mesh")},
}
#: files that are invalid on purpose, with the words their refusal must contain
SHARED_INVALID = {
    "IndexOutOfRange.gltf": "index",
    "AllIndicesOutOfRange.gltf": "index",
    "sceneeval__layoutvlm_scene_3.json": "asset",  # Objaverse assets not in the repository
}


@pytest.mark.skipif(not SHARED.is_dir(), reason="the public sample files are absent (set T3D_AUDIT_SHARED_DATA)")
@pytest.mark.parametrize("path", _shared_files(), ids=lambda p: p.name)
def test_shared_files_render_faithfully_or_are_refused(path: Path, tmp_path: Path) -> None:
    from harness.core.errors import AuditError

    conv = SHARED_CONVENTIONS.get(path.name)
    try:
        scene = _scene(path, tmp_path / "set", conv)
        rgba = _render(scene, tmp_path / "set", tmp_path / "cache", px=48, samples=2,
                       pitch_deg=45.0)
    except AuditError as exc:
        words = SHARED_INVALID.get(path.name)
        assert words is not None, f"{path.name} refused: {exc}"
        assert words in str(exc).lower() and "\n" not in exc.what.strip()
        return
    assert path.name not in SHARED_INVALID, f"{path.name} should have been refused"
    alpha = rgba[..., 3] / 255.0
    assert (alpha > 0).mean() > 0.005, f"{path.name}: nothing visible"
    if scene.source.get("colour") == "none":
        return
    rgb = rgba[..., :3].reshape(-1, 3).astype(float) / 255
    weights = alpha.reshape(-1)
    mean = (rgb * weights[:, None]).sum(0) / weights.sum()
    spread = float(np.sqrt((weights[:, None] * (rgb - mean) ** 2).sum() / (3 * weights.sum())))
    sat = _hue(mean)[1]
    assert sat > 0.03 or spread > 0.05, f"{path.name}: grey (saturation {sat:.3f}, std {spread:.3f})"
