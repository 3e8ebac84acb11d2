"""The measurement protocol: factors, levels (study Table 11), c0, configurations, profiles.

A *configuration* is one measurement protocol: a render configuration (what Blender renders),
a background (composited afterwards), a caption template and a paraphrase. The study sweeps
one factor at a time (OFAT) from the default c0. Levels are strings exactly as written in
Table 11 (``"512"``, ``"50"``, ``"city"``, ``"255"``, ``"red"``, ``"45"``), template ids, or
``p0``..``p10``. Profiles (``harness/profiles.json``) pick subsets of levels for speed.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from functools import lru_cache
from pathlib import Path

from harness.core.errors import AuditError, ProtocolError
from harness.core.hashing import sha256_json
from harness.vocab.factors import (
    CHROMATIC_RGB,
    FACTORS,
    GRAYS,
    PITCH,
    YAW,
    Stage,
    crossable_factor_names,
    factor_names,
    shared_factor_names,
)
from harness.vocab.factors import LIGHTING_MAPS as LIGHTING_MAPS  # re-exported for the renderer
from harness.vocab.factors import PARAPHRASE_LEVELS as PARAPHRASE_LEVELS
from harness.vocab.probes import PROBES as _PROBES
from harness.vocab.probes import probe_names

FactorKind = Stage

BASELINE = "baseline"
C0 = "c0"
YAW_PITCH_DEG = 45.0  # yaw is swept at 45° pitch: at top-down it is mostly an in-plane rotation

#: The record factor of factorial-block cells; its level names the cell (:func:`cell_level`).
BLOCK = "block"
#: The record factor of a search point; its level is the point's printed form,
#: ``name=value`` pairs joined by commas (:mod:`harness.search.space`).
SEARCH = "search"
BLOCK_SEPARATOR = ":"  # block id: its factors in record order, "lighting:pitch"


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


def check_level(factor: str, level: str) -> None:
    """Raise :class:`ProtocolError` unless ``level`` is a Table 11 level of ``factor``.

    ``baseline`` takes ``c0``; ``probe`` takes a probe name; ``block`` a cell
    (:func:`parse_cell`).
    """
    if factor == BASELINE:
        ok = level == C0
        allowed: tuple[str, ...] = (C0,)
    elif factor == "probe":
        allowed = probe_names()
        ok = level in allowed
    elif factor == BLOCK:
        parse_cell(level)
        return
    elif factor in factors():
        allowed = factors()[factor].levels
        ok = level in allowed
    else:
        raise ProtocolError(
            f"unknown factor {factor!r}",
            where="factor",
            hint=f"use one of {', '.join(record_factors())}, {BLOCK}",
        )
    if not ok:
        shown = ", ".join(allowed[:12]) + (" ..." if len(allowed) > 12 else "")
        raise ProtocolError(
            f"unknown level {level!r} for factor {factor!r}",
            where="level",
            hint=f"use one of {shown}",
        )


# ---------------------------------------------------------------------------------------------
# View policies

#: How a configuration's image is looked at: ``single`` (the configuration's one camera, the
#: study's protocol), ``mean4`` / ``max4`` (the mean / the best of the scores of four views
#: at the canonical azimuths) and ``sheet4`` (the four views tiled into one 2 × 2 sheet, scored
#: once, as multi-view judges are fed).
VIEW_POLICIES = ("single", "mean4", "max4", "sheet4")
DEFAULT_VIEW_POLICY = "single"
CANONICAL_AZIMUTHS = (0.0, 90.0, 180.0, 270.0)  # added to the configuration's own yaw


#: View-policy families registered by other modules, by prefix: ``"<prefix>:<name>"`` is a
#: policy when ``check(name)`` passes; ``views(cfg, name)`` are its renders. The protocol
#: presets register ``preset`` (``harness.protocol.presets``: ``preset:mate3d``).
POLICY_FAMILIES: dict[str, tuple[object, object]] = {}


def register_policy_family(prefix: str, check: object, views: object) -> None:
    """Register the view-policy family ``prefix`` (see :data:`POLICY_FAMILIES`)."""
    POLICY_FAMILIES[prefix] = (check, views)


def policy_family(name: str) -> tuple[str, str] | None:
    """``(prefix, member)`` of a registered family's policy name, else ``None``."""
    prefix, sep, member = name.partition(":")
    return (prefix, member) if sep and prefix in POLICY_FAMILIES else None


def check_view_policy(name: str) -> str:
    """``name`` if it is a view policy, else a :class:`ProtocolError` listing them."""
    family = policy_family(name)
    if family is not None:
        POLICY_FAMILIES[family[0]][0](family[1])  # raises a ProtocolError naming the members
        return name
    if name not in VIEW_POLICIES:
        raise ProtocolError(
            f"unknown view policy {name!r}", where="--audit-view-policy",
            hint=f"use one of {', '.join(VIEW_POLICIES)}",
        )
    return name


def policy_views(cfg: Configuration, policy: str, yaw_pitch_deg: float) -> tuple[RenderConfig, ...]:
    """The renders one score of ``cfg`` looks at under view ``policy``.

    ``single``: ``(cfg.render,)``. The multi-view policies: four renders at the configuration's
    yaw plus 0°, 90°, 180° and 270°, at its pitch when the configuration sets one (a ``pitch``
    or ``yaw`` level, or a block cell crossing pitch) and otherwise at ``yaw_pitch_deg`` —
    the kind's yaw-sweep pitch (rooms 45°: around a top-down c0 the four azimuths would only
    rotate the image in plane; objects 60°, their own c0). Render settings other than the
    camera stay the configuration's.
    """
    check_view_policy(policy)
    if policy == DEFAULT_VIEW_POLICY:
        return (cfg.render,)
    family = policy_family(policy)
    if family is not None:
        return tuple(POLICY_FAMILIES[family[0]][1](cfg, family[1]))
    sets_pitch = cfg.factor in (PITCH, YAW) or (
        cfg.factor == BLOCK and any(f == PITCH for f, _ in parse_cell(cfg.level))
    )
    pitch = cfg.render.pitch_deg if sets_pitch else yaw_pitch_deg
    return tuple(
        replace(cfg.render, pitch_deg=float(pitch), yaw_deg=float((cfg.render.yaw_deg + a) % 360.0))
        for a in CANONICAL_AZIMUTHS
    )


# ---------------------------------------------------------------------------------------------
# Factorial blocks


def cell_level(pairs: tuple[tuple[str, str], ...]) -> str:
    """The record level of a block cell: ``factor=level`` pairs joined by ``,``, factors in
    record order (``lighting=night,pitch=45``). Raises :class:`ProtocolError` (see
    :func:`parse_cell`) for anything :func:`parse_cell` would not read back."""
    text = ",".join(f"{f}={lv}" for f, lv in pairs)
    parse_cell(text)
    return text


def parse_cell(level: str) -> tuple[tuple[str, str], ...]:
    """The ``(factor, level)`` pairs of a block cell's record level (strict).

    ``level`` is 2 or 3 ``factor=level`` pairs joined by ``,`` with no spaces; factors are
    distinct :func:`block_factors` in record order (one spelling per cell), each level a
    Table 11 level of its factor. Raises :class:`ProtocolError` naming what is wrong.
    """
    where = "level"
    hint = "write a block cell as factor=level pairs in record order, e.g. lighting=night,pitch=45"
    if not isinstance(level, str) or not level or level != level.strip() or " " in level:
        raise ProtocolError(f"malformed block cell {level!r}", where=where, hint=hint)
    pairs: list[tuple[str, str]] = []
    for part in level.split(","):
        name, sep, value = part.partition("=")
        if not sep or not name or not value or "=" in value:
            raise ProtocolError(f"malformed block cell {level!r}: {part!r}", where=where, hint=hint)
        if name not in block_factors():
            raise ProtocolError(
                f"block cell {level!r}: factor {name!r} cannot be crossed",
                where=where,
                hint=f"block factors: {', '.join(block_factors())}",
            )
        check_level(name, value)
        pairs.append((name, value))
    names = [f for f, _ in pairs]
    if not 2 <= len(pairs) <= 3:
        raise ProtocolError(
            f"block cell {level!r} crosses {len(pairs)} factor(s)", where=where,
            hint="a block crosses 2 or 3 factors",
        )
    order = [record_factors().index(f) for f in names]
    if len(set(names)) != len(names) or order != sorted(order):
        raise ProtocolError(
            f"block cell {level!r}: factors repeated or out of record order", where=where, hint=hint
        )
    return tuple(pairs)


def block_id(factor_names: tuple[str, ...]) -> str:
    """The id of the block crossing ``factor_names`` (record order): ``lighting:pitch``."""
    return BLOCK_SEPARATOR.join(factor_names)


def parse_block_id(text: str) -> tuple[str, ...]:
    """The factors of block id ``text`` (strict: distinct block factors in record order)."""
    names = tuple(text.split(BLOCK_SEPARATOR)) if isinstance(text, str) else ()
    record = record_factors()
    ok = 2 <= len(names) <= 3 and all(n in block_factors() for n in names)
    ok = ok and len(set(names)) == len(names)
    ok = ok and [record.index(n) for n in names] == sorted(record.index(n) for n in names)
    if not ok:
        raise ProtocolError(
            f"malformed block id {text!r}",
            where="block",
            hint="2 or 3 distinct block factors in record order joined by ':', e.g. lighting:pitch",
        )
    return names


@dataclass(frozen=True)
class Block:
    """A factorial block: 2 or 3 factors (record order) and the levels of each, rendered as
    the full cross. ``levels[i]`` are the levels of ``factors[i]`` in declaration order."""

    factors: tuple[str, ...]
    levels: tuple[tuple[str, ...], ...]

    @property
    def id(self) -> str:
        return block_id(self.factors)

    def cells(self) -> list[tuple[tuple[str, str], ...]]:
        """Every cell of the cross, the last factor varying fastest."""
        from itertools import product

        return [tuple(zip(self.factors, combo, strict=True)) for combo in product(*self.levels)]

    def to_dict(self) -> dict[str, list[str]]:
        return {f: list(lv) for f, lv in zip(self.factors, self.levels, strict=True)}


# ---------------------------------------------------------------------------------------------
# Profiles


@dataclass(frozen=True)
class Profile:
    """A named subset of the study protocol, chosen with ``--audit-profile``.

    ``c0`` is the profile's default render (the study's c0 is 512 px; fast profiles may use a
    smaller Table 11 resolution as their default). ``levels`` maps factor → selected levels;
    ``prompts`` is how many prompt ids (sorted) to audit, ``None`` for all. ``scene_kind`` is
    the kind of scene set it is applied to (:meth:`for_scene_kind`): it sets the c0 pitch,
    the pitch of the yaw sweep and the c0 caption template (:class:`KindView`). ``blocks``
    are factorial blocks (:class:`Block`) rendered as full crosses besides the OFAT sweep.
    """

    name: str
    description: str
    c0: RenderConfig
    levels: dict[str, tuple[str, ...]]
    prompts: int | None
    generators: tuple[str, ...] | None
    probes: tuple[str, ...]
    evaluators: tuple[str, ...]
    bootstrap: int
    scene_kind: str = "room"
    blocks: tuple[Block, ...] = ()
    search: SearchBlock | None = None

    def __hash__(self) -> int:
        return hash((self.name, self.scene_kind))

    def for_scene_kind(self, kind: str) -> Profile:
        """This profile applied to scenes of ``kind``: its c0 pitch becomes the kind's default.

        ``room`` (the study's kind) leaves the profile as declared.
        """
        view = kind_view(kind)
        if kind == self.scene_kind:
            return self
        return replace(self, scene_kind=kind, c0=replace(self.c0, pitch_deg=view.c0_pitch_deg))

    @property
    def view(self) -> KindView:
        return kind_view(self.scene_kind)

    @property
    def c0_template(self) -> str:
        """The caption template id of c0 (and of every non-caption factor level)."""
        return self.view.c0_template

    def _base(self) -> Configuration:
        return Configuration(BASELINE, C0, self.c0, "255", self.c0_template, "p0")

    def configurations(self) -> list[Configuration]:
        """Baseline first, then every selected level of every factor (default-equivalent kept),
        then every cell of every block (factor ``block``, level :func:`cell_level`)."""
        base = self._base()
        out = [base]
        for name, levels in self.levels.items():
            for level in levels:
                out.append(_apply(base, name, level, self.view.yaw_pitch_deg))
        for block in self.blocks:
            for cell in block.cells():
                out.append(_apply_cell(base, cell))
        return out

    def configuration(self, factor: str, level: str) -> Configuration:
        """One factor level applied to this profile's c0 (any Table 11 level, selected or not).

        ``("baseline", "c0")`` gives the baseline itself. Raises :class:`ProtocolError`.
        """
        base = self._base()
        if factor == BASELINE:
            check_level(factor, level)
            return base
        return _apply(base, factor, level, self.view.yaw_pitch_deg)

    def shared_configurations(self) -> list[Configuration]:
        """The shared protocol family: baseline + the selected levels of the seven shared factors.

        Paraphrase levels are excluded (they are per-prompt strings, not shared protocols).
        For the ``paper`` profile this is the study's 387 = 1 + 386 configurations.
        """
        return [
            c for c in self.configurations() if c.factor == BASELINE or c.factor in shared_factor_names()
        ]

    def render_configs(self, view_policy: str = DEFAULT_VIEW_POLICY) -> list[RenderConfig]:
        """Distinct render configurations (background and caption levels reuse the c0 render);
        under a multi-view policy every view of every configuration (:func:`policy_views`)."""
        seen: dict[RenderConfig, None] = {}
        for cfg in self.configurations():
            for view in policy_views(cfg, view_policy, self.view.yaw_pitch_deg):
                seen.setdefault(view, None)
        return list(seen)

    def probe_renders(self, view_policy: str = DEFAULT_VIEW_POLICY) -> tuple[RenderConfig, ...]:
        """The renders of a probe-edited scene (the views of c0 under ``view_policy``)."""
        return policy_views(self._base(), view_policy, self.view.yaw_pitch_deg)


def _apply_cell(base: Configuration, cell: tuple[tuple[str, str], ...]) -> Configuration:
    """``base`` with every factor of ``cell`` set to its level; factor ``block``."""
    level = cell_level(cell)
    cfg = base
    for name, value in cell:
        cfg = _apply(cfg, name, value)
    return replace(cfg, factor=BLOCK, level=level)


def _apply(
    base: Configuration, factor: str, level: str, yaw_pitch_deg: float = YAW_PITCH_DEG
) -> Configuration:
    check_level(factor, level)
    if factor not in FACTORS:
        raise ProtocolError(f"factor {factor!r} has no configuration", where="factor")
    return replace(FACTORS.get(factor).apply(base, level, yaw_pitch_deg), factor=factor, level=level)


PROFILES_FILE = Path(__file__).resolve().parents[1] / "profiles.json"


PROFILE_KEYS = frozenset(
    {"description", "c0", "levels", "prompts", "generators", "probes", "evaluators", "bootstrap",
     "blocks", "search"}
)


def _parse_blocks(raw: object, levels: dict[str, tuple[str, ...]], where: str) -> tuple[Block, ...]:
    """``blocks``: a list of objects factor → list of levels (2 or 3 factors, ≥ 2 levels each,
    every level among the profile's OFAT levels of that factor, so the additive model can be
    predicted from the OFAT rows). Factors are put in record order; no block twice."""
    if not isinstance(raw, list):
        raise ProtocolError("'blocks' must be a list of {factor: [levels]} objects", where=f"{where}/blocks")
    out: list[Block] = []
    for i, entry in enumerate(raw):
        at = f"{where}/blocks/{i}"
        if not isinstance(entry, dict) or not 2 <= len(entry) <= 3:
            raise ProtocolError("a block maps 2 or 3 factors to lists of levels", where=at)
        unknown = [f for f in entry if f not in block_factors()]
        if unknown:
            raise ProtocolError(
                f"factor(s) {unknown} cannot be crossed", where=at,
                hint=f"block factors: {', '.join(block_factors())}",
            )
        names = tuple(sorted(entry, key=record_factors().index))
        sels: list[tuple[str, ...]] = []
        for name in names:
            sel = entry[name]
            if not isinstance(sel, list) or len(sel) < 2 or len({str(s) for s in sel}) != len(sel):
                raise ProtocolError(
                    f"levels of {name!r} must be a list of at least 2 distinct levels", where=f"{at}/{name}"
                )
            sel_t = tuple(str(s) for s in sel)
            missing = [lv for lv in sel_t if lv not in levels.get(name, ())]
            if missing:
                raise ProtocolError(
                    f"block level(s) {missing} of {name!r} are not OFAT levels of the profile",
                    where=f"{at}/{name}",
                    hint="select them under 'levels' too: the additive model is predicted from "
                    "the OFAT rows",
                )
            sels.append(sel_t)
        block = Block(names, tuple(sels))
        if any(b.id == block.id for b in out):
            raise ProtocolError(f"block {block.id} declared twice", where=at)
        out.append(block)
    return tuple(out)


@dataclass(frozen=True)
class SearchBlock:
    """A profile's ``search`` block (docs/search.md): the defaults of ``t3d-audit
    search --profile P``: ``objective`` (``shift``, ``ranking``, ``pair:A,B``), ``budget``
    (configurations), ``split`` (discovery, held-out prompt counts; ``None``: the profile's
    prompts and as many again), ``seed``, ``flip_points`` (Sobol points, 0: none)."""

    objective: str = "shift"
    budget: int = 40
    split: tuple[int, int] | None = None
    seed: int = 0
    flip_points: int = 0


SEARCH_KEYS = frozenset({"objective", "budget", "split", "seed", "flip_points"})


def _parse_search(raw: object, where: str) -> SearchBlock:
    """A profile's ``search`` object (every key optional; see :class:`SearchBlock`)."""
    if not isinstance(raw, dict):
        raise ProtocolError("'search' must be an object", where=where,
                            hint=f"keys: {', '.join(sorted(SEARCH_KEYS))}")  # fmt: skip
    unknown = sorted(set(raw) - SEARCH_KEYS)
    if unknown:
        raise ProtocolError(f"unknown search key(s) {unknown}", where=where,
                            hint=f"allowed: {sorted(SEARCH_KEYS)}")  # fmt: skip
    block = SearchBlock()
    from harness.protocol.search_limits import check_int, check_objective_form

    try:
        objective = check_objective_form(raw.get("objective", block.objective), where=f"{where}/objective")
    except AuditError as exc:
        raise ProtocolError(exc.what, where=exc.where) from None

    counts = {}
    for key, limit in (("budget", "budget"), ("seed", "seed"), ("flip_points", "flip_points")):
        try:
            counts[key] = check_int(limit, raw.get(key, getattr(block, key)), where=f"{where}/{key}")
        except AuditError as exc:
            raise ProtocolError(exc.what, where=exc.where) from None
    split = raw.get("split")
    if split is not None:
        ok = isinstance(split, list) and len(split) == 2
        try:
            if not ok:
                raise AuditError(f"'split' must be [discovery, held-out] prompt counts, got {split!r}")
            split = (check_int("discovery", split[0], where=f"{where}/split/0"),
                     check_int("held_out", split[1], where=f"{where}/split/1"))  # fmt: skip
        except AuditError as exc:
            raise ProtocolError(exc.what, where=exc.where or f"{where}/split",
                                hint="[discovery >= 1, held-out >= 2] prompt counts") from None  # fmt: skip
    return SearchBlock(objective, counts["budget"], split, counts["seed"], counts["flip_points"])


def _parse_profile(name: str, data: dict[str, object]) -> Profile:
    where = f"{PROFILES_FILE}#/{name}"
    if not isinstance(data, dict):
        raise ProtocolError("profile must be an object", where=where)
    unknown = sorted(set(data) - PROFILE_KEYS)
    if unknown:
        raise ProtocolError(
            f"unknown profile key(s) {unknown}",
            where=where,
            hint=f"allowed: {sorted(PROFILE_KEYS)}",
        )
    try:
        c0 = RenderConfig(**data.get("c0", {}))
        levels: dict[str, tuple[str, ...]] = {}
        for factor, sel in data["levels"].items():
            if factor not in factors():
                raise ProtocolError(f"unknown factor {factor!r}", where=f"{where}/levels")
            if sel == "all":
                levels[factor] = factors()[factor].levels
            elif isinstance(sel, list):
                levels[factor] = tuple(str(s) for s in sel)
            else:
                raise ProtocolError(
                    f'levels of {factor!r} must be "all" or a list, got {sel!r}',
                    where=f"{where}/levels/{factor}",
                )
            if len(set(levels[factor])) != len(levels[factor]):
                raise ProtocolError(
                    f"repeated level in {factor!r}", where=f"{where}/levels/{factor}"
                )
            for level in levels[factor]:
                try:
                    check_level(factor, level)
                except ProtocolError as exc:
                    raise ProtocolError(
                        exc.what, where=f"{where}/levels/{factor}", hint=exc.hint
                    ) from None
        check_level("resolution", str(c0.resolution_px))
        probes = tuple(data.get("probes", probe_names()))
        for probe in probes:
            check_level("probe", probe)
        prompts = data.get("prompts")
        if prompts is not None and (type(prompts) is not int or prompts < 1):
            raise ProtocolError(f"'prompts' must be a positive integer or null, got {prompts!r}")
        bootstrap = data.get("bootstrap", 2000)
        if type(bootstrap) is not int or bootstrap < 1:
            raise ProtocolError(f"'bootstrap' must be a positive integer, got {bootstrap!r}")
        return Profile(
            name=name,
            description=data.get("description", ""),
            c0=c0,
            levels=levels,
            prompts=prompts,
            generators=tuple(data["generators"]) if data.get("generators") else None,
            probes=probes,
            evaluators=tuple(data.get("evaluators", ())),
            bootstrap=bootstrap,
            blocks=_parse_blocks(data.get("blocks", []), levels, where),
            search=_parse_search(data["search"], f"{where}/search") if "search" in data else None,
        )
    except ProtocolError as exc:
        if exc.where and exc.where.startswith(str(PROFILES_FILE)):
            raise
        raise ProtocolError(exc.what, where=where, hint=exc.hint) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ProtocolError(f"malformed profile: {exc!r}", where=where) from exc


def load_profiles() -> dict[str, Profile]:
    """All profiles declared in ``harness/profiles.json``, parsed against the factors and
    probes registered now (a profile's ``"all"`` levels and default probes read them)."""
    return _load_profiles(FACTORS.version, _PROBES.version)


@lru_cache(maxsize=1)
def _load_profiles(_factors_version: int, _probes_version: int) -> dict[str, Profile]:
    try:
        raw = json.loads(PROFILES_FILE.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"cannot read profiles: {exc}", where=PROFILES_FILE) from exc
    if not isinstance(raw, dict):
        raise ProtocolError("profiles file must map profile name -> profile", where=PROFILES_FILE)
    return {name: _parse_profile(name, data) for name, data in raw.items()}


def get_profile(name: str) -> Profile:
    """The named profile, or a :class:`ProtocolError` listing the known ones."""
    profiles = load_profiles()
    if name not in profiles:
        raise ProtocolError(
            f"unknown profile {name!r}",
            where="--audit-profile",
            hint=f"use one of {', '.join(profiles)}",
        )
    return profiles[name]


def shared_family(profile: str | Profile = "paper") -> list[Configuration]:
    """Baseline + every selected shared-factor level of ``profile`` (paraphrase excluded).

    ``shared_family("paper")`` is the study's 387-configuration family used for ranking,
    envelopes and the simultaneous bootstrap.
    """
    chosen = get_profile(profile) if isinstance(profile, str) else profile
    return chosen.shared_configurations()
