"""compute_audit on constructed record tables: Table 10, reversals, failures, summary keys."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from harness.core.errors import RecordsError
from harness.stats.audit_stats import compute_audit
from harness.stats.synthetic import SyntheticSpec, synthetic_records
from harness.stats.table import pivot_records

SHA = "0" * 64


def _frame(rows: list[tuple]) -> pd.DataFrame:
    """rows: (evaluator, generator, prompt_id, factor, level, score[, caption])."""
    out = []
    for r in rows:
        ev, g, p, f, lv, s = r[:6]
        cap = r[6] if len(r) > 6 else f"caption {p}"
        ok = np.isfinite(s)
        out.append(
            {
                "evaluator": ev,
                "generator": g,
                "prompt_id": p,
                "scene_sha256": SHA,
                "factor": f,
                "level": lv,
                "caption": cap,
                "score": s,
                "status": "ok" if ok else "failed",
                "error": "" if ok else "boom",
            }
        )
    return pd.DataFrame(out)


def _table10_records() -> pd.DataFrame:
    from tests._probe_pairs import table10_pairs

    intact, scrambled = table10_pairs()
    rows = []
    for k in range(300):
        g, p = f"g{k // 50}", f"p{k % 50:02d}"
        rows.append(("gpt", g, p, "baseline", "c0", intact[k]))
        rows.append(("gpt", g, p, "probe", "scrambled", scrambled[k]))
    return _frame(rows)


def test_table_10_from_records():
    result = compute_audit(_table10_records(), bootstrap=300, seed=42)
    ev = result.evaluators["gpt"]
    out = ev.probes["scrambled"].outcome
    assert (out.drops, out.ties, out.rises, out.n_zero) == (124, 77, 99, 23)
    assert round(100 * out.strict_drop, 1) == 41.3
    assert round(100 * out.discrimination, 1) == 54.2
    assert [round(100 * b, 1) for b in out.sensitivity_bounds] == [49.7, 57.3]
    lo, hi = ev.probes["scrambled"].ci["discrimination"]
    assert lo < out.discrimination < hi
    assert result.to_summary()["evaluators"]["gpt"]["discrimination"]["scrambled"] == pytest.approx(
        162.5 / 300
    )


def _reversal_records(gap: float, noise: float, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    means = {"0": (10.0, 10.0 - gap, 0.0), "90": (10.0 - gap, 10.0, 0.0)}
    for p in range(20):
        pid = f"p{p:02d}"
        for g in range(3):
            rows.append(("e", f"g{g}", pid, "baseline", "c0", means["0"][g] + rng.normal(0, noise)))
            for lv, mu in means.items():
                rows.append(("e", f"g{g}", pid, "pitch", lv, mu[g] + rng.normal(0, noise)))
    return _frame(rows)


def test_planted_reversal_is_confirmed():
    result = compute_audit(_reversal_records(gap=5.0, noise=0.1), bootstrap=400, seed=42)
    assert result.to_summary()["reversals"] == {"descriptive": 1, "pointwise": 1, "simultaneous": 1}
    kinds = [r.kind for r in result.reversals.instances]
    assert kinds == ["pointwise", "simultaneous"]  # one instance each: unordered winner pairs
    r = result.reversals.instances[0]
    assert (r.winner1, r.winner2, r.level1, r.level2) == ("g0", "g1", "0", "90")
    assert r.ci1[0] > 0 > r.ci2[1]
    assert r.band1[0] > 0 > r.band2[1]
    assert result.reversals.instances[1].ci1 == r.band1


def test_weak_reversal_is_only_descriptive():
    result = compute_audit(_reversal_records(gap=0.05, noise=2.0, seed=3), bootstrap=400, seed=42)
    counts = result.to_summary()["reversals"]
    assert counts["simultaneous"] == 0
    assert result.band.contrasts == 15 // 5 * 3  # 3 pairs x (baseline + 2 pitch levels)


DESIGN_EVALUATOR_KEYS = {
    "dispersion",
    "rho",
    "template_rho",
    "peak_rho",
    "peak_rho_ci",
    "kendall_w",
    "top1_count",
    "min_w",
    "max_top1",
    "best_view_inflation",
    "discrimination",
    "content_accuracy",
    "envelopes",
    "logo_peak_rho_range",
    "failed",
    "failed_share",
}


@pytest.fixture(scope="module")
def synthetic():
    spec = SyntheticSpec(evaluators=2, prompt_free=1, prompts=8, templates=12, failure_rate=0.01)
    return synthetic_records(spec)


def test_summary_has_exactly_the_design_keys(synthetic):
    result = compute_audit(synthetic, bootstrap=100, seed=42)
    summary = result.to_summary()
    assert set(summary) == {"evaluators", "simultaneous", "reversals"}
    assert set(summary["simultaneous"]) == {"q95", "contrasts", "B", "seed"}
    assert set(summary["reversals"]) == {"descriptive", "pointwise", "simultaneous"}
    for ev in summary["evaluators"].values():
        # with the bootstrap on; the built-in protocol movement with its headline interval
        assert set(ev) == DESIGN_EVALUATOR_KEYS | {"confirmation", "registered", "intervals"}
        assert set(ev["registered"]) == {"movement", "peak_movement"} and set(ev["intervals"]) == {"peak_movement"}
        assert set(ev["envelopes"]) == {"strict", "sign_crossing", "tie_boundary", "stable_winner"}
        assert "paraphrase" not in ev["kendall_w"]
    json.dumps(summary, allow_nan=False)  # strict JSON: undefined values are null
    for ev in compute_audit(synthetic, bootstrap=0, seed=42).to_summary()["evaluators"].values():
        assert set(ev) == DESIGN_EVALUATOR_KEYS | {"registered"}  # no draws: no confirmed level, no interval


def test_failures_are_excluded_and_counted(synthetic):
    result = compute_audit(synthetic, bootstrap=0, seed=42)
    failed = synthetic[synthetic["status"] == "failed"].groupby("evaluator").size()
    summary = result.to_summary()
    for name, n in failed.items():
        assert summary["evaluators"][name]["failed"] == n
    assert result.n_failed == int(failed.sum()) > 0


def test_prompt_free_control_stays_out_of_the_family(synthetic):
    result = compute_audit(synthetic, bootstrap=50, seed=42)
    tables = pivot_records(synthetic)
    assert [k for k, t in tables.items() if t.prompt_free] == ["iqa2"]
    assert result.alignment == ("eval0", "eval1")
    per_eval = 15 * len(tables["eval0"].shared_protocols()[0])
    assert result.band.contrasts == 2 * per_eval
    assert set(result.reversals.descriptive) == {"eval0", "eval1"}
    assert "template" not in result.evaluators["iqa2"].rho


def test_same_seed_same_summary_and_additive_shift(synthetic):
    a = compute_audit(synthetic, bootstrap=60, seed=7).to_summary()
    b = compute_audit(synthetic, bootstrap=60, seed=7).to_summary()
    assert a == b
    shifted = synthetic.assign(score=synthetic["score"] + 3.0)
    env_a = {k: v["envelopes"] for k, v in a["evaluators"].items()}
    env_s = {k: v["envelopes"] for k, v in compute_audit(shifted, bootstrap=0).to_summary()["evaluators"].items()}
    assert env_a == env_s


def test_records_errors():
    good = _table10_records()
    with pytest.raises(RecordsError, match="missing columns"):
        compute_audit(good.drop(columns=["status"]), bootstrap=0)
    with pytest.raises(RecordsError, match="duplicate measurement"):
        compute_audit(pd.concat([good, good.iloc[:1]]), bootstrap=0)
    bad = good.copy()
    bad.loc[0, "status"] = "maybe"
    with pytest.raises(RecordsError, match="neither"):
        compute_audit(bad, bootstrap=0)
    with pytest.raises(RecordsError, match="no baseline"):
        compute_audit(good[good["factor"] != "baseline"], bootstrap=0)


def test_planted_generator_order_is_recovered():
    """No interaction and tiny noise: every level shift is common to all generators, so by
    Eq. 1 the margins never move in sign — every pair strictly ordered, gen0 stable winner."""
    spec = SyntheticSpec(evaluators=1, prompt_free=0, prompts=5, templates=8, render_levels=3,
                         paraphrases=3, interaction_sd=0.0, noise_sd=1e-3, quality_step=1.0,
                         probe_drop=(5.0, 5.0, 5.0, 5.0), seed=11)
    result = compute_audit(synthetic_records(spec), bootstrap=0)
    ev = result.evaluators["eval0"]
    assert ev.envelopes.counts() == {"strict": 15, "sign_crossing": 0, "tie_boundary": 0}
    assert ev.stable_winner == "gen0"
    assert all(w == pytest.approx(1.0) for w in ev.kendall_w.values())
    assert ev.max_top1 == 1
    assert ev.content_accuracy > 0.95
    assert result.reversals.counts()["descriptive"] == 0
