"""Agreement of an evaluator with a geometry-grounded companion check (the card's Table 6 field).

The companion scores each frozen scene against its structured prompt spec, without rendering,
so its verdicts are the ground truth that rendered-image scores lack: which of two scenes of a
prompt is more faithful, and whether a probe edit really broke the scene. This module measures
how often an evaluator agrees with those verdicts at the default configuration c0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from harness.core.errors import AuditError
from harness.stats.envelopes import generator_pairs
from harness.stats.probe_stats import pair_credit
from harness.stats.rank import unique_winners
from harness.stats.table import EvaluatorScores, generator_means, pivot_records


@dataclass(frozen=True)
class CompanionAgreement:
    """How an evaluator's c0 verdicts match the companion's.

    ``pair_agreement``: credit over the (prompt, generator pair) cells that the companion
    orders strictly and the evaluator measured: 1 same order, 0.5 evaluator tie, 0 opposite;
    ``n_pairs`` such cells. ``ranking_tau``: Kendall τ-b between the two generator-mean
    vectors (G,) at c0. ``winner`` / ``companion_winner``: the unique top generator at c0
    (``None`` on a tie at the top or an undefined mean). ``probe_agreement``: probe → (the evaluator's directional
    credit on the cells where the companion's score strictly drops, number of such cells).
    """

    pair_agreement: float
    n_pairs: int
    ranking_tau: float
    winner: str | None
    companion_winner: str | None
    probe_agreement: dict[str, tuple[float, int]] = field(default_factory=dict)


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b of two equal-length vectors (n,); NaN pairs dropped; NaN if undefined.

    τ-b = (C − D) / sqrt((n0 − n1)(n0 − n2)), with n0 = n(n−1)/2 pairs, n1 / n2 the pairs tied
    in x / y. Ties count in neither C nor D.
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"kendall_tau_b needs two vectors of one length, got {a.shape} and {b.shape}")
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    i, j = np.triu_indices(len(a), k=1)
    sa, sb = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    n0 = len(i)
    untied_a, untied_b = int((sa != 0).sum()), int((sb != 0).sum())
    if n0 == 0 or untied_a == 0 or untied_b == 0:
        return float("nan")
    return float((sa * sb).sum() / np.sqrt(untied_a * untied_b))


def top_generator(means: np.ndarray, names: tuple[str, ...]) -> str | None:
    """The unique top generator of ``means`` (G,), ``None`` when tied or any mean is undefined
    (the rule of :func:`harness.stats.rank.unique_winners`)."""
    index = int(unique_winners(np.asarray(means, dtype=np.float64)[:, None])[0])
    return names[index] if index >= 0 else None


def order_agreement(scores: np.ndarray, truth: np.ndarray) -> tuple[float, int]:
    """Agreement of ``scores`` with ``truth`` (both (G, P)) on every within-prompt generator pair.

    Only pairs that ``truth`` orders strictly and ``scores`` measured count. Credit 1 for the
    same order, 0.5 for a tie in ``scores``, 0 for the opposite order. Returns (mean credit,
    number of pairs); (NaN, 0) when no pair counts.
    """
    s = np.asarray(scores, dtype=np.float64)
    t = np.asarray(truth, dtype=np.float64)
    if s.shape != t.shape or s.ndim != 2:
        raise ValueError(f"order_agreement needs two (G, P) arrays, got {s.shape} and {t.shape}")
    credits = []
    for m, n in generator_pairs(s.shape[0]):
        dt = t[m] - t[n]
        ds = s[m] - s[n]
        ok = np.isfinite(dt) & np.isfinite(ds) & (dt != 0)
        same = np.sign(ds[ok]) == np.sign(dt[ok])
        credits.append(np.where(ds[ok] == 0, 0.5, same.astype(np.float64)))
    flat = np.concatenate(credits) if credits else np.empty(0)
    return (float(flat.mean()), int(flat.size)) if flat.size else (float("nan"), 0)


def companion_agreement(evaluator: EvaluatorScores, companion: EvaluatorScores) -> CompanionAgreement:
    """Agreement of ``evaluator`` with ``companion``; both pivoted on the same (G, P) axes.

    Raises ``ValueError`` when the generator or prompt axes differ (pivot both evaluators'
    records together so that they share them).
    """
    if evaluator.generators != companion.generators or evaluator.prompts != companion.prompts:
        raise ValueError("the evaluator and the companion must share generator and prompt axes")
    pair, n_pairs = order_agreement(evaluator.baseline, companion.baseline)
    ev_means, co_means = generator_means(evaluator.baseline), generator_means(companion.baseline)
    probes: dict[str, tuple[float, int]] = {}
    for name, co_probe in companion.probes.items():
        ev_probe = evaluator.probes.get(name)
        if ev_probe is None:
            continue
        broke = pair_credit(companion.baseline, co_probe) == 1.0
        credit = pair_credit(evaluator.baseline, ev_probe)[broke]
        credit = credit[np.isfinite(credit)]
        probes[name] = (float(credit.mean()) if credit.size else float("nan"), int(credit.size))
    return CompanionAgreement(
        pair_agreement=pair,
        n_pairs=n_pairs,
        ranking_tau=kendall_tau_b(ev_means, co_means),
        winner=top_generator(ev_means, evaluator.generators),
        companion_winner=top_generator(co_means, companion.generators),
        probe_agreement=probes,
    )


def records_agreement(records: pd.DataFrame, companion_records: pd.DataFrame) -> CompanionAgreement:
    """:func:`companion_agreement` of the one evaluator in ``records`` with the companion
    check's records (both pivoted together, so they share generator and prompt axes)."""
    ev_ids = sorted(set(records["evaluator"]))
    co_ids = sorted(set(companion_records["evaluator"]))
    if len(ev_ids) != 1 or len(co_ids) != 1:
        raise AuditError(
            f"companion agreement needs one evaluator on each side, got {ev_ids} and {co_ids}",
            where="companion check",
        )
    pivoted = pivot_records(pd.concat([records, companion_records], ignore_index=True))
    return companion_agreement(pivoted[ev_ids[0]], pivoted[co_ids[0]])
