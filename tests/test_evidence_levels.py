"""Two evidence levels for every check: descriptive (the point estimate against the threshold)
and confirmed (the check's interval at the evaluator's family-wise level beyond it), which one
gates, and the family-wise false-fail rate of the confirmed level."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.checks.evidence import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_CONFIRMABLE,
    check_evidence,
    confirmed_level,
    evidence_summary,
    gated_pass,
)
from harness.stats.confirmation import FamilyConfirmation, family_confirmation, family_level
from harness.stats.intervals import DEFAULT_POLICY
from tests._audit_project import make_project, report_dir, run_audit

pytest_plugins = ["pytester"]


def _family(n_blocks: int, rho: tuple[float, float]) -> FamilyConfirmation:
    return FamilyConfirmation(14, family_level(14), n_blocks, DEFAULT_POLICY.min_blocks(family_level(14)),
                              {"rho": {"pitch": rho}, "peak_rho": {"": (0.5, 0.9)}})  # fmt: skip


def test_the_family_level_and_its_minimum_prompts_by_hand():
    assert family_level(14) == pytest.approx(1 - 0.1 / 14)
    # the most extreme of P resampled blocks, 2^-P, must be at most the one-sided error 0.05/14
    assert DEFAULT_POLICY.min_blocks(family_level(14)) == 9  # 2^-9 = 0.00195 <= 0.00357 < 2^-8
    assert DEFAULT_POLICY.min_blocks(family_level(1)) == 5  # one member: one-sided 5 %, 2^-5 <= 0.05


@pytest.mark.parametrize(("op", "ci", "status"), [
    ("<=", (1.2, 3.0), FAILS), ("<=", (0.2, 0.9), HOLDS), ("<=", (0.8, 1.4), INCONCLUSIVE),
    (">=", (0.1, 0.4), FAILS), (">=", (0.6, 0.9), HOLDS), (">=", (0.3, 0.7), INCONCLUSIVE),
])  # fmt: skip
def test_the_confirmed_level_by_hand(op, ci, status):
    threshold = 1.0 if op == "<=" else 0.5
    level = confirmed_level(op, threshold, _family(12, ci), "rho", "pitch")
    assert level["status"] == status and level["interval"] == list(ci) and level["family"] == 14


def test_below_the_minimum_or_without_an_interval_nothing_is_confirmable():
    few = confirmed_level("<=", 1.0, _family(6, (1.2, 3.0)), "rho", "pitch")
    assert few["status"] == NOT_CONFIRMABLE
    assert few["reason"] == "not confirmable: 6 prompts (a family of 14 interval checks needs 9)"
    absent = confirmed_level("<=", 1.0, _family(12, (1.2, 3.0)), "kendall_w", "pitch")
    assert absent["status"] == NOT_CONFIRMABLE and "interval" not in absent
    assert confirmed_level("<=", 1.0, None, "rho", "pitch")["status"] == NOT_CONFIRMABLE


def test_which_level_gates():
    inside = {"interval": [0.5, 2.0]}
    assert gated_pass("descriptive", False, {"status": INCONCLUSIVE, **inside}) is False
    assert gated_pass("confirmed", False, {"status": INCONCLUSIVE, **inside}) is True
    assert gated_pass("confirmed", True, {"status": FAILS, **inside}) is False
    assert gated_pass("confirmed", False, {"status": NOT_CONFIRMABLE, **inside}) is True
    # nothing to confirm (no interval in the family): the point estimate still gates
    assert gated_pass("confirmed", False, {"status": NOT_CONFIRMABLE, "reason": "no interval"}) is False
    assert check_evidence("confirmed") == "confirmed"
    with pytest.raises(ValueError, match="must be one of descriptive, confirmed"):
        check_evidence("strict")


def test_the_confirmation_round_trips_through_summary_json():
    found = _family(12, (1.2, 3.0))
    back = FamilyConfirmation.from_entry(json.loads(json.dumps(found.to_entry())))
    assert back.interval("rho", "pitch") == (1.2, 3.0) and back.interval("peak_rho") == (0.5, 0.9)
    assert (back.family, back.n_blocks, back.min_blocks, back.confirmable) == (14, 12, 9, True)
    assert FamilyConfirmation.from_entry(None) is None


def _on_the_thresholds(rng: np.random.Generator, prompts: int, members: int, draws: int) -> list:
    """An evaluator sitting exactly on every threshold: each member a mean of per-prompt values
    whose true mean is the threshold 1.0 (skewed: exponential per-prompt effects), members
    correlated through a shared prompt effect; draws by resampling prompts."""
    shared = rng.exponential(1.0, prompts)
    values = 0.5 * shared[None, :] + 0.5 * rng.exponential(1.0, (members, prompts))  # mean 1.0
    idx = rng.integers(0, prompts, (draws, prompts))
    return [("rho", f"f{j}", values[j][idx].mean(axis=1)) for j in range(members)]


def _false_fails(prompts: int, seeds: int, pointwise: bool) -> int:
    rng = np.random.default_rng(7)
    fails = 0
    for _ in range(seeds):
        members = _on_the_thresholds(rng, prompts, 12, 400)
        if pointwise:  # every member at its own 95 % level: 12 chances
            fails += any(np.quantile(d, 0.025) > 1.0 for _, _, d in members)
            continue
        family = family_confirmation(members, prompts)
        fails += any(confirmed_level("<=", 1.0, family, "rho", f"f{j}")["status"] == FAILS for j in range(12))
    return fails


def test_an_evaluator_on_every_threshold_fails_a_confirmed_check_in_at_most_5_percent_of_seeds():
    seeds = 200
    confirmed = _false_fails(12, seeds, pointwise=False)
    assert confirmed <= 0.05 * seeds + 2 * np.sqrt(0.05 * 0.95 * seeds)  # nominal + 2 Monte Carlo SE
    # the defect it replaces: gating each check on its own pointwise interval fails far more often
    assert _false_fails(12, seeds, pointwise=True) > 2 * max(confirmed, 5)


def test_the_summary_line_counts_both_levels():
    checks = [
        {"evidence": "descriptive", "descriptive": FAILS, "confirmed": {"status": FAILS, "interval": [2, 3]}},
        {"evidence": "descriptive", "descriptive": FAILS,
         "confirmed": {"status": NOT_CONFIRMABLE, "interval": [0, 3], "reason": "not confirmable: 6 prompts (x)"}},
        {"evidence": "descriptive", "descriptive": HOLDS, "confirmed": {"status": NOT_CONFIRMABLE, "reason": "none"}},
    ]  # fmt: skip
    assert evidence_summary(checks) == (
        "evidence: descriptive gated the checks; 2 of 3 fail on descriptive evidence, 1 of them confirmed; "
        "2 checks have a confirmation interval, 1 of them not confirmable (not confirmable: 6 prompts (x))")


def test_an_audit_records_both_levels_and_gates_on_the_one_chosen(pytester):
    """The smoke project (2 prompts): on descriptive evidence the strict threshold fails; on
    confirmed evidence the same check is recorded failing descriptively, not confirmable, and
    does not fail the run; a bad value is a usage error."""
    make_project(pytester, extra='[tool.t3d-audit.thresholds.overrides]\n"tiny-grid" = { peak_rho_max = 0.001 }\n')
    described = run_audit(pytester, "d", "-n", "0", "-k", "test_rho and tiny-grid")
    assert described.ret == pytest.ExitCode.TESTS_FAILED, described.stdout.str()[-2000:]
    described.stdout.fnmatch_lines(["evidence: descriptive gated the checks; *"])
    confirmed = run_audit(pytester, "c", "-n", "0", "-k", "test_rho and tiny-grid", "--audit-evidence=confirmed")
    assert confirmed.ret == pytest.ExitCode.OK, confirmed.stdout.str()[-2000:]
    doc = json.loads((report_dir(pytester.path, "c") / "results.json").read_text())
    checks = [c for r in doc["results"] for c in r["checks"]]
    assert checks and all(c["evidence"] == "confirmed" for c in checks)
    assert any(c["descriptive"] == "fails" for c in checks)
    assert all(c["confirmed"]["status"] == "not confirmable" and c["passed"] for c in checks if "interval" in c["confirmed"])
    bad = run_audit(pytester, "b", "-n", "0", "--audit-evidence=strict")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--audit-evidence must be one of descriptive, confirmed*"])


def test_the_card_carries_the_confirmed_level_and_validates():
    from tests._card_inputs import card_of_stats, stats_entry

    entry = stats_entry() | {"confirmation": _family(12, (1.2, 3.0)).to_entry()}
    card = card_of_stats(entry, {"peak_rho_max": 1.0})  # validated against the schema there
    found = card["score_uncertainty"]["confirmation"]
    assert found["intervals"]["rho"]["pitch"] == [1.2, 3.0] and found["confirmable"] is True
    assert "confirmation" not in card_of_stats(stats_entry(), {"peak_rho_max": 1.0})["score_uncertainty"]
