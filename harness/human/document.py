"""The agreement document (docs/human-agreement.md): how well evaluator scores agree with
validated human ratings, beside the raters' own reliability, with prompt-block bootstrap
intervals. Written by ``t3d-audit agreement`` and returned by :func:`harness.api.agreement`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from harness.core.errors import HumanDataError
from harness.human import agreement_table as hs
from harness.human.data import Ratings, Votes
from harness.human.degenerate import standardize_raters as standardized_matrix
from harness.human.importers import read_scores_any as read_scores
from harness.human.join import C0_NAME, join_scores


def agreement_document(
    ratings: Ratings,
    *,
    scores: Sequence[Path] = (),
    dimension: str | None = None,
    group_by: str | None = None,
    allow_unjoined: bool = False,
    bootstrap: int = 2000,
    seed: int = 42,
    standardize_raters: bool = False,
    votes: Votes | None = None,
) -> dict[str, object]:
    """The agreement document of ``ratings`` against the records or score tables ``scores``.

    ``dimension``: the rated dimension (default ``overall``, or the only one); ``group_by``: a
    ratings column whose groups the bootstrap resamples (default: prompts); ``bootstrap``
    draws with ``seed``; ``standardize_raters``: z-score each rater first; ``votes``: pairwise
    votes for Bradley-Terry strengths. Raises :class:`HumanDataError` on a dimension the
    ratings lack or scores that do not join."""
    dims = ratings.dimensions()
    dim = dimension or ("overall" if "overall" in dims else (dims[0] if len(dims) == 1 else None))
    if dim is None or dim not in dims:
        raise HumanDataError(
            f"choose a dimension with --dimension (the ratings have {', '.join(dims)})", where="--dimension"
        )
    items, _raters, matrix = ratings.matrix(dim)
    if standardize_raters:
        matrix = standardized_matrix(matrix)
    group_of = ratings.column_of(group_by) if group_by else ratings.prompt_of()
    resampled = group_by or "prompt_id"
    doc: dict[str, object] = {
        "human": {},
        "human_source": {"file": Path(ratings.source).name, "sha256": ratings.sha256,
                         "scale": str(ratings.scale), "dimension": dim, "keyed_by": ratings.keyed_by,
                         "simulated": ratings.source.startswith("simulated:"),
                         "standardized_raters": standardize_raters},
        "bootstrap": {"draws": bootstrap, "seed": seed, "level": 0.95, "resampled": resampled},
        "grouped_by": group_by,
        "evaluators": {},
        "flags": [],
    }
    if resampled != "prompt_id":
        doc["flags"].append(f"--group-by {resampled}: the intervals resample {resampled} groups (each with "
                            f"all its items), not prompts; with few {resampled} groups they are rough")
    if scores:
        joined = join_scores([read_scores(p) for p in scores], ratings, items, allow_unjoined=allow_unjoined)
        doc["join"] = joined.counts()
        keep = [items.index(i) for i in joined.items]
        items, matrix = joined.items, matrix[keep]
    block_names = sorted({group_of[i] for i in items})
    bidx = {b: k for k, b in enumerate(block_names)}
    blocks = np.array([bidx[group_of[i]] for i in items], dtype=np.int64)
    weights = hs.draw_weights(len(block_names), bootstrap, seed)
    doc["bootstrap"]["blocks"] = len(block_names)
    doc["human"] = hs.reliability_summary(matrix, blocks, len(block_names), weights)
    if scores:
        with np.errstate(invalid="ignore"):
            mean = np.nanmean(matrix, axis=1)
        entries = hs.series_agreement(joined.scores, mean, blocks, len(block_names), weights,
                                      grouped=bool(group_by))  # fmt: skip
        by_eval: dict[str, dict[str, dict[str, object]]] = {}
        for (ev, conf), entry in zip(joined.series, entries, strict=True):
            by_eval.setdefault(ev, {})[conf] = entry
        gens = [i.split("/", 1)[0] for i in items] if ratings.keyed_by == "scene" else None
        for ev, confs in by_eval.items():
            c0 = C0_NAME if C0_NAME in confs else sorted(confs)[0]
            entry = dict(confs[c0])
            entry["configuration"] = c0
            entry["noise_ceiling"] = doc["human"]["noise_ceiling"]
            if gens is not None:
                e = joined.series.index((ev, c0))
                entry["generator_level"] = hs.generator_level(joined.scores[e], mean, gens, blocks, weights)
            doc["evaluators"][ev] = entry
        if any(len(c) > 1 for c in by_eval.values()):
            doc["configurations"] = by_eval
    if votes is not None:
        gens_v, prompts, arr = votes.arrays()
        vw = hs.draw_weights(len(prompts), bootstrap, seed)
        doc["bradley_terry"] = hs.bradley_terry_summary(arr["a"], arr["b"], arr["outcome"], arr["block"],
                                                        gens_v, len(prompts), vw)  # fmt: skip
    return doc
