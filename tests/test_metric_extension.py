"""A statistic added the documented way (a function and one registry row naming it as
``"module:function"``, with a threshold and a compare margin) reaches the summary, its metric
lookup (what a check reads), the card and ``compare``, and moves none of the pinned outputs: the golden compare files, the
repository's threshold table. The name is one no document mentions; the registration is
undone after each test."""

from __future__ import annotations

import json
import textwrap
import tomllib

import numpy as np
import pytest

from harness.vocab.metrics import MetricSpec, ThresholdSpec, register_metric
from tests._metric_registry import scoped_metrics

NAME = "c0_upper_tail_q9"
THRESHOLD = "max_c0_upper_tail_q9"
MODULE = textwrap.dedent(
    '''
    import numpy as np

    def upper_tail(scores):
        """90th percentile of the c0 scores over generators and prompts (score units)."""
        return float(np.nanpercentile(scores.baseline, 90))
    '''
)


@pytest.fixture
def added(tmp_path, monkeypatch):
    (tmp_path / "q9_stats_mod.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with scoped_metrics():
        register_metric(
            MetricSpec(NAME, "c0 upper tail", unit="score", harmful=+1, threshold=THRESHOLD,
                       margin=0.05, compute="q9_stats_mod:upper_tail"),
            threshold=ThresholdSpec(THRESHOLD, "max", 1e6, "90th percentile of the c0 scores"),
        )
        yield


def _records():
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    return synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, generators=3, prompts=6,
                                           templates=3, paraphrases=2, seed=4))


def test_summary_metric_lookup_and_card_carry_it(added):
    from harness.stats.audit_stats import compute_audit, summary_with_intervals
    from harness.stats.summary import EvaluatorSummary, Status
    from tests._card_inputs import card_of_stats

    records = _records()
    entries = summary_with_intervals(compute_audit(records, bootstrap=40, seed=1))["evaluators"]
    name, entry = next(iter(entries.items()))
    ok = records[(records["evaluator"] == name) & (records["factor"] == "baseline")
                 & (records["status"] == "ok")]  # fmt: skip
    want = float(np.nanpercentile(ok["score"].astype(float), 90))
    assert entry["registered"][NAME] == pytest.approx(want, rel=0.05)
    summary = EvaluatorSummary.from_entry(name, entry)
    metric = summary.metric(NAME)
    assert metric.status is Status.MEASURED and metric.threshold == THRESHOLD
    low, high = summary.interval(NAME)
    assert low <= high
    card = card_of_stats(entry, {THRESHOLD: 1e6})
    assert card["registered_metrics"][NAME]["passed"] is True


def test_compare_compares_it_and_the_golden_files_do_not_move(added):
    from harness.release.comparison import compare_records
    from tests._compare_golden import (
        JSON_FILE,
        MARKDOWN_FILE,
        assert_same,
        golden_metric_names,
        golden_outputs,
    )

    records = _records()
    evaluator = sorted(set(records["evaluator"]))[0]
    result = compare_records(records, records, baseline_evaluator=evaluator,
                             candidate_evaluator=evaluator, bootstrap=50, seed=2)
    assert NAME in {c.metric for c in result.metrics}
    want = json.loads(JSON_FILE.read_text(encoding="utf-8"))
    assert NAME not in golden_metric_names(want)
    text, markdown = golden_outputs(only=golden_metric_names(want))
    assert_same(json.loads(text), want)
    assert markdown == MARKDOWN_FILE.read_text(encoding="utf-8")
    assert NAME in golden_metric_names(json.loads(golden_outputs()[0]))  # --write would take it in


def test_the_repository_threshold_table_still_holds(added):
    from harness.checks.thresholds import (
        repeated_defaults_that_differ,
        study_table,
        study_table_toml,
    )
    from harness.core.paths import REPO_ROOT

    own = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert repeated_defaults_that_differ(own["tool"]["t3d-audit"]["thresholds"]) == {}
    assert study_table()[THRESHOLD] == 1e6
    assert f"{THRESHOLD} = " in study_table_toml()
