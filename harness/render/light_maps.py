"""Lighting scalars of the world HDRIs (study Table 8): log-average EV and CCT per map.

Two conventions, both computed from the same linear Rec.709 pixels:

``study`` (the default; reproduces the study's Table 8 to the printed digit for Blender's
bundled maps)
    Every pixel counts equally (plain pixel mean over the equirectangular map).
    Luminance ``L = 0.2126 R + 0.7152 G + 0.0722 B`` (ITU-R BT.709 on linear values),
    log-average ``L_avg = exp(mean(log(δ + L)))`` with ``δ = 1e-6`` (Reinhard et al. 2002,
    "Photographic tone reproduction", Eq. 1; δ only guards log 0), ``EV = log2(L_avg)``
    (stops relative to unit luminance).
``solid_angle``
    Pixels weighted by the solid angle they cover on the sphere (an equirectangular row at
    latitude φ covers ∝ cos φ; the exact band integral ``sin φ_top − sin φ_bottom`` is used),
    so the stretched poles do not count extra. ``EV = EV100 = log2(L_avg · S / K)`` with
    ISO ``S = 100`` and reflected-light meter constant ``K = 12.5`` (ISO 2720:1974), i.e.
    ``log2(L_avg / 0.125)``, treating linear values as cd/m².

CCT in both: the (weighted) sum of linear RGB over the map — the chromaticity of its total
radiated energy — goes to CIE XYZ by the sRGB matrix of IEC 61966-2-1:1999 (Rec.709
primaries, D65 white), then to xy, then McCamy's cubic (McCamy 1992, Color Res. Appl.
17(2):142–144): ``n = (x − 0.3320) / (0.1858 − y)``,
``CCT = 449 n³ + 3525 n² + 6823.3 n + 5520.33`` K (valid for roughly 2000–12500 K).

The math (:func:`map_scalars` and its parts) is pure numpy on arrays. :func:`read_exr_rgb`
reads a map through Blender (bpy imported lazily, only there) and
:func:`bundled_lighting_scalars` covers the eight Table 11 maps named in
:data:`harness.render.settings.LIGHTING_FILES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Literal

import numpy as np

from harness.core.errors import RenderError
from harness.core.hashing import sha256_file

SCHEMA = "t3d-lighting-scalars/1"
LUMA_709 = np.array([0.2126, 0.7152, 0.0722])
# IEC 61966-2-1:1999 linear sRGB (Rec.709 primaries, D65) → CIE XYZ, rows X, Y, Z
SRGB_TO_XYZ = np.array(
    [
        [0.4124, 0.3576, 0.1805],
        [0.2126, 0.7152, 0.0722],
        [0.0193, 0.1192, 0.9505],
    ]
)
DELTA = 1e-6
EV100_REFERENCE = 100.0 / 12.5  # S / K: EV100 = log2(L · S / K) = log2(L / 0.125)

Weighting = Literal["pixel", "solid_angle"]


@dataclass(frozen=True)
class Convention:
    """How a map is reduced to (EV, CCT): pixel weighting and EV reference gain.

    ``ev_gain``: EV = log2(L_avg · ev_gain) — 1 for stops of unit luminance, 8 for EV100.
    """

    name: str
    weighting: Weighting
    ev_gain: float
    delta: float = DELTA

    def describe(self) -> dict[str, object]:
        """JSON-ready description (stored beside the numbers in the fixture)."""
        ev = "log2(L_avg)" if self.ev_gain == 1 else f"log2(L_avg * {self.ev_gain:g})"
        return {
            "weighting": self.weighting,
            "luminance": "0.2126 R + 0.7152 G + 0.0722 B (linear Rec.709)",
            "log_average": f"exp(weighted mean of log({self.delta:g} + L))",
            "ev": ev,
            "cct": "weighted RGB sum -> XYZ (IEC 61966-2-1 sRGB matrix) -> xy -> McCamy 1992",
        }


STUDY = Convention("study", "pixel", 1.0)
SOLID_ANGLE_EV100 = Convention("solid_angle", "solid_angle", EV100_REFERENCE)
CONVENTIONS: dict[str, Convention] = {c.name: c for c in (STUDY, SOLID_ANGLE_EV100)}


@dataclass(frozen=True)
class LightingScalars:
    """One map's scalars: ``ev`` in stops (convention-dependent reference), ``cct`` in kelvin,
    ``xy`` the CIE 1931 chromaticity of the map's total energy."""

    ev: float
    cct: float
    xy: tuple[float, float]


class LightingMapError(RenderError):
    """A lighting map cannot be read or reduced to scalars (missing file, black map, ...)."""


# -- pure math --------------------------------------------------------------------------------


def solid_angle_weights(height: int, width: int) -> np.ndarray:
    """Solid angle (steradians) of each pixel of an equirectangular map: (H, W), sums to 4π.

    Row ``i`` spans latitudes ``φ_top = π/2 − iπ/H`` down to ``φ_top − π/H``; its band covers
    ``2π (sin φ_top − sin φ_bottom)`` sr, shared equally by its ``W`` pixels. Symmetric about
    the equator, so the row order (top-down or bottom-up) does not matter.
    """
    if height < 1 or width < 1:
        raise ValueError(f"map must have at least one pixel, got {height}x{width}")
    edges = np.pi / 2 - np.arange(height + 1) * (np.pi / height)
    band = np.sin(edges[:-1]) - np.sin(edges[1:])  # (H,)
    return np.repeat((2 * np.pi / width) * band[:, None], width, axis=1)


def pixel_weights(rgb: np.ndarray, weighting: Weighting) -> np.ndarray:
    """Normalised weights (H, W) summing to 1 for an (H, W, 3) map."""
    h, w = rgb.shape[:2]
    if weighting == "pixel":
        return np.full((h, w), 1.0 / (h * w))
    if weighting == "solid_angle":
        sa = solid_angle_weights(h, w)
        return sa / sa.sum()
    raise ValueError(f"unknown weighting {weighting!r}; use 'pixel' or 'solid_angle'")


def luminance(rgb: np.ndarray) -> np.ndarray:
    """Rec.709 relative luminance of linear RGB: (..., 3) → (...)."""
    return np.asarray(rgb, dtype=np.float64) @ LUMA_709


def log_average(lum: np.ndarray, weights: np.ndarray, delta: float = DELTA) -> float:
    """``exp(Σ w log(δ + max(L, 0)) / Σ w)``; ``lum`` and ``weights`` have the same shape.

    Negative luminance (possible in float HDRs) counts as 0 rather than failing the log.
    """
    lum = np.maximum(np.asarray(lum, dtype=np.float64), 0.0)
    w = np.asarray(weights, dtype=np.float64)
    return float(np.exp(np.sum(w * np.log(delta + lum)) / np.sum(w)))


def exposure_value(l_avg: float, gain: float = 1.0) -> float:
    """EV = log2(L_avg · gain) in stops (gain 8 = S/K gives EV100)."""
    return float(np.log2(l_avg * gain))


def xy_chromaticity(rgb_sum: np.ndarray) -> tuple[float, float]:
    """CIE 1931 xy of a linear Rec.709 RGB triple (3,) via the IEC 61966-2-1 matrix."""
    xyz = SRGB_TO_XYZ @ np.asarray(rgb_sum, dtype=np.float64)
    total = float(xyz.sum())
    if not np.isfinite(total) or total <= 0:
        raise ValueError(f"no positive radiant energy (XYZ sum {total!r})")
    return float(xyz[0] / total), float(xyz[1] / total)


def mccamy_cct(x: float, y: float) -> float:
    """Correlated colour temperature in kelvin from xy by McCamy's (1992) cubic."""
    n = (x - 0.3320) / (0.1858 - y)
    return float(449.0 * n**3 + 3525.0 * n**2 + 6823.3 * n + 5520.33)


def map_scalars(rgb: np.ndarray, convention: Convention = STUDY) -> LightingScalars:
    """EV and CCT of one equirectangular map ``rgb``: (H, W, 3) linear Rec.709, any float.

    Raises ``ValueError`` for a wrong shape, non-finite pixels or a map without energy.
    """
    rgb = np.asarray(rgb, dtype=np.float64)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.shape[0] < 1 or rgb.shape[1] < 1:
        raise ValueError(f"expected an (H, W, 3) map, got shape {rgb.shape}")
    if not np.isfinite(rgb).all():
        raise ValueError("map has non-finite pixels")
    w = pixel_weights(rgb, convention.weighting)
    ev = exposure_value(log_average(luminance(rgb), w, convention.delta), convention.ev_gain)
    x, y = xy_chromaticity(np.tensordot(w, rgb, axes=([0, 1], [0, 1])))
    return LightingScalars(ev=ev, cct=mccamy_cct(x, y), xy=(x, y))


# -- Blender I/O ------------------------------------------------------------------------------


def _import_bpy() -> ModuleType:
    """bpy, or a :class:`LightingMapError` saying how to get it (one line at the CLI)."""
    try:
        import bpy
    except ImportError as exc:
        raise LightingMapError(f"bpy is not importable: {exc}", where="lighting",
                               hint="install the render extra (the bpy wheel)") from exc
    return bpy


def studio_lights_dir() -> Path:
    """``<Blender datafiles>/studiolights/world`` of the installed bpy (imports bpy)."""
    bpy = _import_bpy()

    return Path(bpy.utils.system_resource("DATAFILES")) / "studiolights" / "world"


def read_exr_rgb(path: str | Path) -> np.ndarray:
    """Linear RGB of an image file through Blender: (H, W, 3) float32, row 0 = top (zenith).

    Blender hands float images over in its scene-linear space (Linear Rec.709 by default);
    alpha is dropped. The image datablock is removed again after reading.
    """
    bpy = _import_bpy()

    path = Path(path)
    if not path.is_file():
        raise LightingMapError("lighting map not found", where=path,
                               hint="check the Blender installation (bpy wheel datafiles)")
    try:
        image = bpy.data.images.load(str(path), check_existing=False)
    except RuntimeError as exc:
        raise LightingMapError(f"Blender cannot load the map: {exc}", where=path) from exc
    try:
        width, height = (int(v) for v in image.size)
        channels = int(image.channels)
        if width < 1 or height < 1 or channels < 3:
            raise LightingMapError(f"unusable image {width}x{height}x{channels}", where=path)
        flat = np.empty(width * height * channels, dtype=np.float32)
        image.pixels.foreach_get(flat)
    finally:
        bpy.data.images.remove(image)
    # Blender's pixel rows run bottom-to-top; flip so row 0 is the top of the map.
    return flat.reshape(height, width, channels)[::-1, :, :3].copy()


def bundled_lighting_scalars(
    files: Mapping[str, str] | None = None, directory: str | Path | None = None
) -> dict[str, object]:
    """The fixture document (``fixtures/lighting_scalars.json``) for Blender's bundled maps.

    ``files``: level → file name (default :data:`harness.render.settings.LIGHTING_FILES`);
    ``directory``: where they are (default: the installed bpy's studio lights). Each map
    gets ``ev``/``cct`` under the default (study) convention plus every convention's values
    under ``conventions``.
    """
    from harness.render import settings

    files = dict(settings.LIGHTING_FILES if files is None else files)
    root = Path(directory) if directory is not None else studio_lights_dir()
    maps: dict[str, object] = {}
    for level, name in files.items():
        path = root / name
        rgb = read_exr_rgb(path)
        entry: dict[str, object] = {"file": name, "sha256": sha256_file(path),
                                 "size": [int(rgb.shape[1]), int(rgb.shape[0])]}
        per: dict[str, object] = {}
        for conv in CONVENTIONS.values():
            try:
                s = map_scalars(rgb, conv)
            except ValueError as exc:
                raise LightingMapError(f"cannot compute lighting scalars: {exc}",
                                       where=path) from exc
            per[conv.name] = {"ev": round(s.ev, 4), "cct": round(s.cct, 1),
                              "xy": [round(s.xy[0], 6), round(s.xy[1], 6)]}
        entry.update(ev=per[STUDY.name]["ev"], cct=per[STUDY.name]["cct"], conventions=per)
        maps[level] = entry
    return {
        "schema": SCHEMA,
        "blender_version": settings.blender_version(),
        "source": "bpy datafiles studiolights/world",
        "default_convention": STUDY.name,
        "conventions": {c.name: c.describe() for c in CONVENTIONS.values()},
        "maps": maps,
    }


def scalars_from_document(
    doc: Mapping[str, object], convention: str | None = None
) -> dict[str, tuple[float, float]]:
    """``{level: (EV, CCT K)}`` from a fixture document (``convention`` None = its default).

    Raises ``ValueError``/``KeyError``/``TypeError`` on a malformed document; callers turn
    them into a typed error naming the file.
    """
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    name = convention or doc["default_convention"]
    out: dict[str, tuple[float, float]] = {}
    for level, entry in doc["maps"].items():
        vals = entry["conventions"][name] if convention else entry
        ev, cct = float(vals["ev"]), float(vals["cct"])
        if not (np.isfinite(ev) and np.isfinite(cct)):
            raise ValueError(f"map {level!r}: non-finite EV/CCT")
        out[str(level)] = (ev, cct)
    return out
