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

from harness.errors import RecordsError
from harness.stats._nan import nanmean

COLUMNS = (
    "evaluator",
    "generator",
    "prompt_id",
    "scene_sha256",
    "factor",
    "level",
    "caption",
    "score",
    "status",
    "error",
)
BASELINE = "baseline"
PROBE = "probe"
PARAPHRASE = "paraphrase"
SHARED_FACTORS = ("resolution", "focal_length", "lighting", "background", "pitch", "yaw", "template")
RENDER_FACTORS = ("resolution", "focal_length", "lighting", "background", "pitch", "yaw")
SWEEP_FACTORS = (*SHARED_FACTORS, PARAPHRASE)
PROBES = ("keep_half", "biggest_only", "scrambled", "worst_objects")
_KNOWN_ORDER = {"red": 0, "green": 1, "blue": 2}


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

    def shared_protocols(self) -> tuple[tuple[str, ...], np.ndarray]:
        """The shared protocol family Π: baseline plus every level of every shared factor.

        Returns (ids, scores) with ids like ``baseline`` / ``pitch=45`` and scores of shape
        (G, P, Π). Paraphrase levels are prompt-specific and therefore excluded.
        """
        ids = [BASELINE]
        blocks = [self.baseline[:, :, None]]
        for name in SHARED_FACTORS:
            if name in self.factors:
                fs = self.factors[name]
                ids.extend(f"{name}={lv}" for lv in fs.levels)
                blocks.append(fs.scores)
        return tuple(ids), np.concatenate(blocks, axis=2)


def check_records(records: pd.DataFrame) -> pd.DataFrame:
    """Validate the columns and values the statistics rely on; return a normalised copy.

    Raises :class:`RecordsError` naming the column or row when the table is unusable.
    """
    missing = [c for c in COLUMNS if c not in records.columns]
    if missing:
        raise RecordsError(
            f"missing columns {missing}",
            where="score records",
            hint=f"raw score files need the columns {', '.join(COLUMNS)}",
        )
    df = records.loc[:, list(COLUMNS)].copy()
    for col in ("evaluator", "generator", "prompt_id", "factor", "level"):
        if df[col].isna().any():
            row = int(np.flatnonzero(df[col].isna().to_numpy())[0])
            raise RecordsError(f"empty {col!r}", where=f"score records row {row}", hint="fill it in")
        df[col] = df[col].astype(str)
    df["caption"] = df["caption"].fillna("").astype(str)
    df["score"] = pd.to_numeric(df["score"], errors="coerce").astype(np.float64)
    df["status"] = df["status"].astype(str)
    bad_status = ~df["status"].isin(("ok", "failed"))
    if bad_status.any():
        row = int(np.flatnonzero(bad_status.to_numpy())[0])
        raise RecordsError(
            f"status {df['status'].iat[row]!r} is neither 'ok' nor 'failed'",
            where=f"score records row {row}, column 'status'",
        )
    ok = df["status"].to_numpy() == "ok"
    bad_score = ok & ~np.isfinite(df["score"].to_numpy())
    if bad_score.any():
        row = int(np.flatnonzero(bad_score)[0])
        raise RecordsError(
            "status 'ok' but the score is not a finite number",
            where=f"score records row {row}, column 'score'",
            hint="record the measurement as status 'failed' with an error",
        )
    df.loc[~ok, "score"] = np.nan
    dup = df.duplicated(subset=["evaluator", "generator", "prompt_id", "factor", "level"], keep=False)
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        r = df.iloc[row]
        raise RecordsError(
            f"duplicate measurement ({r.evaluator}, {r.generator}, {r.prompt_id}, "
            f"{r.factor}={r.level})",
            where=f"score records row {row}",
            hint="each evaluator × scene × factor level appears once; merge worker files once",
        )
    return df


def pivot_records(records: pd.DataFrame) -> dict[str, EvaluatorScores]:
    """Pivot a tidy record table into :class:`EvaluatorScores`, keyed by evaluator id.

    Generators and prompts are the sorted union over all evaluators. Raises
    :class:`RecordsError` for an invalid table or an evaluator without baseline rows.
    """
    df = check_records(records)
    generators = tuple(sorted(df["generator"].unique()))
    prompts = tuple(sorted(df["prompt_id"].unique(), key=level_sort_key))
    g_index = pd.Index(generators)
    p_index = pd.Index(prompts)
    G, P = len(generators), len(prompts)
    df["_g"] = g_index.get_indexer(df["generator"])
    df["_p"] = p_index.get_indexer(df["prompt_id"])
    out: dict[str, EvaluatorScores] = {}
    for evaluator, edf in df.groupby("evaluator", sort=True):
        failed = edf["status"].to_numpy() == "failed"
        failed_by_factor = {
            str(k): int(v) for k, v in edf.loc[failed, "factor"].value_counts().items()
        }
        baseline = np.full((G, P), np.nan)
        factors: dict[str, FactorScores] = {}
        probes: dict[str, np.ndarray] = {}
        recorded: dict[str, np.ndarray] = {}
        for factor, fdf in edf.groupby("factor", sort=False):
            g = fdf["_g"].to_numpy()
            p = fdf["_p"].to_numpy()
            s = fdf["score"].to_numpy()
            if factor == BASELINE:
                baseline[g, p] = s
                continue
            levels = tuple(sorted(fdf["level"].unique(), key=level_sort_key))
            li = pd.Index(levels).get_indexer(fdf["level"])
            if factor == PROBE:
                for k, name in enumerate(levels):
                    arr = np.full((G, P), np.nan)
                    m = li == k
                    arr[g[m], p[m]] = s[m]
                    probes[name] = arr
                    rec = np.zeros((G, P), dtype=bool)
                    rec[g[m], p[m]] = True
                    recorded[name] = rec
                continue
            if factor not in SWEEP_FACTORS:
                raise RecordsError(
                    f"unknown factor {factor!r}",
                    where=f"score records of {evaluator}",
                    hint=f"use one of baseline, {', '.join(SWEEP_FACTORS)}, probe",
                )
            arr = np.full((G, P, len(levels)), np.nan)
            arr[g, p, li] = s
            factors[str(factor)] = FactorScores(str(factor), levels, arr)
        if not (edf["factor"] == BASELINE).any():
            raise RecordsError(
                f"evaluator {evaluator!r} has no baseline rows",
                where="score records",
                hint="every evaluator needs factor 'baseline', level 'c0' for each scene",
            )
        ordered = {f: factors[f] for f in SWEEP_FACTORS if f in factors}
        out[str(evaluator)] = EvaluatorScores(
            evaluator=str(evaluator),
            generators=generators,
            prompts=prompts,
            baseline=baseline,
            factors=ordered,
            probes={k: probes[k] for k in sorted(probes, key=_probe_order)},
            probe_recorded=recorded,
            prompt_free=bool((edf["caption"].str.len() == 0).all()),
            n_records=len(edf),
            n_failed=int(failed.sum()),
            failed_by_factor=failed_by_factor,
        )
    return out


def _probe_order(name: str) -> tuple[int, str]:
    return (PROBES.index(name), name) if name in PROBES else (len(PROBES), name)


def generator_means(scores: np.ndarray) -> np.ndarray:
    """L(m; π) = mean over prompts, ignoring NaN cells. (G, P, ...) → (G, ...)."""
    return nanmean(scores, axis=1)
