"""The continuous protocol space: one axis per searchable factor and setting, points, printed form.

An axis is a factor row's or a search setting's :class:`~harness.vocab.factors.Domain`
(:mod:`harness.vocab.factors`): camera pitch and yaw, focal length, framing margin, light
rotation, strength and colour temperature, environment map, background, resolution and caption
template. A *point* gives every axis a value in its printed (quantised) form, so a point is
reproducible from its text and nearby points coincide (and share renders in the render cache)::

    pitch=52,yaw=0,focal_length=50,framing_margin=0.15,light_rotation=0,light_strength=1.00,
    colour_temperature=3400,lighting=city,background=255,resolution=224,template=a.top-down.view.of.-

(one line, axes in :attr:`Space.names` order). A point becomes a
:class:`~harness.protocol.configurations.Configuration` of factor ``search`` whose level is that text: the
same render cache, the same card vocabulary as every grid configuration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from harness.core.errors import ProtocolError
from harness.core.hashing import sha256_json
from harness.protocol.configurations import SEARCH, Configuration
from harness.protocol.profiles import Profile
from harness.vocab.factors import FACTORS, RESOLUTION, SETTINGS, Domain

SEPARATOR = ","


@dataclass(frozen=True)
class Axis:
    """One dimension of the space: a factor's or setting's ``name``, its ``domain`` (choices
    resolved) and its report ``label``."""

    name: str
    domain: Domain
    label: str

    @property
    def choices(self) -> tuple[str, ...]:
        return self.domain.options() if self.domain.kind == "choice" else ()

    def value_of(self, cfg: Configuration) -> str:
        """``cfg``'s value on this axis, printed."""
        holder: object = cfg.render if self.domain.on == "render" else cfg
        value = getattr(holder, self.domain.field)
        return self.domain.text(value if self.domain.kind == "float" else str(value))

    def parse(self, text: str, where: str) -> str:
        """``text`` checked as a value of this axis, in printed form (ProtocolError if not)."""
        if self.domain.kind == "choice":
            if text not in self.choices:
                raise ProtocolError(
                    f"{self.name}={_shown(text)} is not one of its {len(self.choices)} choices",
                    where=where, hint=f"use one of {', '.join(self.choices[:12])}"
                    + (", ..." if len(self.choices) > 12 else ""),
                )  # fmt: skip
            return text
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        lo, hi = self.domain.low, self.domain.high
        if not lo <= value <= hi:
            raise ProtocolError(
                f"{self.name}={_shown(text)} is outside its domain [{lo:g}, {hi:g}] {self.domain.unit}".rstrip(),
                where=where, hint="give a number inside the domain",
            )  # fmt: skip
        return self.domain.text(value)

    def set(self, cfg: Configuration, text: str) -> Configuration:
        """``cfg`` with this axis at printed value ``text``."""
        field = self.domain.field
        if self.domain.on == "configuration":
            return replace(cfg, **{field: text})
        current = getattr(cfg.render, field)
        value: object = int(text) if isinstance(current, int) else float(text) if isinstance(current, float) else text
        return replace(cfg, render=replace(cfg.render, **{field: value}))

    def to_dict(self) -> dict[str, object]:
        d = self.domain
        out: dict[str, object] = {"name": self.name, "kind": d.kind}
        if d.kind == "float":
            out.update(low=d.low, high=d.high, digits=d.digits, unit=d.unit)
        else:
            out["choices"] = list(self.choices)
        return out


Point = tuple[str, ...]  # one printed value per axis, in Space.names order


def _shown(text: str, limit: int = 60) -> str:
    """``text`` quoted for an error message, cut to ``limit`` characters."""
    return repr(text) if len(text) <= limit else repr(text[: limit - 3] + "...")


@dataclass(frozen=True)
class Space:
    """The searchable axes and the configuration ``base`` (the profile's c0) they move.

    ``axes`` in order: the factors' domains (record order), then the search settings'.
    """

    axes: tuple[Axis, ...]
    base: Configuration

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    def axis(self, name: str) -> Axis:
        for a in self.axes:
            if a.name == name:
                return a
        raise ProtocolError(f"no axis {name!r} in the search space", where="space",
                            hint=f"axes: {', '.join(self.names)}")  # fmt: skip

    @property
    def c0(self) -> Point:
        """The base configuration as a point."""
        return tuple(a.value_of(self.base) for a in self.axes)

    def point(self, values: Mapping[str, float | str], where: str = "point") -> Point:
        """A point from axis → value (floats are quantised); axes not given keep c0's value.
        ``where`` names the point in errors (a file and JSON path)."""
        unknown = sorted(set(values) - set(self.names))
        if unknown:
            raise ProtocolError(f"unknown axis {unknown[0]!r}", where="space",
                                hint=f"axes: {', '.join(self.names)}")  # fmt: skip
        out = []
        for axis, default in zip(self.axes, self.c0, strict=True):
            v = values.get(axis.name, default)
            out.append(axis.domain.text(v) if axis.domain.kind == "float" and not isinstance(v, str)
                       else axis.parse(str(v), where=f"{where}/{axis.name}"))  # fmt: skip
        return tuple(out)

    def text(self, point: Point) -> str:
        """The printed form: ``name=value`` pairs joined by commas, in axis order."""
        return SEPARATOR.join(f"{n}={v}" for n, v in zip(self.names, point, strict=True))

    def parse(self, text: str, where: str = "point") -> Point:
        """The point printed as ``text`` (every axis once, any order; ProtocolError naming the
        first problem). Reproduces :meth:`text`'s output exactly."""
        hint = "write name=value pairs joined by commas, e.g. pitch=52,colour_temperature=3400"
        values: dict[str, str] = {}
        for part in str(text).split(SEPARATOR):
            name, sep, value = part.strip().partition("=")
            if not sep or not name or not value:
                raise ProtocolError(f"malformed search point {_shown(text)}: {_shown(part)}", where=where, hint=hint)
            if name in values:
                raise ProtocolError(f"axis {_shown(name)} given twice", where=where, hint=hint)
            values[name] = value
        unknown = sorted(set(values) - set(self.names))
        if unknown:
            raise ProtocolError(f"unknown axis {_shown(unknown[0])}", where=where,
                                hint=f"axes: {', '.join(self.names)}")  # fmt: skip
        return self.point(values, where)

    def configuration(self, point: Point) -> Configuration:
        """The configuration of ``point``: factor ``search``, level its printed form."""
        cfg = self.base
        for axis, value in zip(self.axes, point, strict=True):
            cfg = axis.set(cfg, value)
        return replace(cfg, factor=SEARCH, level=self.text(point))

    def from_unit(self, u: Sequence[float]) -> Point:
        """The point at ``u`` in the unit cube (one coordinate per axis): a float axis maps
        linearly onto ``[low, high]``, a choice axis onto equal shares of ``[0, 1)``."""
        out = []
        for axis, x in zip(self.axes, u, strict=True):
            x = min(max(float(x), 0.0), 1.0)
            d = axis.domain
            if d.kind == "float":
                out.append(d.text(d.low + x * (d.high - d.low)))
            else:
                choices = axis.choices
                out.append(choices[min(int(x * len(choices)), len(choices) - 1)])
        return tuple(out)

    def to_dict(self) -> dict[str, object]:
        """The space as data (trial log header, card): every axis with its domain, and c0."""
        return {"axes": [a.to_dict() for a in self.axes], "c0": self.text(self.c0)}

    @property
    def key(self) -> str:
        return sha256_json(self.to_dict())


def space_for(profile: Profile, names: Sequence[str] | None = None) -> Space:
    """The search space around ``profile``'s c0: every factor with a domain, then every search
    setting; ``names`` keeps only those axes (in space order). Resolution is a cost axis: its
    choices are the profile's resolution levels (a smoke search never renders 1024 px)."""
    axes: list[Axis] = []
    for spec in FACTORS:
        if spec.domain is None:
            continue
        domain = spec.domain
        if spec.name == RESOLUTION and profile.levels.get(RESOLUTION):
            domain = replace(domain, choices=tuple(profile.levels[RESOLUTION]))
        axes.append(Axis(spec.name, domain, spec.label or spec.name))
    axes += [Axis(s.name, s.domain, s.label or s.name) for s in SETTINGS]
    if names is not None:
        known = {a.name for a in axes}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ProtocolError(f"unknown search axis {_shown(unknown[0])}", where="--axes",
                                hint=f"axes: {', '.join(a.name for a in axes)}")  # fmt: skip
        axes = [a for a in axes if a.name in set(names)]
    base = profile.configuration("baseline", "c0")
    return Space(tuple(axes), base)
