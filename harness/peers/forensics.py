"""Reproduction forensics: which protocols are consistent with a reported number?

Candidates are the presets and, around each, its one-parameter neighbours (:func:`neighbours`:
every declared parameter moved over a small grid, one at a time). Each candidate scores the
frozen scenes (``measure.py``); its summary number is the mean over prompts of the scene
scores (of one generator, or of every generator's scenes), with a prompt-bootstrap percentile
interval. A reported score ``X`` with margin ``M`` is consistent with a candidate when the
interval meets ``[X − M, X + M]``; a reported ordering ``A > B > C`` when it holds in at least
:data:`ORDERING_SUPPORT` of the bootstrap draws (the data do not reject it). The answer is the
set of consistent candidates, each with its interval, plus the parameters whose move changes
a preset's number by more than ``M``, marked disclosed or undisclosed by the preset's source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation

import numpy as np

from harness.core.errors import ProtocolError
from harness.core.numbers import finite_or_none
from harness.protocol.cameras import View
from harness.protocol.presets import Protocol
from harness.stats.bootstrap import prompt_mean_draws, prompt_weights
from harness.stats.intervals import interval

ORDERING_SUPPORT = 0.05  # an ordering is consistent unless fewer draws than this share it
ELEVATION_STEPS_DEG = (-15.0, 15.0)
AZIMUTH_STEPS_DEG = (45.0,)
FOV_GRID_DEG = (30.0, 60.0)
BACKGROUNDS = ("255", "0", "128")
AMBIENTS = (None, 0.8, 1.0)


@dataclass(frozen=True)
class Candidate:
    """A protocol to test: ``origin`` preset, ``parameter`` moved to ``value`` ("" for the
    preset itself)."""

    origin: str
    parameter: str
    value: str
    protocol: Protocol

    @property
    def label(self) -> str:
        return self.origin if not self.parameter else f"{self.origin}[{self.parameter}={self.value}]"


def _views(p: Protocol, fn) -> tuple[View, ...]:
    return tuple(fn(v) for v in p.views)


def neighbours(p: Protocol) -> list[Candidate]:
    """The preset itself, then one candidate per (parameter, grid value) differing from it."""
    out = [Candidate(p.name, "", "", p)]

    def add(parameter: str, value: object, **changes: object) -> None:
        try:
            q = replace(p, name=f"{p.name}[{parameter}={value}]", **changes)
        except ProtocolError:
            return  # e.g. a grid the views do not fill
        if q.to_dict() | {"name": p.name} != p.to_dict():
            out.append(Candidate(p.name, parameter, str(value), q))

    for step in ELEVATION_STEPS_DEG:
        add("elevation", f"{step:+g}", views=_views(p, lambda v, s=step: replace(
            v, elevation_deg=max(-90.0, min(90.0, v.elevation_deg + s)))))  # fmt: skip
    for step in AZIMUTH_STEPS_DEG:
        add("azimuth", f"{step:+g}", views=_views(p, lambda v, s=step: replace(v, azimuth_deg=(v.azimuth_deg + s) % 360)))
    for fov in FOV_GRID_DEG:
        add("fov", f"{fov:g}", views=_views(p, lambda v, f=fov: replace(v, fov_deg=f)))
    for res in (p.resolution_px // 2, p.resolution_px * 2):
        if 16 <= res <= 2048:
            add("resolution", res, resolution_px=res)
    for amb in AMBIENTS:
        add("ambient", "map" if amb is None else f"{amb:g}", ambient=amb)
    for bg in BACKGROUNDS:
        add("background", bg, background=bg)
    add("texture", not p.texture, texture=not p.texture)
    add("geometry", "points" if p.geometry == "mesh" else "mesh", geometry="points" if p.geometry == "mesh" else "mesh")
    for passes in (("shaded",), ("shaded", "normal")):
        add("passes", "+".join(passes), passes=passes)
    if p.camera_distance is not None:
        add("framing", "fill", camera_distance=None)
    if p.tiling is not None:
        add("tiling", "none", tiling=None)
    else:
        n = len(p.shown_views)
        cols = math.ceil(math.sqrt(n))
        if n <= 16 and n % cols == 0:
            add("tiling", f"{cols}x{n // cols}", tiling=(cols, n // cols))
    if p.aggregation != "icosphere_max":
        for how in ("mean", "max", "trimmed_mean"):
            add("aggregation", how, aggregation=how)
    return out


@dataclass(frozen=True)
class Outcome:
    """One candidate's number: point, interval, and whether it is consistent."""

    candidate: Candidate
    value: float
    lo: float
    hi: float
    consistent: bool
    support: float | None = None  # the share of draws holding a reported ordering

    def to_dict(self) -> dict:
        return {"label": self.candidate.label, "preset": self.candidate.origin,
                "parameter": self.candidate.parameter or None, "value": self.candidate.value or None,
                "score": finite_or_none(self.value), "lo": finite_or_none(self.lo), "hi": finite_or_none(self.hi),
                "consistent": self.consistent, "support": self.support}  # fmt: skip



def reported_margin(text: str) -> float:
    """Half a unit in the last digit of a reported number (``"27.23"`` → 0.005): the rounding
    the number was published with, the default margin."""
    try:
        number = Decimal(text.strip())
        exponent = number.as_tuple().exponent  # "n"/"F" for NaN and infinity
        margin = 0.5 * 10.0 ** int(exponent) if number.is_finite() else math.nan
        finite = math.isfinite(float(number)) and math.isfinite(margin)
    except (InvalidOperation, OverflowError, ValueError):  # "abc"; 10.0 ** 400 overflows
        finite = False
    if not finite:
        raise ProtocolError(f"--score {text[:40]!r} is not a number, or not a finite one", where="--score",
                            hint="give the score as printed, e.g. 27.23")  # fmt: skip
    return margin


def parse_ordering(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(">"))
    if len(names) < 2 or any(not n for n in names) or len(set(names)) != len(names):
        raise ProtocolError(f"--ordering {text!r} is not A>B[>C...] of distinct generators", where="--ordering")
    return names


def score_outcome(candidate: Candidate, scores: np.ndarray, generators: tuple[str, ...], weights: np.ndarray,
                  *, score: float | None, margin: float, generator: str | None, level: float) -> Outcome:  # fmt: skip
    """``scores`` (G, P) of the candidate (NaN: failed) against a reported score."""
    rows = scores if generator is None else scores[[generators.index(generator)]]
    per_prompt = np.nanmean(np.where(np.isfinite(rows), rows, np.nan), axis=0) if np.isfinite(rows).any() \
        else np.full(rows.shape[1], np.nan)  # fmt: skip
    value = float(np.nanmean(per_prompt)) if np.isfinite(per_prompt).any() else math.nan
    draws = prompt_mean_draws(per_prompt[:, None], weights)[:, 0]
    lo, hi = interval(draws, level=level, n_blocks=weights.shape[1]).as_tuple()
    ok = score is not None and math.isfinite(lo) and lo - margin <= score <= hi + margin
    return Outcome(candidate, value, lo, hi, bool(ok))


def ordering_outcome(candidate: Candidate, scores: np.ndarray, generators: tuple[str, ...], weights: np.ndarray,
                     ordering: tuple[str, ...], level: float) -> Outcome:  # fmt: skip
    idx = [generators.index(g) for g in ordering]
    draws = prompt_mean_draws(scores[idx].T, weights)  # (B, len(ordering))
    holds = np.all(np.diff(draws, axis=1) < 0, axis=1)
    means = np.nanmean(scores[idx], axis=1)
    gaps = -np.diff(means)
    value = float(gaps.min())  # the smallest adjacent gap: > 0 when the point order holds
    lo_hi = interval((-np.diff(draws, axis=1)).min(axis=1), level=level, n_blocks=weights.shape[1]).as_tuple()
    support = float(holds.mean())
    return Outcome(candidate, value, float(lo_hi[0]), float(lo_hi[1]), support >= ORDERING_SUPPORT, support)


@dataclass(frozen=True)
class Sensitivity:
    preset: str
    parameter: str
    shift: float  # the largest |candidate − preset| over the parameter's grid
    disclosed: bool


#: forensics parameter → the ``Protocol.disclosed`` name it checks
DISCLOSURE = {"elevation": "elevation", "azimuth": "azimuth", "fov": "fov", "resolution": "resolution",
              "ambient": "ambient", "background": "background", "texture": "texture", "passes": "passes",
              "geometry": "geometry",
              "tiling": "tiling", "aggregation": "aggregation"}  # fmt: skip


def sensitivities(outcomes: list[Outcome], margin: float) -> list[Sensitivity]:
    """Per preset, the parameters whose grid moves its number by more than ``margin``."""
    base = {o.candidate.origin: o for o in outcomes if not o.candidate.parameter}
    shifts: dict[tuple[str, str], float] = {}
    for o in outcomes:
        c = o.candidate
        if c.parameter and c.origin in base and math.isfinite(o.value) and math.isfinite(base[c.origin].value):
            key = (c.origin, c.parameter)
            shifts[key] = max(shifts.get(key, 0.0), abs(o.value - base[c.origin].value))
    out = []
    for (origin, parameter), shift in shifts.items():
        if shift > margin:
            disclosed = DISCLOSURE[parameter] in base[origin].candidate.protocol.disclosed
            out.append(Sensitivity(origin, parameter, shift, disclosed))
    return sorted(out, key=lambda s: (s.preset, -s.shift, s.parameter))


def weights_for(n_prompts: int, n_draws: int, seed: int) -> np.ndarray:
    return prompt_weights(n_prompts, n_draws, seed)
