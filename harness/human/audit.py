"""Human agreement inside an audit run (``--audit-human``): read the ratings once, join them with
an evaluator's records and measure agreement at every configuration the run rendered.

The ratings file is a generic ratings table (docs/formats.md "Human ratings") or a public
format (``.json``: StanfordT23D); its scale comes from ``--audit-human-scale`` or from the
format. It joins the records on ``(generator, prompt_id)`` (or ``item_id`` on ``prompt_id``),
as ``t3d-audit agreement`` does (:mod:`harness.human.join`). Statistics:
:mod:`harness.human.agreement_table` (c0, every statistic with intervals, the raters' noise
ceiling) and :mod:`harness.human.protocol_dependence` (per-configuration Pearson r, envelopes and
largest drops per factor, the best configuration on a prompt split). JSON-ready output.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.errors import HumanDataError
from harness.core.numbers import finite_or_none

if TYPE_CHECKING:
    from harness.human.data import Ratings

STATISTIC = "pearson"  # the agreement the checks gate: in the noise ceiling's units
# which intervals hold one at a time and which hold jointly (docs/human-agreement.md, "Intervals")
INTERVAL_KINDS = {
    "c0": "pointwise, expanded percentile over the P prompts",
    "configurations": "pointwise, expanded percentile: each holds on its own; do not pick the worst of them",
    "factors.drops": "simultaneous over the factor's levels (max over levels within each draw, read at the expanded level for P prompts)",
    "factors.max_drop_ci": "simultaneous over the factor's levels (max over levels within each draw, read at the expanded level for P prompts)",
    "best.confirmation_gain_ci": "pointwise, expanded percentile on the held-out half (one comparison); not confirmable below 6 held-out prompts",
}


@dataclass(frozen=True)
class HumanInput:
    """``--audit-human`` resolved: the file, its scale text (``None``: the format's) and the
    dimension (``None``: ``overall`` or the only one)."""

    path: Path
    scale: str | None = None
    dimension: str | None = None
    scale_flag: str = "--audit-human-scale"  # how error messages name the scale option


def load_ratings(given: HumanInput) -> tuple[Ratings, str]:
    """The validated ratings and the dimension used; every problem is a HumanDataError."""
    from harness.human.data import file_sha256, parse_scale, validate_ratings
    from harness.human.importers import SCALES, detect_format, import_human

    path = given.path
    if not path.is_file():
        raise HumanDataError("file not found", where=path, hint="pass a ratings table (.csv/.parquet) or a .json")
    fmt = detect_format(path)
    if given.scale is not None:
        try:
            scale = parse_scale(given.scale)
        except HumanDataError as exc:
            raise HumanDataError(exc.what, where=given.scale_flag, hint=exc.hint) from None
    elif fmt in SCALES:
        scale = SCALES[fmt]
    else:
        raise HumanDataError("a ratings table needs its scale", where=path,
                             hint=f"declare it with {given.scale_flag} (e.g. 1-5)")
    ratings = validate_ratings(import_human(path, fmt), scale, str(path), file_sha256(path))
    dims = ratings.dimensions()
    dim = given.dimension or ("overall" if "overall" in dims else (dims[0] if len(dims) == 1 else None))
    if dim is None or dim not in dims:
        raise HumanDataError(f"choose a rating dimension (the ratings have {', '.join(dims)})",
                             where=path, hint="pass --audit-human-dimension NAME")
    return ratings, dim


def source_facts(ratings: Ratings, dimension: str) -> dict[str, object]:
    """What a card says about the human data (no path: the file's name and sha256)."""
    return {
        "file": Path(ratings.source).name,
        "sha256": ratings.sha256,
        "scale": str(ratings.scale),
        "dimension": dimension,
        "keyed_by": ratings.keyed_by,
        "simulated": is_simulated(ratings),
    }


def is_simulated(ratings: Ratings) -> bool:
    """A simulated panel: built by ``--simulate-panel``, or a table whose optional ``source``
    column says ``simulated`` on every row (it is then labelled so wherever it appears)."""
    frame = ratings.frame
    marked = "source" in frame.columns and bool((frame["source"] == "simulated").all())
    return ratings.source.startswith("simulated:") or marked


def scene_means(ratings: Ratings, dimension: str) -> dict[tuple[str, str], float] | None:
    """(generator, prompt_id) → mean rating (``t3d-audit compare`` and ``--audit-baseline``);
    ``None`` for ratings keyed by ``item_id``, which name no scene."""
    import numpy as np

    if ratings.keyed_by != "scene":
        return None
    items, _raters, matrix = ratings.matrix(dimension)
    finite = np.isfinite(matrix)
    counts = finite.sum(axis=1)
    sums = np.where(finite, matrix, 0.0).sum(axis=1)
    return {tuple(item.split("/", 1)): float(total / n)
            for item, n, total in zip(items, counts, sums, strict=True) if n}


def _factor_of(configuration: str) -> tuple[str, str] | None:
    """``pitch=90`` (``@policy`` dropped) → (pitch, 90); ``None`` for c0 and probes."""
    from harness.human.join import C0_NAME

    label = configuration.split("@", 1)[0]
    if label == C0_NAME or "=" not in label:
        return None
    factor, level = label.split("=", 1)
    return None if factor == "probe" else (factor, level)


def evaluator_agreement(
    ratings: Ratings, dimension: str, records_file: Path, evaluator: str, bootstrap: int, seed: int
) -> dict[str, object]:
    """Agreement of ``evaluator``'s records with the ratings (see docs/human-agreement.md,
    "In an audit"). Keys: ``source``, ``join``, ``human`` (reliability with intervals),
    ``statistic``, ``c0`` (every statistic with ``ci``), ``noise_ceiling`` (+ ``_ci``),
    ``configurations`` {label: {pearson, ci}} (pointwise intervals), ``factors``
    (:func:`factor_envelopes`: drops on shared items, simultaneous over levels), ``best``
    (:func:`best_configuration`), ``bootstrap``, ``intervals`` (:data:`INTERVAL_KINDS`)."""
    import numpy as np

    from harness.human import agreement_table as hs
    from harness.human import protocol_dependence as hp
    from harness.human.degenerate import MIN_ITEMS
    from harness.human.join import C0_NAME, join_scores, read_scores
    from harness.stats.intervals import block_bounds

    items, _raters, matrix = ratings.matrix(dimension)
    frame = read_scores(records_file)
    frame = frame[frame["configuration"].map(lambda c: not c.split("@", 1)[0].startswith("probe="))]
    joined = join_scores([frame], ratings, items, allow_unjoined=True)
    keep = [items.index(i) for i in joined.items]
    matrix = matrix[keep]
    prompt_of = ratings.prompt_of()
    prompts = [prompt_of[i] for i in joined.items]
    names = sorted(set(prompts))
    bidx = {b: k for k, b in enumerate(names)}
    blocks = np.array([bidx[p] for p in prompts], dtype=np.int64)
    draws_used = max(int(bootstrap), 2)
    weights = hs.draw_weights(len(names), draws_used, seed)
    with warnings.catch_warnings():  # an item nobody rated stays NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(matrix, axis=1)
    confs = [c for e, c in joined.series if e == evaluator]
    if not confs:
        raise HumanDataError(f"no scores of {evaluator} join the ratings", where=ratings.source)
    rows = [joined.series.index((evaluator, c)) for c in confs]
    scores = joined.scores[rows]
    c0 = next((c for c in confs if c.split("@", 1)[0] == C0_NAME), None)
    if c0 is None:
        raise HumanDataError(f"the records of {evaluator} have no c0 rows", where=str(records_file))
    human = hs.reliability_summary(matrix, blocks, len(names), weights)
    c0_entry = hs.series_agreement(scores[[confs.index(c0)]], mean, blocks, len(names), weights)[0]
    draws = hp.configuration_draws(scores, mean, blocks, weights)
    drops = hp.paired_drop_draws(scores, mean, blocks, weights, confs.index(c0))
    ci = block_bounds(draws[1:], len(names))
    if len(names) < 2:  # one prompt: every draw is the sample, a zero-width "interval"
        ci = np.full_like(ci, np.nan)
    few = (np.isfinite(scores) & np.isfinite(mean)[None, :]).sum(axis=1) < MIN_ITEMS
    draws[:, few] = np.nan  # r of two points is ±1 whatever the scores: not reported
    ci[:, few] = np.nan
    factor_of = {c: f for c in confs if (f := _factor_of(c)) is not None}

    return {
        "source": source_facts(ratings, dimension),
        "join": joined.counts(),
        "bootstrap": {"draws": draws_used, "seed": int(seed), "level": 0.95, "blocks": len(names)},
        "human": human,
        "statistic": STATISTIC,
        "c0": {"configuration": c0, **c0_entry},
        "noise_ceiling": human["noise_ceiling"],
        "noise_ceiling_ci": human["ci"].get("noise_ceiling", [None, None]),
        "configurations": {
            c: {"pearson": finite_or_none(draws[0, i]), "ci": [finite_or_none(ci[0, i]), finite_or_none(ci[1, i])]} for i, c in enumerate(confs)
        },
        "factors": hp.factor_envelopes(draws, confs, factor_of, c0, drops=drops, n_blocks=len(names)),
        "best": hp.best_configuration(scores, mean, prompts, confs, c0, seed, n_draws=draws_used),
        "intervals": INTERVAL_KINDS,
    }


def card_figures(agreement: dict[str, object]) -> dict[str, object]:
    """The card's ``human_agreement``: the data (sha256, raters, items, α, ceiling) and the
    agreement figures (c0 with interval, the largest drop per factor, the best configuration)."""
    h = agreement["human"]
    c0 = agreement["c0"]
    best = agreement["best"]
    return {
        "data": {
            **agreement["source"],
            "raters": h["raters"],
            "items": h["items"],
            "ratings": h["ratings"],
            "krippendorff_alpha_interval": h["krippendorff_alpha_interval"],
            "krippendorff_alpha_interval_ci": h["ci"].get("krippendorff_alpha_interval", [None, None]),
            "krippendorff_alpha_ordinal": h["krippendorff_alpha_ordinal"],
            "noise_ceiling": h["noise_ceiling"],
            "noise_ceiling_ci": agreement["noise_ceiling_ci"],
        },
        "statistic": agreement["statistic"],
        "joined_items": agreement["join"]["joined"],
        "c0": {k: c0[k] for k in ("pearson", "spearman", "kendall_tau_b", "pairwise_accuracy")}
        | {"pearson_ci": c0["ci"]["pearson"]},
        "factors": {
            f: {"levels": e["levels"], "envelope": e["envelope"], "max_drop": e["max_drop"],
                "max_drop_ci": e["max_drop_ci"], "worst_level": e["worst_level"],
                "max_drop_ci_kind": (e.get("interval") or {}).get("kind", "pointwise")}
            for f, e in agreement["factors"].items()
        },
        "best_configuration": None if best is None else {
            k: best.get(k) for k in ("configuration", "selection_pearson", "confirmation_pearson",
                                     "c0_confirmation_pearson", "confirmation_gain", "confirmation_gain_ci",
                                     "confirmed", "reason")
        },
        "intervals": agreement.get("intervals", INTERVAL_KINDS),
    }
