"""Pivot the tidy score records into aligned arrays, one bundle per evaluator.

All evaluators share one generator axis and one prompt axis (the sorted union over the
whole record table), so a prompt-block bootstrap draw means the same prompts for every
evaluator, generator and configuration. Cells that were never measured or that failed are
``NaN``; failures are counted per factor so the report can show them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from harness.core.errors import RecordsError
from harness.protocol.configurations import BASELINE, BLOCK
from harness.protocol.levels import block_id, parse_cell
from harness.protocol.records import COLUMNS
from harness.stats._nan import nanmean
from harness.vocab.factors import CHROMATIC_RGB, factor_names, shared_factor_names
from harness.vocab.probes import probe_names

PROBE = "probe"
_KNOWN_ORDER = {name: i for i, name in enumerate(CHROMATIC_RGB)}  # red, green, blue


def level_sort_key(level: str) -> tuple:
    """Table 11 order: numbers numerically, then named levels (red, green, blue first),
    then natural order for ids such as ``p2`` < ``p10``."""
    try:
        return (0, float(level), "")
    except ValueError:
        pass
    if level in _KNOWN_ORDER:
        return (1, float(_KNOWN_ORDER[level]), "")
    parts = tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", level) if t)
    return (2, 0.0, parts)


@dataclass(frozen=True)
class FactorScores:
    """Scores of one factor sweep.

    ``scores`` has shape (G, P, L): generator × prompt × level, float64, NaN = missing/failed.
    ``levels`` names the last axis in Table 11 order.
    """

    factor: str
    levels: tuple[str, ...]
    scores: np.ndarray


@dataclass(frozen=True)
class BlockScores:
    """Scores of one factorial block.

    ``factors`` (record order) and ``levels[i]`` (Table 11 order) name the last axes of
    ``scores``: (G, P, L1, L2[, L3]) float64, NaN = missing/failed. ``id`` is the block id
    (``lighting:pitch``).
    """

    id: str
    factors: tuple[str, ...]
    levels: tuple[tuple[str, ...], ...]
    scores: np.ndarray


@dataclass(frozen=True)
class EvaluatorScores:
    """Everything measured for one evaluator, aligned on the shared (G, P) axes.

    ``baseline`` (G, P) are the c0 scores; ``factors`` maps a sweep factor to its
    :class:`FactorScores`; ``probes`` maps a probe name to its (G, P) scores (rendered at c0
    against the original prompt, so the intact counterpart is ``baseline``);
    ``probe_recorded`` (G, P) bool marks the probe cells that have a record, ok or failed.
    ``prompt_free`` is True when every caption of the evaluator is empty.
    """

    evaluator: str
    generators: tuple[str, ...]
    prompts: tuple[str, ...]
    baseline: np.ndarray
    factors: Mapping[str, FactorScores]
    probes: Mapping[str, np.ndarray]
    probe_recorded: Mapping[str, np.ndarray]
    prompt_free: bool
    n_records: int
    n_failed: int
    failed_by_factor: Mapping[str, int] = field(default_factory=dict)
    blocks: Mapping[str, BlockScores] = field(default_factory=dict)

    def shared_protocols(self) -> tuple[tuple[str, ...], np.ndarray]:
        """The shared protocol family Π: baseline plus every level of every shared factor.

        Returns (ids, scores) with ids like ``baseline`` / ``pitch=45`` and scores of shape
        (G, P, Π). Paraphrase levels are prompt-specific and therefore excluded.
        """
        ids = [BASELINE]
        blocks = [self.baseline[:, :, None]]
        for name in shared_factor_names():
            if name in self.factors:
                fs = self.factors[name]
                ids.extend(f"{name}={lv}" for lv in fs.levels)
                blocks.append(fs.scores)
        return tuple(ids), np.concatenate(blocks, axis=2)


@dataclass(frozen=True)
class _Coded:
    """The record table as integer codes: one entry per row."""

    evaluator: np.ndarray
    evaluators: np.ndarray
    factor: np.ndarray
    factors: np.ndarray
    level: np.ndarray
    levels: np.ndarray
    generator: np.ndarray
    generators: tuple[str, ...]
    prompt: np.ndarray
    prompts: tuple[str, ...]
    score: np.ndarray
    failed: np.ndarray
    empty_caption: np.ndarray


def _codes(col: pd.Series, name: str) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        raise RecordsError(f"empty {name!r}", where=f"score records row {row}", hint="fill it in")
    return codes, np.asarray([str(u) for u in uniques], dtype=object)


def _sorted_codes(codes: np.ndarray, names: np.ndarray, key=None) -> tuple[np.ndarray, tuple[str, ...]]:
    order = sorted(range(len(names)), key=lambda i: key(names[i]) if key else names[i])
    remap = np.empty(len(names), dtype=np.int64)
    remap[order] = np.arange(len(names))
    return remap[codes], tuple(str(names[i]) for i in order)


def check_records(records: pd.DataFrame) -> _Coded:
    """Validate the columns and values the statistics rely on and code them as integers.

    Raises :class:`RecordsError` naming the column or row when the table is unusable.
    (Full schema validation — hashes, level names, error texts — is
    ``harness.protocol.records.validate_records``; this checks what the arithmetic needs.)
    """
    missing = [c for c in COLUMNS if c not in records.columns]
    if missing:
        raise RecordsError(
            f"missing columns {missing}",
            where="score records",
            hint=f"raw score files need the columns {', '.join(COLUMNS)}",
        )
    ev, ev_names = _codes(records["evaluator"], "evaluator")
    fa, fa_names = _codes(records["factor"], "factor")
    lv, lv_names = _codes(records["level"], "level")
    gen, gen_names = _sorted_codes(*_codes(records["generator"], "generator"))
    pr, pr_names = _sorted_codes(*_codes(records["prompt_id"], "prompt_id"), key=level_sort_key)
    status = records["status"].to_numpy(dtype=object)
    ok = status == "ok"
    failed = status == "failed"
    bad = ~(ok | failed)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise RecordsError(
            f"status {status[row]!r} is neither 'ok' nor 'failed'",
            where=f"score records row {row}, column 'status'",
        )
    score = pd.to_numeric(records["score"], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad_score = ok & ~np.isfinite(score)
    if bad_score.any():
        row = int(np.flatnonzero(bad_score)[0])
        raise RecordsError(
            "status 'ok' but the score is not a finite number",
            where=f"score records row {row}, column 'score'",
            hint="record the measurement as status 'failed' with an error",
        )
    score = np.where(ok, score, np.nan)
    caption = records["caption"].to_numpy(dtype=object)
    empty = (caption == "") | pd.isna(caption)
    return _Coded(ev, ev_names, fa, fa_names, lv, lv_names, gen, gen_names, pr, pr_names,
                  score, failed, empty)


def _raise_duplicate(c: _Coded, rows: np.ndarray, flat: np.ndarray) -> None:
    order = np.argsort(flat, kind="stable")
    dup = np.flatnonzero(np.diff(flat[order]) == 0)
    if dup.size == 0:
        return
    row = int(rows[order[dup[0] + 1]])
    raise RecordsError(
        f"duplicate measurement ({c.evaluators[c.evaluator[row]]}, "
        f"{c.generators[c.generator[row]]}, {c.prompts[c.prompt[row]]}, "
        f"{c.factors[c.factor[row]]}={c.levels[c.level[row]]})",
        where=f"score records row {row}",
        hint="each evaluator × scene × factor level appears once; merge worker files once",
    )


def pivot_records(records: pd.DataFrame) -> dict[str, EvaluatorScores]:
    """Pivot a tidy record table into :class:`EvaluatorScores`, keyed by evaluator id.

    Generators and prompts are the sorted union over all evaluators. Raises
    :class:`RecordsError` for an invalid table, a duplicate measurement, an unknown factor
    or an evaluator without baseline rows.
    """
    if len(records) == 0:
        raise RecordsError("no score records", where="score records", hint="pass non-empty raw score files")
    c = check_records(records)
    G, P = len(c.generators), len(c.prompts)
    order = np.lexsort((c.factor, c.evaluator))
    ev_sorted = c.evaluator[order]
    ev_bounds = np.flatnonzero(np.diff(ev_sorted)) + 1
    out: dict[str, EvaluatorScores] = {}
    for rows in np.split(order, ev_bounds):
        evaluator = str(c.evaluators[c.evaluator[rows[0]]])
        fa = c.factor[rows]
        baseline = np.full((G, P), np.nan)
        factors: dict[str, FactorScores] = {}
        probes: dict[str, np.ndarray] = {}
        recorded: dict[str, np.ndarray] = {}
        blocks: dict[str, BlockScores] = {}
        failed_by_factor: dict[str, int] = {}
        has_baseline = False
        for frows in np.split(rows, np.flatnonzero(np.diff(fa)) + 1):
            factor = str(c.factors[c.factor[frows[0]]])
            g, p, s = c.generator[frows], c.prompt[frows], c.score[frows]
            n_failed = int(c.failed[frows].sum())
            if n_failed:
                failed_by_factor[factor] = n_failed
            lv_codes = c.level[frows]
            present = np.unique(lv_codes)
            levels = tuple(sorted((str(c.levels[k]) for k in present), key=level_sort_key))
            lookup = np.empty(len(c.levels), dtype=np.int64)
            lookup[[int(np.flatnonzero(c.levels == lv)[0]) for lv in levels]] = np.arange(len(levels))
            li = lookup[lv_codes]
            _raise_duplicate(c, frows, (g * P + p) * len(levels) + li)
            if factor == BASELINE:
                baseline[g, p] = s
                has_baseline = True
                continue
            if factor == BLOCK:
                blocks.update(_block_scores(levels, li, g, p, s, G, P, evaluator))
                continue
            if factor == PROBE:
                for k, name in enumerate(levels):
                    m = li == k
                    arr = np.full((G, P), np.nan)
                    arr[g[m], p[m]] = s[m]
                    rec = np.zeros((G, P), dtype=bool)
                    rec[g[m], p[m]] = True
                    probes[name], recorded[name] = arr, rec
                continue
            if factor not in factor_names():  # every registered factor, record order
                raise RecordsError(
                    f"unknown factor {factor!r}",
                    where=f"score records of {evaluator}",
                    hint=f"use one of baseline, {', '.join(factor_names())}, probe",
                )
            arr = np.full((G, P, len(levels)), np.nan)
            arr[g, p, li] = s
            factors[factor] = FactorScores(factor, levels, arr)
        if not has_baseline:
            raise RecordsError(
                f"evaluator {evaluator!r} has no baseline rows",
                where="score records",
                hint="every evaluator needs factor 'baseline', level 'c0' for each scene",
            )
        out[evaluator] = EvaluatorScores(
            evaluator=evaluator,
            generators=c.generators,
            prompts=c.prompts,
            baseline=baseline,
            factors={f: factors[f] for f in factor_names() if f in factors},
            probes={k: probes[k] for k in sorted(probes, key=_probe_order)},
            probe_recorded=recorded,
            prompt_free=bool(c.empty_caption[rows].all()),
            n_records=len(rows),
            n_failed=int(c.failed[rows].sum()),
            failed_by_factor=dict(sorted(failed_by_factor.items())),
            blocks=dict(sorted(blocks.items())),
        )
    return dict(sorted(out.items()))


def _block_scores(
    levels: tuple[str, ...],
    li: np.ndarray,
    g: np.ndarray,
    p: np.ndarray,
    s: np.ndarray,
    G: int,
    P: int,
    evaluator: str,
) -> dict[str, BlockScores]:
    """The ``block`` rows of one evaluator as one :class:`BlockScores` per block id.

    ``levels`` are the distinct cell levels, ``li`` each row's index into them; ``g``, ``p``,
    ``s`` the rows' generator and prompt codes and scores. Cells are parsed strictly
    (:func:`harness.protocol.levels.parse_cell`); a malformed one is a :class:`RecordsError`.
    """
    from harness.core.errors import AuditError

    cells: list[tuple[tuple[str, str], ...]] = []
    for level in levels:
        try:
            cells.append(parse_cell(level))
        except AuditError as exc:
            raise RecordsError(exc.what, where=f"score records of {evaluator}, factor block",
                               hint=exc.hint) from None
    by_block: dict[tuple[str, ...], list[int]] = {}
    for k, cell in enumerate(cells):
        by_block.setdefault(tuple(f for f, _ in cell), []).append(k)
    out: dict[str, BlockScores] = {}
    for names, ks in by_block.items():
        axes = tuple(
            tuple(sorted({cells[k][i][1] for k in ks}, key=level_sort_key)) for i in range(len(names))
        )
        lookup = np.zeros((len(names), len(levels)), dtype=np.int64)  # axis position per level
        for k in ks:
            lookup[:, k] = [axes[i].index(cells[k][i][1]) for i in range(len(names))]
        arr = np.full((G, P, *(len(a) for a in axes)), np.nan)
        rows = np.flatnonzero(np.isin(li, ks))
        arr[(g[rows], p[rows], *lookup[:, li[rows]])] = s[rows]
        out[block_id(names)] = BlockScores(block_id(names), names, axes, arr)
    return out


def _probe_order(name: str) -> tuple[int, str]:
    order = probe_names()  # every registered probe, registration order
    return (order.index(name), name) if name in order else (len(order), name)


def generator_means(scores: np.ndarray) -> np.ndarray:
    """L(m; π) = mean over prompts, ignoring NaN cells. (G, P, ...) → (G, ...)."""
    return nanmean(scores, axis=1)
