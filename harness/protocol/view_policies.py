"""View policies: which renders one score of a configuration looks at.

``single`` is the study's protocol (the configuration's one camera); the multi-view policies
look at four canonical azimuths; other modules register families of their own
(``preset:NAME``, :mod:`harness.protocol.presets`).
"""

from __future__ import annotations

from dataclasses import replace

from harness.core.errors import ProtocolError
from harness.protocol.configurations import BLOCK, Configuration, RenderConfig
from harness.protocol.levels import parse_cell
from harness.vocab.factors import PITCH, YAW

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
