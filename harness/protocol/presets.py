"""Protocol presets: the published rendering-and-scoring protocols of text-to-3D benchmarks.

A :class:`Protocol` is one frozen declaration: the views (elevation, azimuth, field of view),
which of them the evaluator is shown, resolution, lighting (a studio map or a uniform ambient
level), background, passes (shaded, normal map), texture on or off, tiling into one image and
the aggregation over views, and the source's frame and framing: which way its assets face
(``frame``, :mod:`~harness.protocol.source_cameras`), whether its camera stands at a fixed
distance (``camera_distance`` in ``distance_unit`` s of the scene box) or the harness
auto-frames, and the background of its normal pass. ``disclosed`` names the parameters the source states; every other
value is this harness's stated assumption (docs/protocols.md cites each source), and
reproduction forensics (``forensics.py``) perturbs exactly those.

Every preset's views are ordinary :class:`~harness.protocol.configurations.RenderConfig` s
(:meth:`Protocol.render_configs`), so a view two presets share is one render-cache entry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from harness.core.errors import ProtocolError
from harness.protocol.cameras import View, icosphere, render_config
from harness.protocol.configurations import DISTANCE_UNITS, Configuration, RenderConfig
from harness.protocol.source_cameras import (
    FRAMES,
    blender_track_view,
    pyrender_lookat_view,
    pytorch3d_view,
    threestudio_view,
)
from harness.protocol.view_policies import register_policy_family
from harness.protocol.view_reduce import aggregate, check_aggregation

PASSES = ("shaded", "normal")
#: Parameters a protocol declares (the names ``disclosed`` and forensics use).
PARAMETERS = ("views", "elevation", "azimuth", "fov", "resolution", "lighting", "ambient",
              "background", "passes", "texture", "geometry", "tiling", "aggregation", "frame",
              "framing")  # fmt: skip



@dataclass(frozen=True)
class Protocol:
    """One evaluation protocol (see the module docstring). Angles in degrees, sizes in pixels.

    ``views``: every camera the source renders; ``shown``: indices of the views the evaluator
    sees (empty: all). ``icosphere``: ``(subdivisions, lenses)`` when the views are icosphere
    vertices × lenses in vertex-major order (T3Bench), which ``icosphere_max`` needs.
    ``tiling``: ``(cols, rows)`` of one grid per pass (``None``: each view scored alone);
    ``geometry``: ``"points"`` draws the scene's objects as surface samples.
    ``passes``: one image per pass and view, stacked pass by pass when tiled (GPTEval3D's RGB
    sheet above its normal sheet); untiled, every pass of every view is one score.
    ``frame``: the source's world frame (:data:`~harness.protocol.source_cameras.FRAMES`): its
    views are already turned into the harness frame, and its normal pass colours the normal
    in that frame's axes. ``camera_distance``: ``None`` auto-frames (the scene box fills 85 %
    of the frame); a number is the source's camera radius in ``distance_unit`` s of the scene
    box (``half_side``, ``side`` or ``radius``; :func:`harness.render.framing.box_unit`).
    ``normal_background``: the level the normal pass is composited on (``None``: ``background``).
    """

    name: str
    title: str
    source: str
    views: tuple[View, ...]
    shown: tuple[int, ...] = ()
    resolution_px: int = 512
    lighting: str = "city"
    ambient: float | None = None
    background: str = "255"
    passes: tuple[str, ...] = ("shaded",)
    texture: bool = True
    geometry: str = "mesh"
    tiling: tuple[int, int] | None = None
    aggregation: str = "mean"
    icosphere: tuple[int, int] | None = None
    samples: int = 16
    frame: str = "blender"
    camera_distance: float | None = None
    distance_unit: str = "half_side"
    normal_background: str | None = None
    disclosed: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        where = f"protocol {self.name!r}"
        if not self.views:
            raise ProtocolError("a protocol needs at least one view", where=where)
        if any(not 0 <= i < len(self.views) for i in self.shown):
            raise ProtocolError("a shown view index is out of range", where=where)
        if not self.passes or any(p not in PASSES for p in self.passes):
            raise ProtocolError(f"passes must be some of {PASSES}", where=where)
        if self.geometry not in ("mesh", "points"):
            raise ProtocolError("geometry must be mesh or points", where=where)
        check_aggregation(self.aggregation)
        if self.tiling is not None and self.tiling[0] * self.tiling[1] != len(self.shown_views):
            raise ProtocolError(f"a {self.tiling[0]} x {self.tiling[1]} grid needs that many shown views",
                                where=where)  # fmt: skip
        if self.aggregation == "icosphere_max" and self.icosphere is None:
            raise ProtocolError("icosphere_max needs icosphere views", where=where)
        if self.frame not in FRAMES:
            raise ProtocolError(f"unknown source frame {self.frame!r}", where=where,
                                hint=f"use one of {', '.join(FRAMES)}")  # fmt: skip
        if self.distance_unit not in DISTANCE_UNITS or (
            self.camera_distance is not None and not self.camera_distance > 0
        ):
            raise ProtocolError("camera_distance must be > 0 (or None) in one of " + ", ".join(DISTANCE_UNITS),
                                where=where)  # fmt: skip
        if unknown := set(self.disclosed) - set(PARAMETERS):
            raise ProtocolError(f"unknown disclosed parameters {sorted(unknown)}", where=where)

    @property
    def shown_views(self) -> tuple[View, ...]:
        return tuple(self.views[i] for i in self.shown) if self.shown else self.views

    def base_render(self) -> RenderConfig:
        """The render settings every view shares (camera set per view by :meth:`render_configs`)."""
        return RenderConfig(resolution_px=self.resolution_px, lighting=self.lighting, samples=self.samples,
                            texture=self.texture, ambient=self.ambient, geometry=self.geometry,
                            camera_distance=self.camera_distance, distance_unit=self.distance_unit)  # fmt: skip

    def presentation(self, render: RenderConfig, render_pass: str) -> RenderConfig:
        """``render`` with this protocol's presentation and framing for ``render_pass`` (the
        normal frame only on the normal pass, so shaded views stay shared render-cache entries)."""
        return replace(render, render_pass=render_pass, texture=self.texture, ambient=self.ambient,
                       geometry=self.geometry, camera_distance=self.camera_distance,
                       distance_unit=self.distance_unit,
                       normal_frame=self.frame if render_pass == "normal" else "blender")  # fmt: skip

    def render_configs(self, render_pass: str = "shaded") -> tuple[RenderConfig, ...]:
        """One render configuration per shown view, for ``render_pass``."""
        base = self.presentation(self.base_render(), render_pass)
        return tuple(render_config(v, base) for v in self.shown_views)

    def pass_background(self, render_pass: str) -> str:
        """The background level the images of ``render_pass`` are composited on."""
        if render_pass == "normal" and self.normal_background is not None:
            return self.normal_background
        return self.background

    def images_per_scene(self) -> int:
        """Scores per scene before aggregation: 1 when tiled, else views × passes."""
        return 1 if self.tiling is not None else len(self.shown_views) * len(self.passes)

    def reduce(self, values: list[float]) -> float:
        """The scene's score from its image scores (:mod:`harness.protocol.view_reduce`)."""
        if self.aggregation == "icosphere_max":
            assert self.icosphere is not None
            _, neighbours = icosphere(self.icosphere[0])
            # one pass at a time: the best over passes of each pass's icosphere max
            n = len(self.shown_views)
            return max(aggregate(values[i * n : (i + 1) * n], "icosphere_max", neighbours=neighbours,
                                 lenses=self.icosphere[1]) for i in range(len(self.passes)))  # fmt: skip
        return aggregate(values, self.aggregation)

    def to_dict(self) -> dict[str, object]:
        """The JSON form (``t3d-audit protocol --preset NAME --json``, cards, forensics)."""
        return {
            "name": self.name,
            "title": self.title,
            "source": self.source,
            "views": [v.to_dict() for v in self.views],
            "shown": list(self.shown) or None,
            "resolution_px": self.resolution_px,
            "lighting": self.lighting,
            "ambient": self.ambient,
            "background": self.background,
            "passes": list(self.passes),
            "texture": self.texture,
            "geometry": self.geometry,
            "tiling": list(self.tiling) if self.tiling else None,
            "aggregation": self.aggregation,
            "icosphere": list(self.icosphere) if self.icosphere else None,
            "samples": self.samples,
            "frame": self.frame,
            "framing": "fill" if self.camera_distance is None
            else {"camera_distance": self.camera_distance, "unit": self.distance_unit},
            "normal_background": self.normal_background,
            "disclosed": sorted(self.disclosed),
        }

    def scaled(self, *, max_views: int | None = None, resolution_px: int | None = None,
               samples: int | None = None) -> Protocol:  # fmt: skip
        """A cheaper protocol of the same kind for tests and CPU runs: at most ``max_views``
        shown views (an icosphere protocol drops subdivision levels, then lenses, so its
        neighbourhoods stay whole; others keep every k-th view), and ``resolution_px`` /
        ``samples`` in place of its own. The name gains ``@scaled``."""
        out = self
        if max_views is not None and len(self.shown_views) > max_views:
            if max_views < 1:
                raise ProtocolError("max_views must be at least 1", where="--max-views")
            if self.icosphere is not None:
                sub, lenses = self.icosphere
                fovs = sorted({v.fov_deg for v in self.views}, key=lambda f: -(f or 0))
                while len(icosphere(sub)[0]) * lenses > max_views and (sub > 0 or lenses > 1):
                    sub, lenses = (sub - 1, lenses) if sub > 0 else (sub, lenses - 1)
                out = replace(out, views=icosphere_views(sub, tuple(fovs[:lenses])), icosphere=(sub, lenses),
                              shown=())  # fmt: skip
            elif self.tiling is None:
                shown = self.shown or tuple(range(len(self.views)))
                step = -(-len(shown) // max_views)
                out = replace(out, shown=tuple(shown[::step]))
            else:
                raise ProtocolError(f"{self.name} tiles {len(self.shown_views)} views into one image",
                                    where="--max-views", hint="a tiled protocol keeps its grid")  # fmt: skip
        if resolution_px is not None:
            out = replace(out, resolution_px=resolution_px)
        if samples is not None:
            out = replace(out, samples=samples)
        return out if out == self else replace(out, name=f"{self.name.split('@')[0]}@scaled")


def icosphere_views(subdivisions: int, fovs: tuple[float, ...]) -> tuple[View, ...]:
    """Icosphere vertices × lenses, vertex-major (T3Bench's ``{idx:03d}_{cam_idx}.png``): each
    vertex a T3Bench look-at camera on a mesh in threestudio's frame (assets face +x)."""
    points, _ = icosphere(subdivisions)
    return tuple(replace(pyrender_lookat_view(p, "threestudio"), fov_deg=f) for p in points for f in fovs)


def _ring(elevation: float, azimuths: tuple[float, ...], fov: float | None = None) -> tuple[View, ...]:
    return tuple(View(elevation, a, fov) for a in azimuths)


# T3Bench render/meshrender.py: yfov = pi/3, pi/4, pi/5, pi/6, pi/7.5
T3BENCH_FOVS = (60.0, 45.0, 36.0, 30.0, 24.0)
# threestudio's test cameras (threestudio/data/uncond.py; GPTEval3D's 120 views per asset):
# n_test_views 120, eval_elevation_deg 15, eval_fovy_deg 70, 512 px, test azimuths
# torch.linspace(0, 360, 120) from +x, where threestudio's assets face: azimuth 0 is the front
GPTEVAL3D_VIEWS = tuple(threestudio_view(15.0, 360.0 * i / 119, 70.0) for i in range(120))
# HyperScore projection/util_projection.py: render_view_list (elev, azim), look_at_view_transform
# (dist=2) with FoVPerspectiveCameras' default fov of 60 degrees
MATE3D_VIEWS = tuple(pytorch3d_view(e, a, 60.0) for e, a in ((0, 0), (0, 90), (0, 180), (0, -90), (90, 0), (-90, 0)))
# 3DCodeBench core/render.py: camera at (1.8 cos t, 1.8 sin t, 0.6) x extent, t = 9 degrees x frame,
# frames 5, 15, 25, 35, tracked to the centre; lens 50 mm (the harness's default lens)
CODEBENCH_RADIUS, CODEBENCH_HEIGHT = 1.8, 0.6
CODEBENCH_VIEWS = tuple(
    blender_track_view(np.array([CODEBENCH_RADIUS * math.cos(math.radians(9.0 * f)),
                                 CODEBENCH_RADIUS * math.sin(math.radians(9.0 * f)), CODEBENCH_HEIGHT]))
    for f in (5, 15, 25, 35)
)  # fmt: skip


_DEFECTBENCH = Protocol(
    name="3d-defectbench",
    title="3D-DefectBench (texture aspect): eight views at 5 degrees, one 4 x 2 grid on white",
    source="Hugging Face dataset aieval2026/3d-defectbench: code/prompts_protocol.md (Rendering protocol)",
    views=_ring(5.0, tuple(45.0 * i for i in range(8))),
    resolution_px=1024,  # "1024 x 1024 px per view"
    background="255",
    tiling=(4, 2),
    disclosed=frozenset({"views", "elevation", "azimuth", "resolution", "background", "texture",
                         "tiling"}),
)


PRESETS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol(
            name="gpteval3d",
            title="GPTEval3D (Wu et al., CVPR 2024): GPT-4V pairwise judgments, Elo",
            source="github.com/3DTopia/GPTEval3D: gpteval3d/utils/t23d_tournament.py, assets/data_format.md",
            views=GPTEVAL3D_VIEWS,
            shown=(0, 30, 60, 90),  # view_ids = range(0, 120, 120 // nviews), nviews = 4
            resolution_px=512,
            passes=("shaded", "normal"),
            tiling=(2, 2),  # create_square_images(ncols=2), RGB sheet above the normal sheet
            aggregation="mean",
            frame="threestudio",
            normal_background="0",  # comp_normal = (n + 1) / 2 * opacity: black where empty
            disclosed=frozenset({"views", "resolution", "passes", "tiling"}),
        ),
        Protocol(
            name="t3bench",
            title="T3Bench (He et al., 2023) quality: ImageReward, best view after icosphere smoothing",
            source="github.com/THU-LYJ-Lab/T3Bench: render/meshrender.py, run_eval_quality.py",
            views=icosphere_views(2, T3BENCH_FOVS),
            resolution_px=512,
            ambient=1.0,  # pyrender Scene(ambient_light=[1, 1, 1]), FLAT
            background="0",  # bg_color=[0, 0, 0]
            aggregation="icosphere_max",
            icosphere=(2, len(T3BENCH_FOVS)),
            frame="threestudio",  # meshes exported by threestudio, loaded by trimesh as they are
            camera_distance=2.2,  # Radius = 2.2, the mesh scaled to max |coordinate| 1
            distance_unit="half_side",
            disclosed=frozenset({"views", "elevation", "azimuth", "fov", "resolution", "ambient",
                                 "background", "aggregation", "frame", "framing"}),
        ),
        Protocol(
            name="t3bench-caption",
            title="T3Bench (He et al., 2023) alignment: 12 captioned views",
            source="github.com/THU-LYJ-Lab/T3Bench: render/meshrender_cap.py",
            views=icosphere_views(0, (60.0,)),
            resolution_px=512,
            ambient=1.0,
            background="0",
            aggregation="mean",
            icosphere=(0, 1),
            frame="threestudio",
            camera_distance=4.84,  # icosphere(radius=2.2) and then vertices *= 2.2
            distance_unit="half_side",
            disclosed=frozenset({"views", "elevation", "azimuth", "fov", "resolution", "ambient",
                                 "background", "frame", "framing"}),
        ),
        Protocol(
            name="mate3d",
            title="MATE-3D / HyperScore (Zhang et al., 2024): six axis-aligned views",
            source="github.com/zhangyujie-1998/HyperScore: projection/util_projection.py; MATE-3D, arXiv:2412.11170",
            views=MATE3D_VIEWS,
            resolution_px=512,  # RasterizationSettings(image_size=512)
            ambient=0.8,  # AmbientLights(ambient_color=0.8)
            background="255",  # BlendParams(background_color=(1, 1, 1))
            aggregation="mean",
            frame="y-up-front-z",  # OBJ loaded as it is; PyTorch3D's azimuth 0 is on +z
            camera_distance=2.0,  # dist=2, vertices scaled into the unit sphere about the centroid
            distance_unit="radius",
            disclosed=frozenset({"views", "elevation", "azimuth", "fov", "resolution", "ambient",
                                 "background", "framing"}),
        ),
        _DEFECTBENCH,
        replace(
            _DEFECTBENCH,
            name="3d-defectbench-geometry",
            title="3D-DefectBench (geometry aspect): the same grid, materials disabled (matte grey)",
            source="Hugging Face dataset aieval2026/3d-defectbench: code/prompts_protocol.md (Texture mode)",
            texture=False,
        ),
        Protocol(
            name="3dcodebench",
            title="3DCodeBench (2026): four turntable views rendered in Blender, SigLIP-2",
            source="github.com/llada60/3dcodebench: core/render.py, metrics/image_similarity.py",
            views=CODEBENCH_VIEWS,
            resolution_px=512,  # --resolution default 512
            background="0",  # transparent film, PNG read with convert("RGB"): black where empty
            aggregation="mean",
            frame="blender",
            camera_distance=round(math.hypot(CODEBENCH_RADIUS, CODEBENCH_HEIGHT), 9),
            distance_unit="side",  # extent = the largest side of the scene's bounding box
            disclosed=frozenset({"views", "elevation", "azimuth", "fov", "resolution", "framing"}),
        ),
    )
}


def get_preset(name: str) -> Protocol:
    """The preset ``name``, or a :class:`ProtocolError` listing them."""
    if name not in PRESETS:
        raise ProtocolError(f"unknown protocol preset {name!r}", where="--preset",
                            hint=f"use one of {', '.join(PRESETS)}")  # fmt: skip
    return PRESETS[name]


def preset_names(text: str, *, at_least: int = 1, repeats: bool = False) -> list[str]:
    """The preset names of a ``--presets`` list (``"a,b"``): at least ``at_least`` of them,
    each known, none empty (``"a,,b"``, a trailing comma) nor repeated (with ``repeats``, a
    repeated name counts once); a :class:`ProtocolError` naming the first problem otherwise."""
    known = f"of {', '.join(PRESETS)}"
    names = [n.strip() for n in text.split(",")]
    if repeats:
        names = list(dict.fromkeys(names))
    problem = None
    if any(not n for n in names):
        problem = "has an empty item"
    elif len(set(names)) != len(names):
        problem = f"names {next(n for n in names if names.count(n) > 1)!r} twice"
    elif len(names) < at_least:
        problem = f"needs {'two' if at_least == 2 else at_least} or more distinct names"
    if problem is not None:
        raise ProtocolError(f"--presets {text[:200]!r} {problem}", where="--presets",
                            hint=f"e.g. mate3d,3d-defectbench ({known})")  # fmt: skip
    for name in names:
        if name not in PRESETS:
            raise ProtocolError(f"--presets names an unknown preset {name[:80]!r}", where="--presets",
                                hint=f"use some {known}")  # fmt: skip
    return names


def parse_presets(text: str) -> tuple[Protocol, ...]:
    """``"a,b"`` → the presets (at least two, no repeats) for ``--presets``."""
    return tuple(get_preset(n) for n in preset_names(text, at_least=2))


# ---------------------------------------------------------------------------------------------
# An audit under a preset: ``--audit-view-policy preset:NAME`` (docs/protocols.md)

POLICY_PREFIX = "preset"


def policy_protocol(policy: str) -> Protocol | None:
    """The preset of view policy ``preset:NAME``, ``None`` for any other policy."""
    prefix, sep, name = policy.partition(":")
    return get_preset(name) if sep and prefix == POLICY_PREFIX else None


_HARNESS_RENDER = RenderConfig()


def preset_quality(render: RenderConfig, p: Protocol) -> RenderConfig:
    """``render`` at the preset's resolution and sample count where it is at the harness's
    defaults (512 px, 16 samples); a value off the default (a profile's c0, a resolution
    level) is the user's and is kept."""
    out = render
    if render.resolution_px == _HARNESS_RENDER.resolution_px:
        out = replace(out, resolution_px=p.resolution_px)
    if render.samples == _HARNESS_RENDER.samples:
        out = replace(out, samples=p.samples)
    return out


def configuration_views(cfg: Configuration, name: str) -> tuple[RenderConfig, ...]:
    """The renders one score of ``cfg`` looks at under preset ``name``: the preset's cameras
    (pitch, yaw and, where it gives one, the lens) and presentation (pass, texture, ambient,
    geometry) over the configuration's other settings (lighting, and resolution and samples
    where the user set them: :func:`preset_quality`), pass by pass. The audit's camera factors
    therefore change nothing under a preset; its other factors still do."""
    p = get_preset(name)
    out = []
    for render_pass in p.passes:
        base = p.presentation(preset_quality(cfg.render, p), render_pass)
        out += [render_config(v, base) for v in p.shown_views]
    return tuple(out)


register_policy_family(POLICY_PREFIX, get_preset, configuration_views)
