"""The audit session: the one object holding an audit run's state (under a pytest StashKey).

:class:`AuditSession` owns one part per job, each lazy (nothing loads until asked), and
callers use the parts directly (the session forwards nothing):

* ``inputs`` (:mod:`harness.run.inputs`): options → profile, selected scene set, measurement plan,
  evaluator specs, renderer (and the ``--audit-store`` score cache);
* ``record_cache`` (:mod:`harness.run.record_cache`): each evaluator's records, measured once (disk-cached, so
  every worker and every rerun reuses them);
* ``summary_cache`` (:mod:`harness.run.summary_cache`): its statistics, once (disk-cached by the records' sha256);
* :mod:`harness.run.gate_thresholds`: the thresholds that can gate the run;
* ``human`` (:mod:`harness.run.human`): ``--audit-human`` ratings and agreement;
* ``searches`` (:mod:`harness.run.searches`): the profile's search beyond the grid;
* ``repeatability`` (:mod:`harness.run.repeatability`): each evaluator's repeatability check, once;
* ``cards`` (:mod:`harness.run.card_facts`): card facts, run options (``manifest.json#/options``), cards;
* :mod:`harness.report.run_ids`: run ids (:meth:`AuditSession.run_id`);
* :mod:`harness.run.workers`: what a worker reports to the controller.

What a finished run produced, for the report, is a typed
:class:`harness.report.run_result.RunResult` (:func:`harness.run.outputs.run_result`). The
session also collects per-test outcomes. Nothing here knows about xdist: the plugin hands
the session a *sink* (controller or worker) chosen in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness.checks.thresholds import Thresholds
from harness.core import cacheseal
from harness.report.run_ids import derived_run_id
from harness.run import gate_thresholds as session_thresholds
from harness.run import workers as session_workers
from harness.run.card_facts import RunCards
from harness.run.human import RunHumanRatings
from harness.run.inputs import RunInputs
from harness.run.options import AuditOptions
from harness.run.record_cache import RecordsCache
from harness.run.repeatability import RunRepeatability
from harness.run.searches import RunSearches
from harness.run.summary_cache import SummaryCache

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec
    from harness.render.renderer import Renderer

RESULT_PROPERTY = "t3d_audit"  # user_properties key carrying one outcome as a JSON string
WORKER_OUTPUT_KEY = "t3d_audit"
CLAIM_PROPERTY = "t3d_audit_claim"  # user_properties key carrying one audit_claim request (JSON)
PANEL = "panel"  # pseudo-evaluator id of panel-wide tests (reversals)


class AuditSession:
    """State of one audit run (see module docstring). Lazy: nothing loads until asked.

    Its parts are public and used directly (``session.inputs.plan``,
    ``session.record_cache.records(ev)``, ``session.cards.card(ev)``); the session itself
    computes only what spans them: the gate thresholds, the run id and the worker facts.
    """

    def __init__(
        self,
        options: AuditOptions,
        *,
        renderer_factory: Callable[[Path], Renderer] | None = None,
        extra_evaluators: list[EvaluatorSpec] | None = None,
        load_evaluator: Callable[[object], object] | None = None,
    ):
        self.options = options
        self.inputs = RunInputs(options, renderer_factory=renderer_factory, extra_evaluators=extra_evaluators)
        self.record_cache = RecordsCache(self.inputs, load_evaluator)
        self.summary_cache = SummaryCache(self.inputs, self.record_cache)
        self.human = RunHumanRatings(options.human, self.inputs, self.record_cache, self.summary_cache)
        self.repeatability = RunRepeatability(self.inputs, self.record_cache)
        self.searches = RunSearches(self.inputs, lambda e: self.gate_thresholds.for_evaluator(e))
        self.baseline_card_ids: dict[str, str] = {}  # evaluator → previous release's card (--audit-baseline)
        self.cards = RunCards(self.inputs, self.record_cache, self.summary_cache, self.human,
                              lambda: self.gate_thresholds, self.baseline_card_ids,
                              self.searches, self.repeatability)  # fmt: skip
        self.collected_tests: dict[str, str] = {}  # audit test key -> evaluator id (or PANEL)
        self.sink: object = None  # where test outcomes go: set by the plugin (controller or worker)
        # cache entries discarded before this session (an earlier run in the same process)
        self.discarded_before = cacheseal.discarded_counts()

    @cached_property
    def gate_thresholds(self) -> Thresholds:
        """The thresholds that can gate this run (:mod:`harness.run.gate_thresholds`)."""
        return session_thresholds.gate_thresholds(self.options.thresholds, blocks=bool(self.inputs.named_profile.blocks),
                                                  human=self.options.human is not None,
                                                  search=self.inputs.named_profile.search is not None
                                                  or bool(self.searches.saved_levels),
                                                  presentation=self.presents_probes)  # fmt: skip

    @property
    def presents_probes(self) -> bool:
        """Whether the run checks the presentation probes: an audit under a protocol preset
        (``--audit-view-policy=preset:NAME``, docs/protocols.md)."""
        return str(self.options.view_policy).startswith("preset:")

    def run_id(self, evaluator_ids: Sequence[str]) -> str:
        """``--audit-run-id``, else ``<profile>-<12 hex>`` derived from the run's inputs only."""
        if self.options.run_id:
            return self.options.run_id
        inputs = self.inputs
        return derived_run_id(
            profile=inputs.profile.name,
            plan=inputs.plan.key,
            evaluators={e: inputs.specs[e].identity_hash for e in sorted(evaluator_ids)},
            renderer=inputs.renderer_identity,
            bootstrap=inputs.bootstrap,
            seed=inputs.seed,
            thresholds=self.gate_thresholds.to_dict(),
            human=self.human.source(),
            saved_levels=self.searches.saved_levels or None,
        )

    def worker_facts(self) -> dict[str, object]:
        """Per-worker facts for the controller (builtins only): what this process measured."""
        return session_workers.worker_facts(self.collected_tests, self.record_cache.files,
                                            self.record_cache.measure_stats, self.discarded_before)  # fmt: skip


#: where a run keeps its :class:`AuditSession` on the pytest config
SESSION_KEY = pytest.StashKey[AuditSession]()


def audit_session_of(config: pytest.Config) -> AuditSession:
    """The run's :class:`AuditSession`."""
    return config.stash[SESSION_KEY]
