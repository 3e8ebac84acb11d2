"""Everything an audit file needs, from one import: ``from harness.audit_api import ...``.

An audit file is an ordinary pytest module that takes the plugin's fixtures
(``audit_summary``: :class:`EvaluatorSummary`, ``audit_panel_summary``: :class:`PanelSummary`,
``audit_check``: :class:`AuditCheck`, ``audit_thresholds``: ``dict[str, float]``) and checks
statistics by name::

    from harness.audit_api import PEAK_RHO, RHO, Bound, PITCH

    def test_pitch_rho(audit_check, audit_summary):
        audit_check.metric(audit_summary, RHO, PITCH, bound=Bound.LOWER)

    def test_peak(audit_summary):
        assert audit_summary.peak_rho is None or audit_summary.peak_rho < 5

The names are the registries' (``harness.vocab``): a metric, threshold, factor or probe
constant here is the string the summary, checks, cards and reports use. A project's own
statistic or probe registers through :func:`register_metric` / :func:`register_probe`
(in its ``conftest.py`` or a plugin) and is then computed, checked, carded, reported and
compared like the study's.
"""

from __future__ import annotations

from harness.checks.assertions import AuditCheck, Bound, CheckSkipped, Outcome
from harness.stats.summary import (
    BlockSummary,
    EnvelopeCounts,
    EvaluatorSummary,
    Interval,
    Metric,
    MetricError,
    PanelSummary,
    Status,
)
from harness.vocab.factors import (
    BACKGROUND,
    FOCAL_LENGTH,
    LIGHTING,
    PARAPHRASE,
    PITCH,
    RESOLUTION,
    TEMPLATE,
    YAW,
    FactorSpec,
)
from harness.vocab.metrics import (
    BEST_VIEW_INFLATION,
    BLOCK_SIGN_CROSSINGS,
    CONTENT_ACCURACY,
    DISCRIMINATION,
    DISPERSION,
    ENVELOPES,
    FAILED_SHARE,
    INTERACTION_SHARE,
    KENDALL_W,
    MAX_BEST_VIEW_INFLATION,
    MAX_BLOCK_SIGN_CROSSINGS,
    MAX_CONFIRMED_REVERSALS,
    MAX_FAILED_SHARE,
    MAX_INTERACTION_SHARE,
    MAX_REPEATABILITY_DIFF,
    MAX_SIGN_CROSSINGS,
    MAX_TOP1,
    MAX_TOP1_COUNT,
    MIN_KENDALL_W,
    MIN_PRESENTATION_AGREEMENT,
    MIN_REMOVAL_DISCRIMINATION,
    MIN_SCRAMBLE_DISCRIMINATION,
    MIN_STRICT_PAIRS,
    MIN_W,
    MIN_WORST_OBJECTS_DISCRIMINATION,
    PEAK_RHO,
    PEAK_RHO_MAX,
    PRESENTATION_AGREEMENT,
    REPEATABILITY,
    REVERSALS,
    RHO,
    SIGN_CROSSINGS,
    STRICT_PAIRS,
    TEMPLATE_RHO,
    TOP1_COUNT,
    MetricSpec,
    ThresholdSpec,
    register_metric,
    register_threshold,
)
from harness.vocab.probes import (
    BIGGEST_ONLY,
    KEEP_HALF,
    SCRAMBLED,
    WORST_OBJECTS,
    ProbeSpec,
    register_probe,
)

__all__ = [  # noqa: RUF022 -- grouped by what an audit author looks for
    # checks
    "AuditCheck", "Bound", "CheckSkipped", "Outcome",
    # the typed summary
    "BlockSummary", "EnvelopeCounts", "EvaluatorSummary", "Interval", "Metric", "MetricError",
    "PanelSummary", "Status",
    # metric names
    "BEST_VIEW_INFLATION", "BLOCK_SIGN_CROSSINGS", "CONTENT_ACCURACY", "DISCRIMINATION",
    "DISPERSION", "ENVELOPES", "FAILED_SHARE", "INTERACTION_SHARE", "KENDALL_W", "MAX_TOP1",
    "MIN_W", "PEAK_RHO", "PRESENTATION_AGREEMENT", "REPEATABILITY", "REVERSALS", "RHO", "SIGN_CROSSINGS", "STRICT_PAIRS", "TEMPLATE_RHO",
    "TOP1_COUNT",
    # threshold names
    "MAX_BEST_VIEW_INFLATION", "MAX_BLOCK_SIGN_CROSSINGS", "MAX_CONFIRMED_REVERSALS",
    "MAX_FAILED_SHARE", "MAX_INTERACTION_SHARE", "MAX_REPEATABILITY_DIFF", "MAX_SIGN_CROSSINGS", "MAX_TOP1_COUNT",
    "MIN_KENDALL_W", "MIN_PRESENTATION_AGREEMENT", "MIN_REMOVAL_DISCRIMINATION", "MIN_SCRAMBLE_DISCRIMINATION",
    "MIN_STRICT_PAIRS", "MIN_WORST_OBJECTS_DISCRIMINATION", "PEAK_RHO_MAX",
    # factor and probe names
    "BACKGROUND", "FOCAL_LENGTH", "LIGHTING", "PARAPHRASE", "PITCH", "RESOLUTION", "TEMPLATE",
    "YAW", "BIGGEST_ONLY", "KEEP_HALF", "SCRAMBLED", "WORST_OBJECTS",
    # extending the vocabulary
    "FactorSpec", "MetricSpec", "ProbeSpec", "ThresholdSpec", "register_metric", "register_probe",
    "register_threshold",
]
