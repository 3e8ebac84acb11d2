"""The measurement protocol's configurations: factors, levels (study Table 11), c0, render
configurations and configuration ids.

A *configuration* is one measurement protocol: a render configuration (what Blender renders),
a background (composited afterwards), a caption template and a paraphrase. The study sweeps
one factor at a time (OFAT) from the default c0. Levels are strings exactly as written in
Table 11 (``"512"``, ``"50"``, ``"city"``, ``"255"``, ``"red"``, ``"45"``), template ids, or
``p0``..``p10``; which ones a record may carry is :mod:`harness.protocol.levels`. Profiles
(:mod:`harness.protocol.profiles`) pick subsets of levels for speed; view policies
(:mod:`harness.protocol.view_policies`) say which renders one score looks at.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from functools import lru_cache

from harness.core.errors import ProtocolError
from harness.core.hashing import sha256_json
from harness.vocab.factors import (
    CHROMATIC_RGB,
    FACTORS,
    GRAYS,
    Stage,
    crossable_factor_names,
    factor_names,
)

FactorKind = Stage

BASELINE = "baseline"
C0 = "c0"
YAW_PITCH_DEG = 45.0  # yaw is swept at 45° pitch: at top-down it is mostly an in-plane rotation

#: The record factor of factorial-block cells; its level names the cell
#: (:func:`harness.protocol.levels.cell_level`).
BLOCK = "block"
#: The record factor of a search point; its level is the point's printed form,
#: ``name=value`` pairs joined by commas (:mod:`harness.search.space`).
SEARCH = "search"


@dataclass(frozen=True)
class KindView:
    """How scenes of one kind are looked at and captioned by default (c0), and where yaw turns.

    ``c0_pitch_deg``: the default camera pitch (0 top-down, 90 eye level); ``yaw_pitch_deg``:
    the pitch the yaw sweep turns at; ``c0_template``: the default caption template id.
    Factor levels keep their literal meaning for every kind (``pitch=0`` is top-down for a room
    and for an object alike); only the default they are swept from differs.
    """

    c0_pitch_deg: float
    yaw_pitch_deg: float
    c0_template: str


def _kind_views() -> dict[str, KindView]:
    from harness.captions import DEFAULT_TEMPLATE_ID

    return {
        # the study's protocol: rooms seen top-down, captioned "A top-down view of …"
        "room": KindView(0.0, YAW_PITCH_DEG, DEFAULT_TEMPLATE_ID),
        # a single generated object: the front three-quarter-high view of object renders
        # (30° above the horizon, camera in front, i.e. on the object's -y side), captioned
        # with the prompt verbatim as text-to-3D CLIPScore evaluations do; top-down would show
        # only an object's top face and nothing of an upright flat asset.
        "object": KindView(OBJECT_C0_PITCH_DEG, OBJECT_C0_PITCH_DEG, IDENTITY_TEMPLATE_ID),
    }


OBJECT_C0_PITCH_DEG = 60.0
IDENTITY_TEMPLATE_ID = "-.-.-.-.-"  # the prompt verbatim


def kind_view(kind: str) -> KindView:
    """The default view of scene kind ``kind`` (``room`` or ``object``)."""
    views = _kind_views()
    if kind not in views:
        raise ProtocolError(
            f"unknown scene kind {kind!r}", where="kind", hint=f"use one of {', '.join(views)}"
        )
    return views[kind]


@dataclass(frozen=True)
class Factor:
    """One OFAT factor: its levels in Table 11 order, the default level and how it is applied."""

    name: str
    levels: tuple[str, ...]
    default: str
    kind: FactorKind


def factors() -> dict[str, Factor]:
    """Every registered factor, in record order (:mod:`harness.vocab.factors`), read live: a
    factor registered after import is here at once. The dict is shared: do not change it."""
    return _factors(FACTORS.version)


@lru_cache(maxsize=1)
def _factors(_version: int) -> dict[str, Factor]:
    out = {}
    for spec in FACTORS:
        levels, default = spec.resolved()
        out[spec.name] = Factor(spec.name, levels, default, spec.stage)
    return out


def record_factors() -> tuple[str, ...]:
    """The ``factor`` column's values in record order: ``baseline``, every registered factor,
    ``probe`` (read live)."""
    return (BASELINE, *factor_names(), "probe")


def block_factors() -> tuple[str, ...]:
    """Factors a block may cross: the shared factors whose levels change one setting each (yaw
    also moves the pitch, paraphrase captions are per prompt: neither crosses cleanly)."""
    return crossable_factor_names()


#: The defaults of two render settings added for the search: a map at 6500 K is left untinted,
#: and the scene box fills 1 - 0.15 of the frame (``harness.render.framing.FILL``).
NEUTRAL_TEMPERATURE_K = 6500.0
DEFAULT_FRAMING_MARGIN = 0.15
#: How a source's fixed camera distance is measured on the scene box (``RenderConfig.distance_unit``):
#: half its largest side, its largest side, half its diagonal.
DISTANCE_UNITS = ("half_side", "side", "radius")

#: The study's render fields: always part of a render key. Fields added later are keyed only
#: when set off their default (:meth:`RenderConfig.to_dict`).
_STUDY_RENDER_FIELDS = frozenset(
    ("resolution_px", "focal_length_mm", "lighting", "pitch_deg", "yaw_deg", "samples", "seed",
     "denoise")
)


@dataclass(frozen=True)
class RenderConfig:
    """Everything Blender needs besides the scene. Hashable: a render-cache key component.

    ``pitch_deg`` 0 = top-down, 90 = eye level; ``yaw_deg`` rotates the camera about the room
    centre; ``focal_length_mm`` on a 36 mm sensor; ``resolution_px`` square images.
    """

    resolution_px: int = 512
    focal_length_mm: float = 50.0
    lighting: str = "city"
    pitch_deg: float = 0.0
    yaw_deg: float = 0.0
    samples: int = 16
    seed: int = 0
    denoise: bool = False
    # presentation (keyed only off their defaults): ``render_pass`` "shaded" or
    # "normal" (world-space normals as colour), ``texture`` False renders every surface in the
    # default grey, ``ambient`` a uniform white world of that strength instead of the map,
    # ``geometry`` "points" draws the scene's objects as points sampled on their surfaces
    render_pass: str = "shaded"
    texture: bool = True
    ambient: float | None = None
    geometry: str = "mesh"
    # a source's fixed camera (protocol presets; keyed only off their defaults):
    # ``camera_distance`` None auto-frames (the scene box fills the frame); a number places
    # the camera that many ``distance_unit`` s from the box centre, lens unshifted, as the
    # source does ("half_side": half the box's largest side, "side": that side, "radius":
    # half the box diagonal). ``normal_frame``: the source frame (``source_cameras.FRAMES``)
    # whose axes the normal pass colours, "blender" being the harness's own
    camera_distance: float | None = None
    distance_unit: str = "half_side"
    normal_frame: str = "blender"
    # added after the study's eight (the search's continuous space): keyed only off
    # their defaults, and at their defaults the renderer does exactly what it did before
    light_rotation_deg: float = 0.0  # turn of the environment map about the vertical axis
    light_strength: float = 1.0  # multiplier of the environment's strength
    colour_temperature_k: float = NEUTRAL_TEMPERATURE_K  # blackbody tint; 6500 K: no tint
    framing_margin: float = DEFAULT_FRAMING_MARGIN  # 1 - the frame share the scene box fills
    # a render factor registered without a field of its own (harness.vocab.factors.on_render):
    # (factor, level) pairs off the factor's default, sorted; keyed only when not empty
    extras: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # one render, one key: a whole number or -0.0 in a float field is keyed as its float
        # (30 and 30.0, -0.0 and 0.0 are the same render; canonical JSON would tell them apart)
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("float", "float | None") and isinstance(value, int | float) and not isinstance(value, bool):
                object.__setattr__(self, f.name, float(value) + 0.0)

    def extra(self, factor: str, default: str) -> str:
        """The level of render factor ``factor`` kept in :attr:`extras` (``default`` when unset):
        how the renderer reads a factor registered without a field of its own."""
        return dict(self.extras).get(factor, default)

    def to_dict(self) -> dict[str, object]:
        """The fields as a dict. A field added after the study's eight is written only when it
        is off its default, so adding one (a new render factor's setting) moves no existing
        render key, configuration hash or run id."""
        out = asdict(self)
        for f in fields(self):
            if f.name not in _STUDY_RENDER_FIELDS and out[f.name] == f.default:
                del out[f.name]
        return out

    @property
    def key(self) -> str:
        """sha256 of the canonical JSON of the fields (see :meth:`to_dict`)."""
        return sha256_json(self.to_dict())


@dataclass(frozen=True)
class Configuration:
    """One measurement protocol: factor/level + the full render, background and caption settings."""

    factor: str
    level: str
    render: RenderConfig
    background: str = "255"
    template: str = ""
    paraphrase: str = "p0"

    @property
    def id(self) -> str:
        """Stable readable id: ``baseline`` or ``<factor>=<level>``."""
        return BASELINE if self.factor == BASELINE else f"{self.factor}={self.level}"

    def to_dict(self) -> dict[str, object]:
        return {
            "factor": self.factor,
            "level": self.level,
            "render": self.render.to_dict(),
            "background": self.background,
            "template": self.template,
            "paraphrase": self.paraphrase,
        }

    @property
    def hash(self) -> str:
        """sha256 of the canonical JSON of the full configuration."""
        return sha256_json(self.to_dict())


def background_rgb(level: str) -> tuple[int, int, int]:
    """RGB (0..255) of a background level: a gray value or red/green/blue."""
    if level in CHROMATIC_RGB:
        return CHROMATIC_RGB[level]
    if level in GRAYS:
        g = int(level)
        return (g, g, g)
    raise ProtocolError(
        f"unknown background level {level!r}",
        where="background",
        hint=f"use one of {', '.join((*GRAYS, *CHROMATIC_RGB))}",
    )
