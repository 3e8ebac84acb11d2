"""Synthetic raw score records with planted effects, for tests, benchmarks and demos.

The table passes :func:`harness.records.validate_records`: real Table 11 levels, real
template ids of the caption grammar, ``p0``..``p10`` paraphrases, the four probes, 64-hex
scene hashes. Scores follow an additive model in each evaluator's own unit::

    score = offset_e + quality_m + prompt_p + level_f,l + inter_m,f,l + noise

``quality_m`` is the planted generator order (generator 0 best), ``level`` a shift shared
by every generator (it cancels in margins, Eq. 1), ``inter`` a generator × level
interaction (it can change winners) and probes subtract ``probe_drop`` (scaled) from the
intact score. Prompt-free evaluators have empty captions and no caption factors.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

RENDER_LEVELS: dict[str, tuple[str, ...]] = {
    "resolution": ("196", "224", "256", "336", "384", "448", "512", "768", "1024"),
    "focal_length": ("16", "24", "35", "50", "85", "100", "200"),
    "lighting": ("city", "courtyard", "forest", "interior", "night", "studio", "sunrise", "sunset"),
    "background": ("0", "65", "118", "128", "186", "204", "255", "red", "green", "blue"),
    "pitch": ("0", "15", "30", "45", "60", "75", "90"),
    "yaw": ("0", "45", "90", "135", "180", "225", "270", "315"),
}
PROBE_NAMES = ("keep_half", "biggest_only", "scrambled", "worst_objects")


@dataclass(frozen=True)
class SyntheticSpec:
    """Sizes and planted effect sizes (score units unless noted)."""

    evaluators: int = 3
    prompt_free: int = 1
    generators: int = 6
    prompts: int = 10
    templates: int | None = 20  # number of grammar templates (None = all 337)
    paraphrases: int = 11  # levels p0..p{n-1}
    render_levels: int | None = None  # keep at most this many levels per render factor
    quality_step: float = 0.6  # gap between consecutive generators
    prompt_sd: float = 1.0
    level_sd: float = 1.0
    interaction_sd: float = 0.3
    noise_sd: float = 0.8
    probe_drop: tuple[float, float, float, float] = (1.0, 2.0, 0.3, 1.5)
    failure_rate: float = 0.0
    seed: int = 0


def _sha(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def _template_ids(n: int | None) -> tuple[tuple[str, ...], str]:
    from harness.captions import DEFAULT_TEMPLATE_ID, template_ids

    ids = template_ids()
    if n is None or n >= len(ids):
        return ids, DEFAULT_TEMPLATE_ID
    rng = np.random.default_rng(1234)
    rest = [t for t in ids if t != DEFAULT_TEMPLATE_ID]
    pick = rng.choice(len(rest), size=max(0, n - 1), replace=False)
    return (DEFAULT_TEMPLATE_ID, *sorted(rest[i] for i in pick)), DEFAULT_TEMPLATE_ID


def _captions(template: str, prompts: Sequence[str]) -> list[str]:
    from harness.captions import realize

    return [realize(template, p) for p in prompts]


def synthetic_records(spec: SyntheticSpec = SyntheticSpec()) -> pd.DataFrame:
    """Build the record table described by ``spec``; deterministic in ``spec.seed``."""
    rng = np.random.default_rng(spec.seed)
    G, P = spec.generators, spec.prompts
    gens = [f"gen{m}" for m in range(G)]
    prompt_ids = [f"q{p:03d}" for p in range(P)]
    prompt_text = [f"a room with object set {p}" for p in prompt_ids]
    templates, default_t = _template_ids(spec.templates)
    render = {
        f: lv if spec.render_levels is None else lv[: spec.render_levels]
        for f, lv in RENDER_LEVELS.items()
    }
    gi, pi = np.meshgrid(np.arange(G), np.arange(P), indexing="ij")
    gi, pi = gi.ravel(), pi.ravel()  # scenes in (generator, prompt) order
    n_scenes = G * P
    gen_col = np.asarray(gens, dtype=object)[gi]
    prompt_col = np.asarray(prompt_ids, dtype=object)[pi]
    scene_sha = np.asarray([_sha(gens[g], prompt_ids[p]) for g, p in zip(gi, pi, strict=True)], dtype=object)
    default_caps = np.asarray(_captions(default_t, prompt_text), dtype=object)[pi]
    frames = []
    n_eval = spec.evaluators + spec.prompt_free
    for e in range(n_eval):
        free = e >= spec.evaluators
        name = f"{'iqa' if free else 'eval'}{e}"
        scale = float(rng.uniform(0.5, 2.0))
        offset = float(rng.uniform(20, 40))
        quality = -spec.quality_step * np.arange(G)
        prompt_eff = rng.normal(0, spec.prompt_sd, P)
        base_true = offset + quality[gi] + prompt_eff[pi]

        def measure(shift: np.ndarray | float, base_true=base_true, scale=scale) -> np.ndarray:
            return scale * (base_true + shift + rng.normal(0, spec.noise_sd, n_scenes))

        rows: list[tuple[str, str, np.ndarray, np.ndarray, np.ndarray]] = []
        cap = np.full(n_scenes, "", dtype=object) if free else default_caps
        rows.append(("baseline", "c0", cap, measure(0.0), scene_sha))
        factors = dict(render)
        if not free:
            factors["template"] = templates
        for f, levels in factors.items():
            eff = rng.normal(0, spec.level_sd, len(levels))
            inter = rng.normal(0, spec.interaction_sd, (G, len(levels)))
            for k, lv in enumerate(levels):
                if f == "template":
                    c = np.asarray(_captions(lv, prompt_text), dtype=object)[pi]
                else:
                    c = cap
                rows.append((f, lv, c, measure(eff[k] + inter[gi, k]), scene_sha))
        if not free:
            for k in range(spec.paraphrases):
                c = np.asarray([f"{t} (rewrite {k})" if k else t for t in prompt_text], dtype=object)
                c = np.asarray(_captions(default_t, list(c)), dtype=object)[pi]
                rows.append(("paraphrase", f"p{k}", c, measure(rng.normal(0, spec.level_sd)), scene_sha))
        for k, probe in enumerate(PROBE_NAMES):
            sha = np.asarray([_sha(s, probe) for s in scene_sha], dtype=object)
            drop = spec.probe_drop[k] * rng.exponential(1.0, n_scenes)
            rows.append(("probe", probe, cap, measure(-drop), sha))
        for factor, level, caps, score, sha in rows:
            frames.append(
                pd.DataFrame(
                    {
                        "evaluator": name,
                        "generator": gen_col,
                        "prompt_id": prompt_col,
                        "scene_sha256": sha,
                        "factor": factor,
                        "level": level,
                        "caption": caps,
                        "score": score,
                    }
                )
            )
    df = pd.concat(frames, ignore_index=True)
    df["status"] = "ok"
    df["error"] = ""
    if spec.failure_rate > 0:
        fail = np.random.default_rng(spec.seed + 1).random(len(df)) < spec.failure_rate
        df.loc[fail, "score"] = np.nan
        df.loc[fail, "status"] = "failed"
        df.loc[fail, "error"] = "synthetic failure"
    return df
