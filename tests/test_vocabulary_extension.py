"""A statistic and a probe registered from outside ``harness/`` reach every output.

The extension module is written to a temporary folder (not under ``harness/``) and registers
a statistic (the mean c0 score, gated by its own threshold) and a probe (every object turned
round) through the public doors, ``register_metric`` and ``register_probe``. The test then
finds both in the summary, a check, the card, the report's tables (the statistic also on its
page) and ``compare``.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from harness.vocab.metrics import METRICS, THRESHOLDS, MetricSpec, ThresholdSpec, register_metric
from harness.vocab.probes import PROBES, ProbeSpec, register_probe

EXTENSION = textwrap.dedent(
    '''
    """A project's own vocabulary: one statistic and one probe."""
    from dataclasses import replace

    import numpy as np


    def c0_mean(scores):
        """Mean c0 score over generators and prompts (score units)."""
        return float(np.nanmean(scores.baseline))


    def turned_round(scene, rng):
        """Every object turned by 180 degrees about its vertical axis."""
        return tuple(replace(o, yaw_deg=(o.yaw_deg + 180.0) % 360.0) for o in scene.objects)
    '''
)
METRIC = "c0_mean"
THRESHOLD = "min_c0_mean"
PROBE = "turned_round"


@pytest.fixture
def extension(tmp_path, monkeypatch):
    """The extension imported from a folder outside the harness, registered, then removed."""
    (tmp_path / "my_vocab_ext.py").write_text(EXTENSION, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("my_vocab_ext")
    assert "harness" not in module.__file__
    register_metric(
        MetricSpec(METRIC, "c0 mean", unit="score", harmful=-1, margin=0.01,
                   threshold=THRESHOLD, compute=module.c0_mean),
        threshold=ThresholdSpec(THRESHOLD, "min", 0.25, "mean c0 score"),
    )
    register_probe(ProbeSpec(PROBE, edit="my_vocab_ext:turned_round",
                             threshold="min_removal_discrimination", multi_object=True,
                             label="Turned round"))
    try:
        yield module
    finally:
        METRICS.unregister(METRIC)
        THRESHOLDS.unregister(THRESHOLD)
        PROBES.unregister(PROBE)
        sys.modules.pop("my_vocab_ext", None)


def _records(shift: float = 0.0) -> pd.DataFrame:
    """Synthetic records with the extension probe: the scrambled rows copied under the new
    probe's name, each 0.05 below its scene's c0 score (so it discriminates fully), every
    score moved by ``shift``."""
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    records = synthetic_records(SyntheticSpec(evaluators=2, prompt_free=0, generators=4,
                                              prompts=8, templates=4, paraphrases=2))
    records = records[~((records["factor"] == "probe") & (records["level"] == PROBE))]  # the
    # synthetic generator makes rows for every registered probe: replace them with known ones
    probe = records[(records["factor"] == "probe") & (records["level"] == "scrambled")].copy()
    probe["level"] = PROBE
    keys = ["evaluator", "generator", "prompt_id"]
    base = records[records["factor"] == "baseline"].set_index(keys)["score"]
    probe["score"] = base.reindex(pd.MultiIndex.from_frame(probe[keys])).to_numpy() - 0.05
    out = pd.concat([records, probe], ignore_index=True)
    out["score"] = out["score"] + shift
    return out


def test_the_probe_edits_a_bundled_scene(extension):
    from harness.protocol.levels import check_level
    from harness.scenes.probe_edits import apply, probe_id
    from harness.scenes.scene_source import load_scene_set

    check_level("probe", PROBE)  # a valid probe level once registered
    scene = next(s for s in load_scene_set(None).scenes if len(s.objects) > 1)
    edited = apply(scene, PROBE, seed=0)
    assert edited.id == probe_id(scene.id, PROBE, 0)
    assert [o.yaw_deg for o in edited.objects] == [(o.yaw_deg + 180.0) % 360.0 for o in scene.objects]


def test_summary_and_check_carry_the_statistic_and_the_probe(extension):
    from harness.checks.assertions import AuditCheck
    from harness.stats.audit_stats import compute_audit, summary_with_intervals
    from harness.stats.summary import EvaluatorSummary, Status

    records = _records()
    result = compute_audit(records, bootstrap=50, seed=1)
    summary = summary_with_intervals(result)
    ev_id, entry = next(iter(summary["evaluators"].items()))
    ok = records[(records["evaluator"] == ev_id) & (records["factor"] == "baseline")]
    assert entry["registered"][METRIC] == pytest.approx(float(np.nanmean(ok["score"])))
    assert entry["discrimination"][PROBE] == pytest.approx(1.0)  # every probe score is lower

    typed = EvaluatorSummary.from_entry(ev_id, entry)
    assert typed.to_entry() == entry  # the one form round-trips
    metric = typed.metric(METRIC)
    assert metric.status is Status.MEASURED and metric.threshold == THRESHOLD
    assert typed.metric("discrimination", PROBE).threshold == "min_removal_discrimination"

    outcomes = []
    check = AuditCheck(evaluator=ev_id, thresholds={THRESHOLD: 0.25}, record=outcomes.append)
    check.metric(typed, METRIC)
    assert outcomes[-1]["passed"] is True
    with pytest.raises(AssertionError, match=METRIC):
        AuditCheck(evaluator=ev_id, thresholds={THRESHOLD: 99.0}).metric(typed, METRIC)


def test_a_broken_statistic_stops_the_audit_naming_it(extension):
    from harness.core.errors import AuditError
    from harness.stats.audit_stats import compute_audit

    def broken(scores):
        raise ValueError("no")

    register_metric(MetricSpec("broken_stat", "broken", compute=broken))
    try:
        with pytest.raises(AuditError, match="broken_stat"):
            compute_audit(_records(), bootstrap=0)
    finally:
        METRICS.unregister("broken_stat")


def test_without_registrations_the_summary_has_no_registered_key():
    from harness.stats.audit_stats import compute_audit
    from tests._metric_registry import own_statistics

    with own_statistics():
        summary = compute_audit(_records_without_probe(), bootstrap=0).to_summary()
    assert all("registered" not in e for e in summary["evaluators"].values())


def _records_without_probe() -> pd.DataFrame:
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    return synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, generators=3, prompts=5,
                                           templates=3, paraphrases=2))


def test_the_card_carries_the_statistic_and_the_probe(extension):
    from harness.stats.audit_stats import compute_audit, summary_with_intervals
    from tests._card_inputs import card_of_stats

    evaluators = summary_with_intervals(compute_audit(_records(), bootstrap=20))["evaluators"]
    stats = next(iter(evaluators.values()))
    card = card_of_stats(stats, {THRESHOLD: 0.25})
    shown = card["registered_metrics"][METRIC]
    assert shown["value"] == pytest.approx(stats["registered"][METRIC])
    assert shown["threshold"] == THRESHOLD and shown["passed"] is True
    assert PROBE in str(card)  # the probe's discrimination is on the card


def test_compare_compares_the_statistic_and_the_probe(extension):
    from harness.release.comparison import compare_records

    baseline, candidate = _records(), _records(shift=-0.2)
    pairs = sorted(set(baseline["evaluator"]))
    result = compare_records(baseline, candidate, baseline_evaluator=pairs[0],
                             candidate_evaluator=pairs[0], bootstrap=200, seed=3)
    by_id = {c.metric: c for c in result.metrics}
    assert by_id[METRIC].difference == pytest.approx(-0.2)
    assert by_id[METRIC].verdict == "regression"  # lower is harmful, and 0.2 > margin 0.01
    assert f"discrimination-{PROBE}" in by_id


def test_the_tables_carry_the_statistic_and_the_probe(extension, tmp_path):
    from harness.report.writer import write_derived
    from harness.stats.audit_stats import compute_audit

    summary, _notes = write_derived(compute_audit(_records(), bootstrap=20), tmp_path, figures=False)
    value = next(iter(summary["evaluators"].values()))["registered"][METRIC]
    registered = (tmp_path / "tables" / "table_registered.csv").read_text(encoding="utf-8")
    assert METRIC in registered and f"{value:.4g}" in registered
    tables = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "tables").glob("*.md"))
    assert "Turned round" in tables  # the probe's label, from its registry row


def test_the_page_carries_the_statistic(extension, report):
    import json

    from harness.report.html.page import build_html

    path = report / "summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    for i, entry in enumerate(summary["evaluators"].values()):
        entry["registered"] = {METRIC: 0.375 + i}
    path.write_text(json.dumps(summary), encoding="utf-8")
    page = build_html(report)
    start = page.index('<section id="registered">')
    assert "<td>0.375</td>" in page[start : page.index("</section>", start)]


def test_a_cached_summary_is_not_served_once_a_statistic_is_registered(tmp_path):
    """Regression: the summary cache key names the registered statistics, so a summary
    computed before a registration is recomputed (and one computed with it is not reused
    without it); with nothing registered the key is what it always was."""
    from types import SimpleNamespace

    from harness.run.summary_cache import SummaryCache, registered_identity

    records = tmp_path / "records.csv"
    records.write_text("x\n", encoding="utf-8")
    options = SimpleNamespace(cache_dir=tmp_path / "cache")
    cache = SummaryCache(SimpleNamespace(bootstrap=0, seed=0, options=options), records=None)
    calls = []

    def compute():
        calls.append(1)
        return {"n": len(calls)}

    before = registered_identity() or []  # the harness's own statistics with a compute, if any
    assert cache.cached([records], compute) == {"n": 1}
    assert cache.cached([records], compute) == {"n": 1}  # served from the cache
    register_metric(MetricSpec("tmp_stat", "tmp", compute="my_pkg.stats:tmp"))
    try:
        assert registered_identity() == [*before, "tmp_stat=my_pkg.stats:tmp"]
        assert cache.cached([records], compute) == {"n": 2}  # recomputed with it
    finally:
        METRICS.unregister("tmp_stat")
    assert cache.cached([records], compute) == {"n": 1}


def test_the_names_example_of_writing_an_audit_runs():
    """The "Names, and your own statistics and probes" example of docs/writing-an-audit.md,
    run verbatim against a typed summary of synthetic records."""
    from harness.checks.assertions import AuditCheck
    from harness.core.paths import REPO_ROOT
    from harness.stats.audit_stats import compute_audit, summary_with_intervals
    from harness.stats.summary import EvaluatorSummary

    text = (REPO_ROOT / "docs" / "writing-an-audit.md").read_text(encoding="utf-8")
    section = text[text.index("### Names, and your own statistics and probes"):]
    code = section[section.index("```python\n") + len("```python\n"):section.index("```\n", section.index("```python"))]
    namespace: dict = {}
    exec(compile(code, "writing-an-audit.md", "exec"), namespace)
    evaluators = summary_with_intervals(compute_audit(_records_without_probe(), bootstrap=20))["evaluators"]
    ev_id, entry = next(iter(evaluators.items()))
    summary = EvaluatorSummary.from_entry(ev_id, entry)
    outcomes = []
    check = AuditCheck(evaluator=ev_id, thresholds={"peak_rho_max": 1e9, "max_sign_crossings": 1e9},
                       record=outcomes.append)
    namespace["test_lighting_rho_lower_bound"](summary, check)
    namespace["test_no_order_flips"](summary, check)
    namespace["test_peak_is_defined"](summary)
    assert [o["threshold_name"] for o in outcomes] == ["peak_rho_max", "max_sign_crossings"]
