"""Presentation probes: the geometry held fixed, only the presentation changes.

Each probe derives two protocols from a preset, a reference and a changed presentation
(textured vs untextured, shaded vs normal map, separate views vs one tiled grid, mesh vs
points sampled on the same surfaces), and asks
whether the evaluator's verdict survives: the *presentation agreement* is the share of
(generator pair, prompt) comparisons whose order (sign of the score gap, ties included) is the
same under both presentations, with a prompt-bootstrap interval. 1 means the verdict does not
depend on the presentation; 0.5 is what unrelated orders give. A probe fails when the
agreement's point estimate falls below ``min_presentation_agreement``, declared in the metric
registry (:mod:`harness.vocab.metrics`, scope ``presentation``) and overridable under
``[tool.t3d-audit.thresholds]`` like any other, so an evaluator whose verdict depends on
presentation alone fails a check (``audit_tests/test_presentation.py`` under a preset audit).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from harness.core.errors import ProtocolError
from harness.core.numbers import finite_or_none
from harness.protocol.presets import Protocol
from harness.stats.intervals import interval
from harness.vocab.metrics import MIN_PRESENTATION_AGREEMENT as THRESHOLD_NAME
from harness.vocab.metrics import THRESHOLDS


def default_threshold() -> float:
    """The registry's ``min_presentation_agreement`` (0.8: at most one comparison in five may
    flip with the presentation)."""
    value = THRESHOLDS.get(THRESHOLD_NAME).default
    assert value is not None
    return float(value)


def _grid(p: Protocol) -> tuple[int, int]:
    if p.tiling is not None:
        return p.tiling
    n = len(p.shown_views)
    cols = math.ceil(math.sqrt(n))
    while n % cols:
        cols += 1
    return cols, n // cols


@dataclass(frozen=True)
class PresentationProbe:
    """``reference(p)`` and ``changed(p)``: the two presentations of preset ``p``."""

    name: str
    label: str
    reference: Callable[[Protocol], Protocol]
    changed: Callable[[Protocol], Protocol]

    def protocols(self, p: Protocol) -> tuple[Protocol, Protocol]:
        ref, chg = self.reference(p), self.changed(p)
        return (replace(ref, name=f"{p.name}~{self.name}=ref"), replace(chg, name=f"{p.name}~{self.name}=changed"))


PROBES: tuple[PresentationProbe, ...] = (
    PresentationProbe("untextured", "Textured vs untextured",
                      lambda p: replace(p, texture=True), lambda p: replace(p, texture=False)),
    PresentationProbe("normal_map", "Shaded vs normal map",
                      lambda p: replace(p, passes=("shaded",)), lambda p: replace(p, passes=("normal",))),
    PresentationProbe("tiled", "Separate views vs one tiled grid",
                      lambda p: replace(p, tiling=None), lambda p: replace(p, tiling=_grid(p))),
    PresentationProbe("points", "Mesh vs points on the same surface",
                      lambda p: replace(p, geometry="mesh"), lambda p: replace(p, geometry="points")),
)  # fmt: skip


def probe_names() -> tuple[str, ...]:
    return tuple(p.name for p in PROBES)


def parse_probes(text: str) -> tuple[PresentationProbe, ...]:
    """``"all"`` or comma-separated probe names."""
    if text == "all":
        return PROBES
    by_name = {p.name: p for p in PROBES}
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in by_name]
    if unknown or not names:
        raise ProtocolError(f"unknown presentation probe(s) {unknown or text!r}", where="--probes",
                            hint=f"use all or some of {', '.join(by_name)}")  # fmt: skip
    if len(set(names)) != len(names):  # each probe once: a repeat would be scored and counted twice
        raise ProtocolError(f"--probes {text[:200]!r} names a probe twice", where="--probes",
                            hint=f"use all or some of {', '.join(by_name)}, each once")  # fmt: skip
    return tuple(by_name[n] for n in names)


def order_agreement(a: np.ndarray, b: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray | float:
    """Share of (generator pair, prompt) comparisons with the same order under ``a`` and ``b``
    (both ``(G, P)``; NaN scenes skipped). With ``weights`` ``(B, P)`` the bootstrap draws (B,)."""
    same, valid = [], []
    for x, y in itertools.combinations(range(a.shape[0]), 2):
        da, db = a[x] - a[y], b[x] - b[y]
        ok = np.isfinite(da) & np.isfinite(db)
        same.append(np.where(ok, np.sign(da) == np.sign(db), False))
        valid.append(ok)
    s = np.sum(same, axis=0).astype(float)  # (P,) agreeing pairs per prompt
    v = np.sum(valid, axis=0).astype(float)
    if weights is None:
        return float(s.sum() / v.sum()) if v.sum() else math.nan
    w = np.asarray(weights, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w @ s) / (w @ v)


@dataclass(frozen=True)
class ProbeResult:
    probe: str
    label: str
    agreement: float
    lo: float
    hi: float
    threshold: float

    @property
    def passed(self) -> bool:
        return math.isfinite(self.agreement) and self.agreement >= self.threshold

    def to_dict(self) -> dict:
        return {"probe": self.probe, "label": self.label, "agreement": finite_or_none(self.agreement), "lo": finite_or_none(self.lo),
                "hi": finite_or_none(self.hi), "threshold": self.threshold, "passed": self.passed}  # fmt: skip


def probe_result(probe: PresentationProbe, ref: np.ndarray, changed: np.ndarray, weights: np.ndarray | None,
                 level: float = 0.95, threshold: float | None = None) -> ProbeResult:  # fmt: skip
    """The probe's agreement with its bootstrap interval (NaN without ``weights``) against
    ``threshold`` (default: the registry's ``min_presentation_agreement``)."""
    lo = hi = math.nan
    if weights is not None and len(weights):
        draws = order_agreement(ref, changed, weights)
        lo, hi = interval(np.asarray(draws), level=level, n_blocks=np.asarray(weights).shape[1]).as_tuple()
    return ProbeResult(probe.name, probe.label, float(order_agreement(ref, changed)), float(lo), float(hi),
                       default_threshold() if threshold is None else float(threshold))  # fmt: skip
