"""Known-truth generative models for calibrating the prompt-block intervals (no I/O).

Shared by ``tests/test_calibration.py`` and ``benchmarks/bench_calibration.py``. Every model is
generators × prompts × levels with per-prompt random effects, in a *symmetric* variant (normal
terms) and a *skewed* one (centred exponential terms, a lognormal per-prompt scale of the
protocol effects); the population values are known, so an interval's coverage and a
confirmation's false rate can be counted.

The study model (:class:`Model`), scores in arbitrary units, g a generator, p a prompt, f a
factor, l a level::

    baseline[g, p]     = q_g + a_p + u_gp + e0_gp
    factor[f, g, p, l] = q_g + a_p + u_gp + s_p · (m_fl + h_fgl + b_fpl) + e_fgpl
    probe[g, p]        = q_g + a_p + u_gp − d_gp + e'_gp
    human[g, p]        = q_g + a_p + u_gp + v_gp

Fixed (drawn once from ``Model.seed``): the generator qualities q (``quality_step`` apart), the
level effects m_fl ~ N(0, effect_sd_f²) and the generator × level interactions
h_fgl ~ N(0, interaction_sd²). Random per replication: the prompt effect a_p ~ N(0,
prompt_sd²) (it cancels in every statistic), the generator × prompt effect u_gp (sd
``scene_sd``), the prompt × level effect b_fpl ~ N(0, prompt_effect_sd²), the record noise e
(sd ``noise_sd``), the probe drop d_gp (mean ``probe_drop``), the rating noise v_gp (sd
``human_sd``) and the per-prompt scale s_p (1 when symmetric; lognormal with mean 1 and log-sd
``prompt_scale_sd`` when skewed). Skewed: u, e, e' and v are sd · (Exp(1) − 1) and
d ~ probe_drop · Exp(1); symmetric: normal, d ~ N(probe_drop, (probe_drop / 2)²).

True values: each statistic's population value is the statistic computed on one sample of
:data:`TRUTH_PROMPTS` prompts drawn from the same model (seed fixed), close to the limit of
infinitely many prompts (its Monte Carlo error is below 1 % of the value).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from harness.human.agreement_draws import pearson_draws
from harness.stats import bootstrap as bs
from harness.stats._nan import nanmax
from harness.stats.intervals import IntervalPolicy
from harness.stats.probe_stats import pair_credit
from harness.stats.replicates import kendall_w_draws, level_mean_draws
from harness.stats.rho import scene_level_variance

#: The plain rule the calibrated policy replaces: percentile intervals, no minimum prompt blocks.
PLAIN = IntervalPolicy(study_method="percentile", refuse_below_min_blocks=False)

TRUTH_PROMPTS = 100_000
STATISTICS = ("rho", "peak_rho", "kendall_w", "discrimination", "agreement_r")

#: A statistic as a function of prompt-block weights: (B, P) counts → (B,) values; an all-ones
#: row gives the point estimate.
Statistic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Model:
    """The study model's sizes and effect sizes (see the module docstring)."""

    skewed: bool = False
    generators: int = 6
    levels: int = 5
    effect_sd: tuple[float, ...] = (0.45, 0.4, 0.35)  # one entry per factor; factor 0 is read for ρ and W
    quality_step: float = 0.25
    prompt_sd: float = 0.5
    scene_sd: float = 0.35
    interaction_sd: float = 0.15
    prompt_effect_sd: float = 0.25
    prompt_scale_sd: float = 0.5
    noise_sd: float = 0.3
    probe_drop: float = 0.35
    human_sd: float = 0.4
    seed: int = 11


@dataclass(frozen=True)
class Sample:
    """One replication: ``baseline``, ``probe``, ``human`` (G, P); ``factors`` (F, G, P, L)."""

    baseline: np.ndarray
    factors: np.ndarray
    probe: np.ndarray
    human: np.ndarray

    @property
    def n_prompts(self) -> int:
        return int(self.baseline.shape[1])


def _centred(rng: np.random.Generator, sd: float, size: tuple[int, ...], skewed: bool) -> np.ndarray:
    """Mean-0 terms of standard deviation ``sd``: normal, or sd · (Exp(1) − 1) (skewness 2)."""
    if skewed:
        return sd * (rng.exponential(1.0, size) - 1.0)
    return rng.normal(0.0, sd, size)


def draw(model: Model, n_prompts: int, rng: np.random.Generator) -> Sample:
    """One replication of ``model`` with ``n_prompts`` prompts."""
    fixed = np.random.default_rng(model.seed)
    g, p, n_l, n_f = model.generators, n_prompts, model.levels, len(model.effect_sd)
    q = -model.quality_step * np.arange(g)
    m = fixed.normal(0.0, 1.0, (n_f, n_l)) * np.asarray(model.effect_sd)[:, None]
    h = fixed.normal(0.0, model.interaction_sd, (n_f, g, n_l))
    sk = model.skewed
    common = q[:, None] + rng.normal(0.0, model.prompt_sd, p)[None, :] + _centred(rng, model.scene_sd, (g, p), sk)
    if sk:
        s = model.prompt_scale_sd
        scale = rng.lognormal(-s * s / 2.0, s, p)
    else:
        scale = np.ones(p)
    b = rng.normal(0.0, model.prompt_effect_sd, (n_f, p, n_l))
    protocol = scale[None, None, :, None] * (m[:, None, None, :] + h[:, :, None, :] + b[:, None, :, :])
    factors = common[None, :, :, None] + protocol + _centred(rng, model.noise_sd, (n_f, g, p, n_l), sk)
    baseline = common + _centred(rng, model.noise_sd, (g, p), sk)
    drop = model.probe_drop * rng.exponential(1.0, (g, p)) if sk else rng.normal(model.probe_drop, model.probe_drop / 2, (g, p))
    probe = common - drop + _centred(rng, model.noise_sd, (g, p), sk)
    human = common + _centred(rng, model.human_sd, (g, p), sk)
    return Sample(baseline, factors, probe, human)


def statistics(sample: Sample) -> dict[str, Statistic]:
    """The study's statistics of ``sample`` as functions of prompt-block weights, computed by
    the harness's own draw functions: ρ of factor 0 and peak ρ over the factors
    (:func:`harness.stats.bootstrap.rho_draws`), Kendall's W of factor 0's levels
    (:func:`harness.stats.replicates.kendall_w_draws`), the probe's tie-adjusted discrimination and
    Pearson r of the baseline with the mean rating (:func:`harness.human.agreement_draws.pearson_draws`)."""
    sv = np.stack([scene_level_variance(f) for f in sample.factors])  # (F, G, P)
    base, factor0 = sample.baseline, sample.factors[0]
    credit = pair_credit(base, sample.probe)
    g, p = base.shape
    blocks = np.tile(np.arange(p), g)  # items generator-major, as the engine flattens them
    x, y = base.reshape(1, -1), sample.human.reshape(-1)
    return {
        "rho": lambda w: bs.rho_draws(sv[:1], base, w)[:, 0],
        "peak_rho": lambda w: nanmax(bs.rho_draws(sv, base, w), axis=1),
        "kendall_w": lambda w: kendall_w_draws(level_mean_draws(factor0, w)),
        "discrimination": lambda w: bs.scene_mean_draws(credit, w),
        "agreement_r": lambda w: pearson_draws(x, y, blocks, w)[:, 0],
    }


@functools.cache
def true_values(model: Model) -> dict[str, float]:
    """Every statistic's population value: its point on :data:`TRUTH_PROMPTS` prompts (Pearson r
    by ``np.corrcoef``, the point :func:`pearson_draws` gives, without its per-prompt blocks)."""
    sample = draw(model, TRUTH_PROMPTS, np.random.default_rng(model.seed + 1))
    ones = np.ones((1, TRUTH_PROMPTS))
    out = {name: float(stat(ones)[0]) for name, stat in statistics(sample).items() if name != "agreement_r"}
    out["agreement_r"] = float(np.corrcoef(sample.baseline.ravel(), sample.human.ravel())[0, 1])
    return out


# ------------------------------------------------------------------ confirmation nulls


def agreement_null(n_prompts: int, configurations: int, rng: np.random.Generator, *, skewed: bool = False,
                   per_prompt: int = 6) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Human agreement where no configuration agrees better than c0: ``(scores (C, n), human
    (n,), item prompts (n,))``, n = ``n_prompts`` × ``per_prompt`` rated scenes, each
    configuration the true quality plus its own noise of sd 1, the ratings plus noise of sd 0.5
    (centred exponential when ``skewed``); the true quality has a per-prompt effect of sd 0.5."""
    n = n_prompts * per_prompt
    prompts = np.repeat(np.arange(n_prompts), per_prompt)
    true = rng.normal(0.0, 0.5, n_prompts)[prompts] + rng.normal(0.0, np.sqrt(0.75), n)
    human = true + _centred(rng, 0.5, (n,), skewed)
    scores = true[None, :] + _centred(rng, 1.0, (configurations, n), skewed)
    return scores, human, [f"p{i:02d}" for i in prompts]


def drop_boundary(n_prompts: int, levels: int, drop: float, rng: np.random.Generator, *, skewed: bool = False,
                  per_prompt: int = 6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human agreement whose every level's true drop from c0 is exactly ``drop``: ``(scores
    (1 + levels, n), human (n,), item prompt index (n,))``; row 0 is c0.

    The true quality t has variance 1 (a per-prompt part of variance 0.25), the ratings
    t + noise of variance 0.25; c0 adds noise of variance 0.25, each level noise of the variance
    that puts its population Pearson r with the ratings exactly ``drop`` below c0's
    (r = 1 / √((1 + σ_h²)(1 + σ²)) for a series t + noise of variance σ²); every noise is
    normal, or a centred exponential when ``skewed`` (r depends on the variances only)."""
    n = n_prompts * per_prompt
    prompts = np.repeat(np.arange(n_prompts), per_prompt)
    true = rng.normal(0.0, 0.5, n_prompts)[prompts] + rng.normal(0.0, np.sqrt(0.75), n)
    var_h, var_0 = 0.25, 0.25
    r0 = 1.0 / np.sqrt((1 + var_h) * (1 + var_0))
    var_l = 1.0 / ((r0 - drop) ** 2 * (1 + var_h)) - 1.0
    human = true + _centred(rng, np.sqrt(var_h), (n,), skewed)
    c0 = true + _centred(rng, np.sqrt(var_0), (n,), skewed)
    rest = true[None, :] + _centred(rng, np.sqrt(var_l), (levels, n), skewed)
    return np.vstack([c0, rest]), human, prompts


def concordance_null(n_prompts: int, presets: int, generators: int, rng: np.random.Generator, *,
                     skewed: bool = False, step: float = 0.0) -> np.ndarray:
    """Scores (K presets, G generators, P prompts) under which no preset reverses any pair:
    every preset sees the same generator qualities (``step`` apart; 0: all tied, the hardest
    case) plus a preset shift shared by every generator, a per-prompt effect, a per-scene
    effect of sd 0.5 shared by the presets and per-(preset, scene) noise of sd 1 (the
    scene and noise terms normal, or centred exponentials when ``skewed``)."""
    q = -step * np.arange(generators)
    prompt = rng.normal(0.0, 1.0, n_prompts)
    shift = rng.normal(0.0, 1.0, presets)
    scene = _centred(rng, 0.5, (generators, n_prompts), skewed)
    noise = _centred(rng, 1.0, (presets, generators, n_prompts), skewed)
    return shift[:, None, None] + (q[:, None] + prompt[None, :] + scene)[None] + noise
