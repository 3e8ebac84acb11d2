"""Synthetic raw score records with planted effects, for tests, benchmarks and demos.

The table passes :func:`harness.protocol.records.validate_records`: real Table 11 levels, real
template ids of the caption grammar, ``p0``..``p10`` paraphrases, the registered probes, 64-hex
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

from harness.vocab.factors import PARAPHRASE, TEMPLATE, rendered_factor_names
from harness.vocab.factors import factor as factor_spec
from harness.vocab.probes import probe_names


def render_levels() -> dict[str, tuple[str, ...]]:
    """The Table 11 levels of every factor that renders (record order), from the factor
    registry."""
    return {f: factor_spec(f).resolved()[0] for f in rendered_factor_names()}


@dataclass(frozen=True)
class SyntheticSpec:
    """Sizes and planted effect sizes (score units unless noted)."""

    evaluators: int = 3
    prompt_free: int = 1
    generators: int = 6
    prompts: int = 10
    templates: int | None = 20  # number of grammar templates (None = all 337)
    paraphrases: int = 11  # the first n paraphrase levels (p0..p{n-1})
    render_levels: int | None = None  # keep at most this many levels per render factor
    quality_step: float = 0.6  # gap between consecutive generators
    prompt_sd: float = 1.0
    level_sd: float = 1.0
    interaction_sd: float = 0.3
    noise_sd: float = 0.8
    #: mean drop of each registered probe, in registration order (keep_half, biggest_only,
    #: scrambled, worst_objects); a probe past the end takes the last value
    probe_drop: tuple[float, ...] = (1.0, 2.0, 0.3, 1.5)
    failure_rate: float = 0.0
    seed: int = 0


def _sha(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def _template_ids(n: int | None) -> tuple[tuple[str, ...], str]:
    ids, default = factor_spec(TEMPLATE).resolved()
    if n is None or n >= len(ids):
        return ids, default
    rng = np.random.default_rng(1234)
    rest = [t for t in ids if t != default]
    pick = rng.choice(len(rest), size=max(0, n - 1), replace=False)
    return (default, *sorted(rest[i] for i in pick)), default


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
        for f, lv in render_levels().items()
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
            factors[TEMPLATE] = templates
        for f, levels in factors.items():
            eff = rng.normal(0, spec.level_sd, len(levels))
            inter = rng.normal(0, spec.interaction_sd, (G, len(levels)))
            for k, lv in enumerate(levels):
                if f == TEMPLATE:
                    c = np.asarray(_captions(lv, prompt_text), dtype=object)[pi]
                else:
                    c = cap
                rows.append((f, lv, c, measure(eff[k] + inter[gi, k]), scene_sha))
        if not free:
            for k, level in enumerate(factor_spec(PARAPHRASE).levels[: spec.paraphrases]):
                c = np.asarray([f"{t} (rewrite {k})" if k else t for t in prompt_text], dtype=object)
                c = np.asarray(_captions(default_t, list(c)), dtype=object)[pi]
                rows.append((PARAPHRASE, level, c, measure(rng.normal(0, spec.level_sd)), scene_sha))
        for k, probe in enumerate(probe_names()):
            sha = np.asarray([_sha(s, probe) for s in scene_sha], dtype=object)
            drop = spec.probe_drop[min(k, len(spec.probe_drop) - 1)] * rng.exponential(1.0, n_scenes)
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
