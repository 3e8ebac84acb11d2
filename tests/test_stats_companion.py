"""Agreement with the companion check: hand-computed values and invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from harness.stats.companion_agreement import (
    companion_agreement,
    kendall_tau_b,
    order_agreement,
)
from harness.stats.table import EvaluatorScores

NAN = float("nan")


def _scores(name: str, baseline, probes=None, gens=("a", "b", "c"), prompts=("p1", "p2")) -> EvaluatorScores:
    probes = {k: np.asarray(v, dtype=float) for k, v in (probes or {}).items()}
    return EvaluatorScores(
        evaluator=name,
        generators=gens,
        prompts=prompts,
        baseline=np.asarray(baseline, dtype=float),
        factors={},
        probes=probes,
        probe_recorded={k: np.ones(v.shape, bool) for k, v in probes.items()},
        prompt_free=False,
        n_records=0,
        n_failed=0,
    )


def test_kendall_tau_b_by_hand():
    # x = 1 2 3 4, y = 1 3 2 4: pairs C = 5, D = 1 (2<3 vs 3>2) → τ = 4/6
    assert kendall_tau_b(np.array([1, 2, 3, 4]), np.array([1, 3, 2, 4])) == pytest.approx(4 / 6)
    # a tie in x: x = 1 1 2, y = 1 2 3 → pairs (0,1) tied in x; C = 2, D = 0; n0 = 3, n1 = 1
    # τ-b = 2 / sqrt((3-1)(3-0)) = 2 / sqrt(6)
    assert kendall_tau_b(np.array([1, 1, 2]), np.array([1, 2, 3])) == pytest.approx(2 / math.sqrt(6))
    assert kendall_tau_b(np.array([1, 2, 3]), np.array([3, 2, 1])) == pytest.approx(-1.0)
    # NaN pairs dropped: leaves (1, 2) vs (5, 6)
    assert kendall_tau_b(np.array([1, NAN, 2]), np.array([5, 9, 6])) == pytest.approx(1.0)
    assert math.isnan(kendall_tau_b(np.array([1, 1]), np.array([1, 2])))
    with pytest.raises(ValueError, match="one length"):
        kendall_tau_b(np.array([1, 2]), np.array([1, 2, 3]))


def test_order_agreement_by_hand():
    # truth (G=3, P=2); prompt p1 orders a>b>c, prompt p2 ties a=b, c lowest
    truth = np.array([[3.0, 2.0], [2.0, 2.0], [1.0, 1.0]])
    # scores: p1 a>b (agree), a<c (disagree), b=c (tie → 0.5); p2 a-b not counted (truth tie),
    # a>c agree, b<c disagree
    scores = np.array([[0.5, 0.9], [0.4, 0.1], [0.6, 0.1 + 0.2]])
    credit, n = order_agreement(scores, truth)
    # p1: (a,b)=1, (a,c)=0, (b,c): 0.4 vs 0.6 → 0 ; p2: (a,c)=1 (0.9>0.3), (b,c)=0 (0.1<0.3)
    assert n == 5
    assert credit == pytest.approx((1 + 0 + 0 + 1 + 0) / 5)
    tie = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    assert order_agreement(tie, truth) == (pytest.approx(0.5), 5)
    assert math.isnan(order_agreement(scores, np.ones((3, 2)))[0])


def test_companion_agreement_by_hand():
    co = _scores("companion", [[3, 3], [2, 2], [1, 1]], {"scrambled": [[2, 3], [1, 2], [1, 0]]})
    ev = _scores("ev", [[1, 2], [2, 1], [0, 0]], {"scrambled": [[0, 3], [2, 0], [NAN, 1]]})
    out = companion_agreement(ev, co)
    # pairs at c0: p1 (a,b) 1<2 vs 3>2 → 0; (a,c) 1>0 → 1; (b,c) 2>0 → 1
    #              p2 (a,b) 2>1 → 1; (a,c) → 1; (b,c) → 1   → 5/6
    assert (out.pair_agreement, out.n_pairs) == (pytest.approx(5 / 6), 6)
    # generator means: ev a 1.5, b 1.5, c 0 ; companion 3, 2, 1 → τ-b: n0=3, tie (a,b) in ev
    # C = 2 (a>c, b>c), D = 0 → 2 / sqrt(2*3)
    assert out.ranking_tau == pytest.approx(2 / math.sqrt(6))
    assert out.winner is None and out.companion_winner == "a"
    # companion drops on scrambled at (a,p1) 3→2, (b,p1) 2→1, (c,p2) 1→0; not (a,p2), (b,p2), (c,p1)
    # evaluator at those cells: (a,p1) 1→0 drop 1, (b,p1) 2→2 tie 0.5, (c,p2) 0→1 rise 0
    credit, n = out.probe_agreement["scrambled"]
    assert n == 3 and credit == pytest.approx(1.5 / 3)


def test_companion_agreement_needs_shared_axes():
    co = _scores("companion", [[1, 2], [2, 1], [0, 0]])
    ev = _scores("ev", [[1], [2], [0]], prompts=("p1",))
    with pytest.raises(ValueError, match="share generator and prompt axes"):
        companion_agreement(ev, co)


finite = st.floats(-10, 10, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, (4, 3), elements=finite))
def test_agreement_with_itself_is_total(truth):
    credit, n = order_agreement(truth, truth)
    assert n == 0 or credit == 1.0
    reverse_credit, rn = order_agreement(-truth, truth)
    assert rn == n and (n == 0 or reverse_credit == 0.0)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, (5,), elements=finite), arrays(np.float64, (5,), elements=finite))
def test_tau_is_symmetric_bounded_and_rank_invariant(x, y):
    t = kendall_tau_b(x, y)
    if math.isnan(t):
        return
    assert -1.0 - 1e-12 <= t <= 1.0 + 1e-12
    assert kendall_tau_b(y, x) == pytest.approx(t)
    assert kendall_tau_b(2 * x, y) == pytest.approx(t)  # doubling: monotone and exact in floats
