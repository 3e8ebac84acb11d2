"""Scene-aware scoring interface shared by the companion and the planted evaluators.

Image–text evaluators see only ``(image, caption)``. The symbolic companion needs the frozen
scene and its prompt spec instead of an image, and the planted-fragility evaluators need to
know the measurement protocol their score belongs to. Both take a sequence of
:class:`ScoreItem` through ``score_items(items) -> list[ScoreResult]`` and declare
``needs_scene = True`` (and ``needs_render = False`` when they never look at pixels), so the
plugin can route them without rendering.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from harness.evaluators.base import ScoreResult
from harness.protocol.configurations import Configuration
from harness.scenes.model import Scene


@dataclass(frozen=True)
class Presentation:
    """How a protocol preset shows the scene (``harness.peers``): ``tiled`` when the views
    are tiled into one image, ``views`` how many views that image or score covers, ``passes``
    the render passes shown (``"shaded"``, ``"normal"``)."""

    tiled: bool = False
    views: int = 1
    passes: tuple[str, ...] = ("shaded",)


@dataclass(frozen=True)
class ScoreContext:
    """Where a score is measured: the scene's generator and the full configuration.

    ``configuration`` carries factor, level, render settings (pitch, lighting, ...), the
    background level, the caption template id and the paraphrase level; ``presentation`` is
    set only under a protocol preset (``None``: one image of one view, the study's protocol).
    """

    generator: str
    configuration: Configuration
    presentation: Presentation | None = None


@dataclass(frozen=True)
class ScoreItem:
    """One measurement request.

    ``scene``: the frozen (or probe-edited) scene; ``spec``: its prompt spec (anything
    :func:`harness.evaluators.reference.companion.as_companion_spec` reads); ``image``: the
    composited (H, W, 3) uint8 RGB image, or ``None`` for evaluators that do not render;
    ``caption``: the exact text scored; ``context``: the protocol, or ``None`` when unknown.
    """

    scene: Scene | None
    spec: object
    caption: str
    context: ScoreContext | None = None
    image: object = None


@runtime_checkable
class SceneScorer(Protocol):
    """An evaluator that scores :class:`ScoreItem` s (see the module docstring)."""

    id: str
    needs_scene: bool

    def score_items(self, items: Sequence[ScoreItem]) -> list[ScoreResult]: ...
