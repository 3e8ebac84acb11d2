"""A simulated rater panel for the bundled smoke scenes, written as a generic ratings table.

The raters are the symbolic companion's c0 scores plus independent noise at a declared
single-rating reliability (:func:`harness.human.rater_reliability.simulate_panel`); no render,
no model. The file's ``source`` column says ``simulated`` on every row.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

RELIABILITY = 0.8
RATERS = 4


def companion_c0(profile: str = "smoke") -> pd.DataFrame:
    """generator, prompt_id, score: the companion's c0 scores on the profile's bundled scenes."""
    from harness.evaluators.reference.scene_measure import measure_scenes
    from harness.evaluators.reference.specs import companion_spec
    from harness.measure.plan import build_plan
    from harness.protocol.profiles import get_profile
    from harness.scenes.scene_source import load_scene_set

    prof = get_profile(profile)
    scenes = load_scene_set(None).select(prompts=prof.prompts, generators=prof.generators)
    records = measure_scenes(companion_spec(), build_plan(scenes, prof))
    c0 = records[(records["factor"] == "baseline") & (records["level"] == "c0")]
    return c0[["generator", "prompt_id", "score"]].sort_values(["generator", "prompt_id"]).reset_index(drop=True)


def write_panel(
    path: Path, reliability: float = RELIABILITY, raters: int = RATERS, seed: int = 7, profile: str = "smoke"
) -> str:
    """Write the simulated ratings table of ``profile``'s scenes to ``path``; returns the scale
    to declare (LOW-HIGH)."""
    from harness.human.rater_reliability import simulate_panel

    truth = companion_c0(profile)
    panel = simulate_panel(truth["score"].to_numpy(dtype=np.float64), raters, reliability, seed=seed)
    rows = pd.DataFrame({
        "generator": np.repeat(truth["generator"].to_numpy(), raters),
        "prompt_id": np.repeat(truth["prompt_id"].to_numpy(), raters),
        "rater": np.tile([f"sim{k}" for k in range(raters)], len(truth)),
        "rating": [repr(float(v)) for v in panel.ravel()],
        "source": "simulated",
    })
    rows.to_csv(path, index=False)
    return f"{math.floor(float(panel.min()))}-{math.ceil(float(panel.max()))}"
