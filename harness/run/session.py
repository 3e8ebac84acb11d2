"""The audit session: the one object holding an audit run's state (under a pytest StashKey).

:class:`AuditSession` is a façade over one module per job, each lazy (nothing loads until asked):

* :mod:`harness.run.inputs`: options → profile, selected scene set, measurement plan,
  evaluator specs, renderer (and the ``--audit-store`` score cache);
* :mod:`harness.run.record_cache`: each evaluator's records, measured once (disk-cached, so
  every worker and every rerun reuses them);
* :mod:`harness.run.summaries`: its statistics, once (disk-cached by the records' sha256);
* :mod:`harness.run.gate_thresholds`: the thresholds that can gate the run;
* :mod:`harness.run.human`: ``--audit-human`` ratings and agreement;
* :mod:`harness.run.card_facts`: card facts, run options (``manifest.json#/options``), cards;
* :mod:`harness.report.run_ids`: run ids;
* :mod:`harness.run.workers`: what a worker reports to the controller.

The session also collects per-test outcomes. Nothing here knows about xdist: the plugin hands
the session a *sink* (controller or worker) chosen in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness.checks.thresholds import Thresholds
from harness.core import cacheseal
from harness.core.paths import default_cache_dir
from harness.human.audit import HumanInput
from harness.report.run_ids import derived_run_id
from harness.run import gate_thresholds as session_thresholds
from harness.run import workers as session_workers
from harness.run.card_facts import RunCards
from harness.run.human import RunHumanRatings
from harness.run.inputs import RunInputs
from harness.run.record_cache import RecordsCache
from harness.run.searches import RunSearches
from harness.run.summaries import SummaryCache

if TYPE_CHECKING:
    import pandas as pd

    from harness.evaluators.base import EvaluatorSpec
    from harness.measure.images import MeasureStats
    from harness.measure.plan import Plan
    from harness.measure.thumbs import Thumbnails
    from harness.protocol.configurations import Profile
    from harness.render.renderer import Renderer
    from harness.scenes.sceneset import SceneSet
    from harness.stats.audit_stats import AuditResult

RESULT_PROPERTY = "t3d_audit"  # user_properties key carrying one outcome as a JSON string
WORKER_OUTPUT_KEY = "t3d_audit"
PANEL = "panel"  # pseudo-evaluator id of panel-wide tests (reversals)


@dataclass(frozen=True)
class AuditOptions:
    """Resolved options (command line > pytest ini > ``[tool.t3d-audit]`` > defaults)."""

    profile: str = "default"
    profile_file: Path | None = None  # --audit-profile-file: saved levels (and a search block) of it
    evaluators: tuple[str, ...] = ()
    scenes: Path | None = None
    report_dir: Path = Path("reports")
    cache_dir: Path = field(default_factory=default_cache_dir)  # $T3D_AUDIT_CACHE_DIR or per-user
    bootstrap: int | None = None
    seed: int = 42
    run_id: str | None = None
    probe_seed: int = 0
    device: str = "auto"
    batch_size: int = 32
    thresholds: Thresholds = field(default_factory=Thresholds)
    gate: bool = False  # release-gate mode: configuration warnings are errors
    allow_empty: bool = False  # a run whose checks all skipped may pass
    store: str | None = None  # shared store URL holding renders and scores (--audit-store)
    store_fill: str = "none"  # none: only read the store; local: compute what is missing here
    view_policy: str = "single"  # harness.protocol.configurations.VIEW_POLICIES
    human: HumanInput | None = None  # --audit-human (with its scale and dimension)




class AuditSession:
    """State of one audit run (see module docstring). Lazy: nothing loads until asked."""

    def __init__(
        self,
        options: AuditOptions,
        *,
        renderer_factory: Callable[[Path], Renderer] | None = None,
        extra_evaluators: list[EvaluatorSpec] | None = None,
        load_evaluator: Callable[[Any], Any] | None = None,
    ):
        self.options = options
        self._inputs = RunInputs(options, renderer_factory=renderer_factory, extra_evaluators=extra_evaluators)
        self._records = RecordsCache(self._inputs, load_evaluator)
        self._summaries = SummaryCache(self._inputs, self._records)
        self._human = RunHumanRatings(options.human, self._inputs, self._records, self._summaries)
        self._searches = RunSearches(self._inputs, lambda e: self.thresholds_for(e))
        self.baseline_card_ids: dict[str, str] = {}  # evaluator → previous release's card (--audit-baseline)
        self._cards = RunCards(self._inputs, self._records, self._summaries, self._human,
                               lambda: self.gate_thresholds, self.baseline_card_ids,
                               self._searches)  # fmt: skip
        self._records_files: dict[str, Path] = self._records.files  # evaluator → verified records file
        self.measure_stats: dict[str, MeasureStats] = self._records.measure_stats
        self.collected_tests: dict[str, str] = {}  # audit test key -> evaluator id (or PANEL)
        self.sink: Any = None  # where test outcomes go: set by the plugin (controller or worker)
        # cache entries discarded before this session (an earlier run in the same process)
        self._discarded_before = cacheseal.discarded_counts()

    def announce_measurements(self, write: Callable[[str], None]) -> None:
        """Where each evaluator's measurement says it starts and ends (the plugin: the
        terminal, past pytest's capture)."""
        self._records.announce = write

    # -------------------------------------------------------------------- inputs
    @property
    def named_profile(self) -> Profile:
        """The profile as declared (``--audit-profile``); it selects the scenes."""
        return self._inputs.named_profile

    @property
    def profile(self) -> Profile:
        """The profile applied to the selected scenes' kind (``RunInputs.profile``)."""
        return self._inputs.profile

    @property
    def bootstrap(self) -> int:
        return self._inputs.bootstrap

    @property
    def seed(self) -> int:
        return self._inputs.seed

    @property
    def prompts_available(self) -> int:
        """Prompts of the scene set before the profile cut it (0 until the scene set loads)."""
        return self._inputs.prompts_available

    @property
    def scene_set(self) -> SceneSet:
        return self._inputs.scene_set

    @property
    def plan(self) -> Plan:
        return self._inputs.plan

    @property
    def specs(self) -> dict[str, EvaluatorSpec]:
        """Selected evaluator specs by id (sorted): option ids/globs, else the profile's list."""
        return self._inputs.specs

    @property
    def renderer(self) -> Renderer:
        return self._inputs.renderer

    @property
    def renderer_identity(self) -> str:
        return self._inputs.renderer_identity

    def render_host(self) -> dict[str, Any] | None:
        """The rendering machine's facts for ``manifest.json#/render_host`` (``None``: no host)."""
        return self._inputs.render_host()

    def _score_cache(self) -> Any:
        """The score cache in ``--audit-store`` (``None``: the local one under the cache dir)."""
        return self._inputs.score_cache()

    def fill_command(self) -> str:
        """The command that fills ``--audit-store`` with everything this run reads."""
        return self._inputs.fill_command()

    # -------------------------------------------------------------------- records
    def records_key(self, evaluator_id: str) -> str:
        return self._records.key(evaluator_id)

    def records_file(self, evaluator_id: str) -> Path:
        """The evaluator's records, measured once across workers and runs (``RecordsCache.file``)."""
        return self._records.file(evaluator_id)

    def records_cached(self, evaluator_id: str) -> bool:
        """Whether the evaluator's records are in the cache and intact (measures nothing)."""
        return self._records.cached(evaluator_id)

    def _build_evaluator(self, spec: EvaluatorSpec) -> Any:
        return self._records.build_evaluator(spec)

    def records(self, evaluator_id: str) -> pd.DataFrame:
        """The evaluator's tidy records (always as read back from the cache file)."""
        return self._records.records(evaluator_id)

    def thumbnails(self, evaluators: Sequence[str], cache: Any = None) -> Thumbnails | None:
        """The report's thumbnails (:func:`harness.measure.thumbs.thumb_images`, through the
        thumbnail ``cache``); ``None`` when none of ``evaluators`` scored rendered images."""
        from harness.measure.thumbs import needs_renders, thumb_images

        if not needs_renders([self.specs[ev] for ev in evaluators]):
            return None
        return thumb_images(self.plan, self.renderer, cache=cache)

    # -------------------------------------------------------------------- statistics
    def summary(self, evaluator_id: str) -> dict[str, Any]:
        """The evaluator's entry of the audit summary (statistics of its own records)."""
        return self._summaries.summary(evaluator_id)

    def panel_records(self, evaluator_ids: list[str] | None = None) -> pd.DataFrame:
        return self._summaries.panel_records(evaluator_ids)

    def panel_result(self, evaluator_ids: list[str] | None = None) -> AuditResult:
        """The ``AuditResult`` over the evaluators, computed once per process."""
        return self._summaries.panel_result(evaluator_ids)

    def panel_summary(self, evaluator_ids: list[str] | None = None) -> dict[str, Any]:
        """The full summary over the evaluators (simultaneous band, reversals), disk-cached."""
        return self._summaries.panel_summary(evaluator_ids)

    @cached_property
    def gate_thresholds(self) -> Thresholds:
        """The thresholds that can gate this run (:mod:`harness.run.gate_thresholds`)."""
        return session_thresholds.gate_thresholds(self.options.thresholds, blocks=bool(self.named_profile.blocks),
                                                  human=self.options.human is not None,
                                                  search=self.named_profile.search is not None
                                                  or bool(self._searches.saved_levels),
                                                  presentation=self.presents_probes)  # fmt: skip

    @property
    def presents_probes(self) -> bool:
        """Whether the run checks the presentation probes: an audit under a protocol preset
        (``--audit-view-policy=preset:NAME``, docs/protocols.md)."""
        return str(self.options.view_policy).startswith("preset:")

    def thresholds_for(self, evaluator_id: str) -> dict[str, float]:
        return self.gate_thresholds.for_evaluator(evaluator_id)

    # -------------------------------------------------------------------- search (issue 40)
    def search(self, evaluator_id: str) -> dict[str, Any] | None:
        """The evaluator's search beyond the grid (``search --json``'s document), ``None``
        when the profile declares no search block (:mod:`harness.run.searches`)."""
        return self._searches.result(evaluator_id)

    def search_figure_inputs(self, evaluator_id: str) -> tuple[Any, Any]:
        """The report's search figures' inputs: the confirmed worst configuration's render beside
        c0's, and the flip-region sample (:meth:`harness.run.searches.RunSearches.figure_inputs`)."""
        return self._searches.figure_inputs(evaluator_id)

    @property
    def saved_levels(self) -> dict[str, dict[str, str]]:
        """``--audit-profile-file``'s saved levels of the run's profile (name → point and
        objective); empty without it."""
        return self._searches.saved_levels

    def saved_level(self, evaluator_id: str, name: str) -> dict[str, Any]:
        """Saved level ``name`` measured for the evaluator (:mod:`harness.run.searches`)."""
        return self._searches.saved_level(evaluator_id, name)

    # -------------------------------------------------------------------- human ratings
    @property
    def human_ratings(self) -> tuple[Any, str] | None:
        """``(Ratings, dimension)`` of ``--audit-human`` (validated at configure time), or ``None``."""
        return self._human.ratings

    def human_source(self) -> dict[str, Any] | None:
        """The human data's facts (file name, sha256, scale, dimension), ``None`` without it."""
        return self._human.source()

    def human_means(self) -> dict[tuple[str, str], float] | None:
        """(generator, prompt_id) → mean rating of ``--audit-human``; ``None`` without it or for
        ratings keyed by ``item_id``."""
        return self._human.means()

    def human_agreement(self, evaluator_id: str) -> dict[str, Any] | None:
        """The evaluator's agreement with ``--audit-human`` at every configuration, disk-cached;
        ``None`` without human data."""
        return self._human.agreement(evaluator_id)

    # -------------------------------------------------------------------- cards and ids
    def companion_id(self) -> str | None:
        """The run's symbolic companion evaluator (the first by id), ``None`` when it has none."""
        return self._cards.companion_id()

    def card_facts(self, evaluators: Sequence[str]) -> dict[str, Any]:
        """What the cards of ``evaluators`` state beyond the raw scores and the run options
        (``RunCards.card_facts``)."""
        return self._cards.card_facts(evaluators)

    def run_options(self, evaluators: Sequence[str]) -> dict[str, Any]:
        """``manifest.json#/options`` (``RunCards.run_options``)."""
        return self._cards.run_options(evaluators)

    def card(self, evaluator_id: str) -> dict[str, Any]:
        """The evaluator's Evaluator Configuration Card (deterministic id)."""
        return self._cards.card(evaluator_id)

    def card_id(self, evaluator_id: str) -> str:
        return self.card(evaluator_id)["card_id"]

    def run_id(self, evaluator_ids: list[str]) -> str:
        """``--audit-run-id``, else ``<profile>-<12 hex>`` derived from the run's inputs only."""
        if self.options.run_id:
            return self.options.run_id
        return derived_run_id(
            profile=self.profile.name,
            plan=self.plan.key,
            evaluators={e: self.specs[e].identity_hash for e in sorted(evaluator_ids)},
            renderer=self.renderer_identity,
            bootstrap=self.bootstrap,
            seed=self.seed,
            thresholds=self.gate_thresholds.to_dict(),
            human=self.human_source(),
            saved_levels=self.saved_levels or None,
        )

    def worker_facts(self) -> dict[str, Any]:
        """Per-worker facts for the controller (builtins only): what this process measured."""
        return session_workers.worker_facts(self.collected_tests, self._records_files, self.measure_stats,
                                            self._discarded_before)  # fmt: skip


#: where a run keeps its :class:`AuditSession` on the pytest config
SESSION_KEY = pytest.StashKey[AuditSession]()


def audit_session_of(config: pytest.Config) -> AuditSession:
    """The run's :class:`AuditSession`."""
    return config.stash[SESSION_KEY]
