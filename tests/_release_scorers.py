"""Two releases of one scene-reading scorer, loaded as a pytest plugin (``-p``) by the release
known-answer test: v2 separates the generators twelve times further apart at c0 and collapses
every score under 6 of the 8 lighting maps; v1 barely separates them and moves a little under
lighting. Scores read the scene and the protocol only (nothing is rendered)."""

from __future__ import annotations

import hashlib

from harness.evaluators import Scorer, registry

#: Relative brightness of the studio lighting maps (as the planted lighting evaluator's table).
BRIGHTNESS = {"city": 0.0, "courtyard": 0.5, "forest": -0.5, "interior": -0.25, "night": -1.0,
              "studio": 1.0, "sunrise": 0.25, "sunset": -0.75}
GENERATOR_RANK = {"faithful": 2.5, "gridded": 1.5, "sparse": 0.5, "cluttered": -0.5,
                  "jittered": -1.5, "confused": -2.5}


def _scene_noise(scene_id: str) -> float:
    """A fixed value in [−0.05, 0.05] per scene: its spread within a generator."""
    return int(hashlib.sha256(scene_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF * 0.1 - 0.05


def _score(item: object, *, spread: float, base: float, light: float, collapse: float) -> float:
    ctx = item.context
    c0 = base + spread * GENERATOR_RANK.get(ctx.generator, 0.0) + _scene_noise(item.scene.id)
    brightness = BRIGHTNESS.get(ctx.configuration.render.lighting, 0.0)
    dark = ctx.configuration.render.lighting not in ("city", "studio")  # city: the c0 map
    return c0 * (collapse if dark and collapse != 1.0 else 1.0) + light * brightness


def _release(name: str, version: str, **effect: float) -> type[Scorer]:
    """A release of the scorer: :func:`_score` with its ``effect`` (spread, base, light, collapse)."""

    def score_batch(self, images, texts):
        return [_score(i, **effect) for i in images]

    return type(f"Light{version}", (Scorer,), {
        "name": name, "version": version, "input": "scene", "needs_text": False,
        "score_range": (-10.0, 10.0), "score_batch": score_batch, "__module__": __name__,
    })


LightV1 = _release("light-v1", "1", spread=0.005, base=0.5, light=0.05, collapse=1.0)
LightV2 = _release("light-v2", "2", spread=0.06, base=0.3, light=0.0, collapse=0.15)

registry.register(LightV1)
registry.register(LightV2)
