"""The factor registry: every protocol factor declared once, in record order.

A :class:`FactorSpec` says what a factor's levels are (study Table 11), its default (c0)
level, at which stage a level acts (``render``: Blender renders it; ``composite``: it is
composited onto the c0 render; ``caption``: it changes the caption only), whether it belongs
to the shared protocol family (ranking, envelopes, the simultaneous band) and may be crossed
in a factorial block, its labels, and how a level changes a configuration (``apply``) and is
read back from one (``setting``).

Everything else derives from this table: ``protocol.factors()``, the record/shared/render/
block factor tuples, profile parsing, the report's factor order and labels, the synthetic
generator's levels and the planted evaluator's settings. Adding a factor is one
:func:`register_factor` row here; when Blender must see a new knob, the row takes
``apply, setting = on_render(name, default)`` and the renderer reads
``cfg.extra(name, default)``: two files, and no ``RenderConfig`` field.

Nothing here imports the protocol at load time: ``apply`` works on any frozen dataclass
configuration with a ``render`` field through :func:`dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Literal, Protocol

from harness.vocab.registry_type import Registry, VocabularyError


class Configured(Protocol):
    """What a factor's ``apply`` and ``setting`` take: a
    :class:`harness.protocol.configurations.Configuration` (a frozen dataclass whose ``render``
    is its :class:`~harness.protocol.configurations.RenderConfig`). The protocol builds on the
    vocabulary, so the vocabulary names it by what it reads."""

    @property
    def render(self) -> object: ...

Stage = Literal["render", "composite", "caption"]

#: Names of the study's factors, one constant each (``RESOLUTION == "resolution"``).
RESOLUTION = "resolution"
FOCAL_LENGTH = "focal_length"
LIGHTING = "lighting"
BACKGROUND = "background"
PITCH = "pitch"
YAW = "yaw"
TEMPLATE = "template"
PARAPHRASE = "paraphrase"

GRAYS = ("0", "65", "118", "128", "186", "204", "255")
CHROMATIC_RGB = {"red": (255, 0, 0), "green": (0, 255, 0), "blue": (0, 0, 255)}
LIGHTING_MAPS = ("city", "courtyard", "forest", "interior", "night", "studio", "sunrise", "sunset")
PARAPHRASE_LEVELS = tuple(f"p{i}" for i in range(11))  # p0 is the original prompt

Apply = Callable[[Configured, str, float], Configured]
Setting = Callable[[Configured], str]

On = Literal["render", "configuration"]


@dataclass(frozen=True)
class Domain:
    """The searchable domain of a factor or setting, beside its grid levels.

    ``kind`` ``float``: a value in ``[low, high]`` (``unit``), printed and quantised to
    ``digits`` decimals (negative: to tens, hundreds, ...), so that nearby points coincide and
    share renders; ``choice``: one of ``choices`` (or those ``source`` gives, as a factor's
    ``source`` does). ``field``: the :class:`~harness.protocol.configurations.RenderConfig` field
    (``on="render"``) or :class:`~harness.protocol.configurations.Configuration` field
    (``on="configuration"``) a value sets.
    """

    kind: Literal["float", "choice"]
    field: str
    on: On = "render"
    low: float = 0.0
    high: float = 0.0
    digits: int = 0
    unit: str = ""
    choices: tuple[str, ...] = ()
    source: Callable[[], tuple[tuple[str, ...], str]] | None = None

    def __post_init__(self) -> None:
        if self.kind == "float" and not self.low < self.high:
            raise VocabularyError(f"domain of {self.field!r}: needs low < high")
        if self.kind == "choice" and not self.choices and self.source is None:
            raise VocabularyError(f"domain of {self.field!r}: needs choices or a source")
        if self.kind not in ("float", "choice") or self.on not in ("render", "configuration"):
            raise VocabularyError(f"domain of {self.field!r}: kind float|choice, on render|configuration")

    def options(self) -> tuple[str, ...]:
        """The choices of a ``choice`` domain (resolved from ``source`` when given)."""
        if self.source is not None:
            return tuple(str(c) for c in self.source()[0])
        return self.choices

    def quantise(self, value: float) -> float:
        """``value`` clipped to ``[low, high]`` and rounded to ``digits`` (a ``float`` domain)."""
        clipped = min(max(float(value), self.low), self.high)
        return float(round(clipped, self.digits)) + 0.0  # + 0.0: never print -0

    def text(self, value: float | str) -> str:
        """The printed form of a value (quantised for ``float``: ``52``, ``0.15``, ``3400``)."""
        if self.kind == "choice":
            return str(value)
        q = self.quantise(float(value))
        return f"{q:.{max(self.digits, 0)}f}" if self.digits > 0 else f"{q:.0f}"


@dataclass(frozen=True)
class FactorSpec:
    """One factor of the protocol.

    ``levels``/``default``: its Table 11 levels (strings, in table order) and c0 level; a
    factor whose levels come from data (the caption grammar's templates) gives ``source``
    instead, a callable returning ``(levels, default)``. ``stage``: ``render``,
    ``composite`` or ``caption``. ``shared``: part of the shared protocol family (baseline
    plus the shared factors' levels: ranking, envelopes, the band); ``crossable``: may be
    crossed in a factorial block (its levels change one setting each). ``label``: the
    report's name ("Focal length"), ``short``: the tables' column head ("Focal").
    ``apply(cfg, level, yaw_pitch_deg)``: ``cfg`` with this factor set to ``level``
    (``yaw_pitch_deg``: the scene kind's pitch of the yaw sweep); ``setting(cfg)``: ``cfg``'s
    level of this factor, written as a Table 11 level.
    """

    name: str
    stage: Stage
    apply: Apply
    setting: Setting
    levels: tuple[str, ...] = ()
    default: str = ""
    source: Callable[[], tuple[tuple[str, ...], str]] | None = None
    shared: bool = True
    crossable: bool = True
    label: str = ""
    short: str = ""
    domain: Domain | None = None  # its searchable domain (None: not searchable, paraphrase)

    def __post_init__(self) -> None:
        if self.stage not in ("render", "composite", "caption"):
            raise VocabularyError(f"factor {self.name!r}: stage must be render, composite or caption")
        if self.source is None and (not self.levels or self.default not in self.levels):
            raise VocabularyError(
                f"factor {self.name!r}: needs levels and a default among them, or a source"
            )

    def resolved(self) -> tuple[tuple[str, ...], str]:
        """``(levels, default)``: the declared ones, or those ``source`` gives."""
        return _resolve(self) if self.source is not None else (self.levels, self.default)

    @property
    def renders(self) -> bool:
        """Whether a level needs its own image (render or composite stage)."""
        return self.stage != "caption"


@cache
def _resolve(spec: FactorSpec) -> tuple[tuple[str, ...], str]:
    assert spec.source is not None
    levels, default = spec.source()
    return tuple(str(lv) for lv in levels), str(default)


def _render(field: str, convert: Callable[[str], object]) -> Apply:
    def apply(cfg: Configured, level: str, _yaw_pitch: float) -> Configured:
        return replace(cfg, render=replace(cfg.render, **{field: convert(level)}))

    return apply


def on_render(name: str, default: str) -> tuple[Apply, Setting]:
    """``(apply, setting)`` of a render factor that has no :class:`RenderConfig` field of its
    own: its level is kept in ``RenderConfig.extras`` (the default level is not kept, so the
    c0 render and its key are unchanged) and the renderer reads it with
    ``cfg.extra(name, default)``. A new Blender knob is then this factor's row and the
    renderer's code, and no other file."""

    def apply(cfg: Configured, level: str, _yaw_pitch: float) -> Configured:
        kept = {k: v for k, v in cfg.render.extras if k != name}
        if level != default:
            kept[name] = level
        return replace(cfg, render=replace(cfg.render, extras=tuple(sorted(kept.items()))))

    def setting(cfg: Configured) -> str:
        return cfg.render.extra(name, default)

    return apply, setting


def _field(field: str) -> Apply:
    def apply(cfg: Configured, level: str, _yaw_pitch: float) -> Configured:
        return replace(cfg, **{field: level})

    return apply


def _apply_yaw(cfg: Configured, level: str, yaw_pitch_deg: float) -> Configured:
    # yaw turns at the kind's yaw pitch: top-down, a turn is only an in-plane rotation
    return replace(cfg, render=replace(cfg.render, pitch_deg=yaw_pitch_deg, yaw_deg=float(level)))


def _templates() -> tuple[tuple[str, ...], str]:
    from harness.captions import DEFAULT_TEMPLATE_ID, template_ids

    return template_ids(), DEFAULT_TEMPLATE_ID


FACTORS: Registry[FactorSpec] = Registry("factor")


def register_factor(spec: FactorSpec, *, replace: bool = False) -> FactorSpec:
    """Add a factor after the registered ones (record order is registration order)."""
    return FACTORS.register(spec, replace=replace)


for _spec in (
    FactorSpec(
        RESOLUTION, "render", _render("resolution_px", int), lambda c: str(c.render.resolution_px),
        levels=("196", "224", "256", "336", "384", "448", "512", "768", "1024"), default="512",
        label="Resolution (px)", short="Res.",
        domain=Domain("choice", "resolution_px",
                      choices=("196", "224", "256", "336", "384", "448", "512", "768", "1024")),
    ),
    FactorSpec(
        FOCAL_LENGTH, "render", _render("focal_length_mm", float),
        lambda c: f"{c.render.focal_length_mm:g}",
        levels=("16", "24", "35", "50", "85", "100", "200"), default="50",
        label="Focal length (mm)", short="Focal",
        domain=Domain("float", "focal_length_mm", low=16.0, high=200.0, unit="mm"),
    ),
    FactorSpec(
        LIGHTING, "render", _render("lighting", str), lambda c: c.render.lighting,
        levels=LIGHTING_MAPS, default="city", label="Lighting", short="Light",
        domain=Domain("choice", "lighting", choices=LIGHTING_MAPS),
    ),
    FactorSpec(
        BACKGROUND, "composite", _field("background"), lambda c: c.background,
        levels=(*GRAYS, *CHROMATIC_RGB), default="255", label="Background", short="Bg.",
        domain=Domain("choice", "background", on="configuration", choices=(*GRAYS, *CHROMATIC_RGB)),
    ),
    FactorSpec(
        PITCH, "render", _render("pitch_deg", float), lambda c: f"{c.render.pitch_deg:g}",
        levels=("0", "15", "30", "45", "60", "75", "90"), default="0",
        label="Camera pitch (°)", short="Pitch",
        domain=Domain("float", "pitch_deg", low=0.0, high=90.0, unit="°"),
    ),
    FactorSpec(
        YAW, "render", _apply_yaw, lambda c: f"{c.render.yaw_deg:g}",
        levels=tuple(str(d) for d in range(0, 360, 45)), default="0",
        crossable=False,  # a yaw level also moves the pitch: it does not cross cleanly
        label="Camera yaw (°)", short="Yaw",
        # searched at any pitch: in the space, yaw sets only the yaw (the grid's moves pitch too)
        domain=Domain("float", "yaw_deg", low=0.0, high=359.0, unit="°"),
    ),
    FactorSpec(
        TEMPLATE, "caption", _field("template"), lambda c: c.template, source=_templates,
        label="Caption template", short="Tmpl.",
        domain=Domain("choice", "template", on="configuration", source=_templates),
    ),
    FactorSpec(
        PARAPHRASE, "caption", _field("paraphrase"), lambda c: c.paraphrase,
        levels=PARAPHRASE_LEVELS, default="p0",
        shared=False, crossable=False,  # per-prompt strings, not shared protocols
        label="Paraphrase", short="Para.",
    ),
):
    FACTORS.register(_spec)
del _spec


@dataclass(frozen=True)
class FactorNames:
    """The derived name tuples, in record order."""

    all: tuple[str, ...]
    shared: tuple[str, ...]
    rendered: tuple[str, ...]
    crossable: tuple[str, ...]


def _derived() -> FactorNames:
    return _derive(FACTORS.version)


@lru_cache(maxsize=1)
def _derive(_version: int) -> FactorNames:
    # keyed on the registry's version: a factor registered (or removed) later is seen at once
    specs = tuple(FACTORS)
    return FactorNames(
        all=tuple(s.name for s in specs),
        shared=tuple(s.name for s in specs if s.shared),
        rendered=tuple(s.name for s in specs if s.renders),
        crossable=tuple(s.name for s in specs if s.crossable),
    )


def factor_names() -> tuple[str, ...]:
    """Every factor, record order."""
    return _derived().all


def shared_factor_names() -> tuple[str, ...]:
    """The factors of the shared protocol family, record order."""
    return _derived().shared


def rendered_factor_names() -> tuple[str, ...]:
    """The factors whose levels change the image (render or composite stage)."""
    return _derived().rendered


def crossable_factor_names() -> tuple[str, ...]:
    """The factors a factorial block may cross."""
    return _derived().crossable


def factor(name: str, *, where: str | None = None) -> FactorSpec:
    """The spec of factor ``name`` (a :class:`VocabularyError` names the closest one)."""
    return FACTORS.get(name, where=where)


def short_label(name: str) -> str:
    """The tables' column head of a factor (its name when it has none)."""
    return FACTORS.get(name).short or name if name in FACTORS else name


# ---------------------------------------------------------------------------------------------
# Search settings: render settings with a searchable domain but no grid levels

#: Names of the search-only settings, one constant each.
LIGHT_ROTATION = "light_rotation"
LIGHT_STRENGTH = "light_strength"
COLOUR_TEMPERATURE = "colour_temperature"
FRAMING_MARGIN = "framing_margin"


@dataclass(frozen=True)
class SettingSpec:
    """A render setting the search may move that no profile lists as a grid factor (so no
    record, table or report of a grid audit names it). ``domain.field`` is its
    :class:`~harness.protocol.configurations.RenderConfig` field, whose default keeps every existing render
    key (``RenderConfig.to_dict`` writes it only off its default)."""

    name: str
    domain: Domain
    label: str = ""


SETTINGS: Registry[SettingSpec] = Registry("setting")


def register_setting(spec: SettingSpec, *, replace: bool = False) -> SettingSpec:
    """Add a search setting after the registered ones (the space's axis order)."""
    return SETTINGS.register(spec, replace=replace)


for _setting in (
    SettingSpec(FRAMING_MARGIN, Domain("float", "framing_margin", low=0.05, high=0.5, digits=2),
                "Framing margin"),
    SettingSpec(LIGHT_ROTATION, Domain("float", "light_rotation_deg", low=0.0, high=359.0, unit="°"),
                "Light rotation (°)"),
    SettingSpec(LIGHT_STRENGTH, Domain("float", "light_strength", low=0.25, high=4.0, digits=2),
                "Light strength (×)"),
    SettingSpec(COLOUR_TEMPERATURE,
                Domain("float", "colour_temperature_k", low=2000.0, high=10000.0, digits=-2, unit="K"),
                "Colour temperature (K)"),
):
    SETTINGS.register(_setting)
del _setting
