"""The audit session: the one object holding an audit run's state (under a pytest StashKey).

It resolves options into a profile, a selected scene set, a measurement plan and evaluator
specs; computes each evaluator's records once (disk-cached, so every worker and every rerun
reuses them) and its statistics once (disk-cached by the records' sha256); builds cards; and
collects per-test outcomes. Nothing here knows about xdist: the plugin hands the session a
*sink* (controller or worker) chosen in one place.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import cacheseal
from harness.errors import AuditError
from harness.fileio import write_bytes_atomic
from harness.hashing import sha256_file, sha256_json
from harness.human_audit import HumanInput
from harness.paths import default_cache_dir
from harness.render.renderer import Renderer, default_renderer
from harness.thresholds import Thresholds

if TYPE_CHECKING:
    import pandas as pd

    from harness.evaluators.base import EvaluatorSpec
    from harness.measure_images import MeasureStats
    from harness.measure_plan import Plan
    from harness.protocol import Profile
    from harness.scenes.sceneset import SceneSet
    from harness.stats.audit_stats import AuditResult

RESULT_PROPERTY = "t3d_audit"  # user_properties key carrying one outcome as a JSON string
WORKER_OUTPUT_KEY = "t3d_audit"
PANEL = "panel"  # pseudo-evaluator id of panel-wide tests (reversals)


@dataclass(frozen=True)
class AuditOptions:
    """Resolved options (command line > pytest ini > ``[tool.t3d-audit]`` > defaults)."""

    profile: str = "default"
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
    view_policy: str = "single"  # harness.protocol.VIEW_POLICIES
    human: HumanInput | None = None  # --audit-human (with its scale and dimension)


def _stats_code_hash() -> str:
    """Hash of the statistics sources: cached summaries are invalid once the maths changes."""
    import harness.stats as stats_pkg

    root = Path(stats_pkg.__file__).parent
    return sha256_json({p.name: sha256_file(p) for p in sorted(root.glob("*.py"))})


def _records_ok(path: Path, key: str, *, discard: bool = False) -> bool:
    """Whether the records CSV at ``path`` matches its sidecar seal for ``key``.

    With ``discard`` (call it holding the entry's lock) a bad file and its seal are deleted
    and reported; a missing file is just a miss.
    """
    if not path.is_file():
        return False
    try:
        cacheseal.check_sidecar(path, key)
    except cacheseal.CorruptEntry as exc:
        if discard:
            path.unlink(missing_ok=True)
            cacheseal.sidecar(path).unlink(missing_ok=True)
            cacheseal.discarded("records", path, str(exc))
        return False
    return True


def _read_summary(path: Path, key: str, *, discard: bool = False) -> dict[str, Any] | None:
    """The summary sealed in ``path`` for ``key``; ``None`` if absent or bad (see above)."""
    if not path.is_file():
        return None
    try:
        found = json.loads(cacheseal.read_sealed(path, key))
        if not isinstance(found, dict):
            raise cacheseal.CorruptEntry("summary is not a JSON object")
    except (cacheseal.CorruptEntry, ValueError) as exc:
        if discard:
            path.unlink(missing_ok=True)
            cacheseal.discarded("summaries", path, str(exc))
        return None
    return found


def derived_run_id(
    *,
    profile: str,
    plan: str,
    evaluators: dict[str, str],
    renderer: str,
    bootstrap: int,
    seed: int,
    thresholds: dict[str, Any],
    human: dict[str, Any] | None = None,
) -> str:
    """``<profile>-<12 hex>`` over the run's inputs (``evaluators``: id -> identity hash;
    ``thresholds``: ``Thresholds.to_dict()``; ``human``: the human data's source facts, only
    with ``--audit-human``, so runs without it keep their ids); ``validate --deep`` re-derives
    it from a manifest."""
    inputs: dict[str, Any] = {
        "profile": profile,
        "plan": plan,
        "evaluators": dict(sorted(evaluators.items())),
        "renderer": renderer,
        "bootstrap": bootstrap,
        "seed": seed,
        "thresholds": thresholds,
    }
    if human is not None:
        inputs["human"] = human
    digest = sha256_json(inputs)
    return f"{profile}-{digest[:12]}"


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
        self._renderer_factory = renderer_factory or default_renderer
        self._extra = list(extra_evaluators or [])
        self._load_evaluator = load_evaluator
        self._records: dict[str, pd.DataFrame] = {}
        self._records_files: dict[str, Path] = {}
        self._summaries: dict[str, dict[str, Any]] = {}
        self._cards: dict[str, dict[str, Any]] = {}
        self._human: dict[str, dict[str, Any]] = {}
        self._panel_results: dict[tuple[str, ...], AuditResult] = {}
        self.measure_stats: dict[str, MeasureStats] = {}
        self.collected_tests: dict[str, str] = {}  # audit test key -> evaluator id (or PANEL)
        self.prompts_available = 0  # prompts of the scene set before the profile cuts it (scene_set)
        self.sink: Any = None  # where test outcomes go: set by the plugin (controller or worker)
        # cache entries discarded before this session (an earlier run in the same process)
        self._discarded_before = cacheseal.discarded_counts()
        self._store_gaps: dict[str, Exception] = {}  # evaluator → what --audit-store lacked
        self.baseline_card_ids: dict[str, str] = {}  # evaluator → previous release's card (--audit-baseline)

    # -------------------------------------------------------------------- inputs
    @cached_property
    def named_profile(self) -> Profile:
        """The profile as declared (``--audit-profile``); it selects the scenes."""
        from harness.protocol import get_profile

        return get_profile(self.options.profile)

    @cached_property
    def profile(self) -> Profile:
        """The profile applied to the selected scenes' kind (rooms: as declared; single objects:
        their own default view and caption template, ``harness.protocol.KindView``)."""
        return self.named_profile.for_scene_kind(self.scene_set.kind)

    @property
    def bootstrap(self) -> int:
        return (
            self.options.bootstrap
            if self.options.bootstrap is not None
            else self.named_profile.bootstrap
        )

    @property
    def seed(self) -> int:
        return self.options.seed

    @cached_property
    def scene_set(self) -> SceneSet:
        from harness.scenes.scene_source import load_scene_set

        full = load_scene_set(self.options.scenes, self.options.cache_dir)
        self.prompts_available = len(full.prompt_ids)  # before the profile's cut (run_notes)
        return full.select_for_profile(self.named_profile.prompts, self.named_profile.generators)

    @cached_property
    def plan(self) -> Plan:
        from harness.measure_plan import build_plan

        return build_plan(
            self.scene_set, self.profile, probe_seed=self.options.probe_seed,
            view_policy=self.options.view_policy,
        )

    @cached_property
    def specs(self) -> dict[str, EvaluatorSpec]:
        """Selected evaluator specs by id (sorted): option ids/globs, else the profile's list."""
        from harness.evaluator_selection import select_evaluators

        patterns = self.options.evaluators or tuple(self.named_profile.evaluators)
        return {s.id: s for s in select_evaluators(patterns, self._extra)}

    @cached_property
    def renderer(self) -> Renderer:
        if not self.options.store:
            return self._renderer_factory(self.options.cache_dir / "renders")
        renderer = self._renderer_factory(self.options.store)
        cache = getattr(renderer, "cache", None)
        if hasattr(cache, "read_only"):  # the Blender service on the store: read unless filling
            cache.read_only = self.options.store_fill != "local"
        return renderer

    def _score_cache(self) -> Any:
        """The score cache in ``--audit-store`` (``None``: the local one under the cache dir)."""
        if not self.options.store:
            return None
        from harness.evaluators.score_store import open_score_cache

        return open_score_cache(self.options.store, read_only=self.options.store_fill != "local")

    def fill_command(self) -> str:
        """The command that fills ``--audit-store`` with everything this run reads."""
        parts = ["t3d-audit materialize", f"--profile {self.profile.name}",
                 f"--store {self.options.store}"]  # fmt: skip
        if self.options.scenes is not None:
            parts.append(f"--scenes {self.options.scenes}")
        if self.options.evaluators:
            parts.append(f"--evaluators {','.join(self.options.evaluators)}")
        return " ".join(parts) + " [--backend ray --address auto]"

    def _check_store_complete(self, evaluator_id: str, missing_pairs: int) -> None:
        """Raise :class:`StoreIncomplete` when a read-only store lacked renders or scores."""
        from harness.store.stores import StoreIncomplete

        missing_renders = len(getattr(getattr(self.renderer, "cache", None), "missing", ()) or ())
        if not (missing_pairs or missing_renders):
            return
        what = " and ".join(
            f"{n} {noun}"
            for n, noun in ((missing_renders, "renders"), (missing_pairs, "score pairs"))
            if n
        )
        raise StoreIncomplete(
            f"the store lacks {what} that evaluator {evaluator_id} needs",
            where=self.options.store,
            hint=f"fill it with: {self.fill_command()}; or compute them on this machine with "
            "--audit-store-fill=local",
        )

    @property
    def renderer_identity(self) -> str:
        return str(getattr(self.renderer, "identity", type(self.renderer).__qualname__))

    # -------------------------------------------------------------------- records
    def records_key(self, evaluator_id: str) -> str:
        spec = self.specs[evaluator_id]
        return sha256_json(
            {"plan": self.plan.key, "evaluator": spec.identity_hash, "renderer": self.renderer_identity}
        )

    def records_file(self, evaluator_id: str) -> Path:
        """The evaluator's records, measured once across workers and runs (lock + rename).

        The CSV is sealed by ``<key>.csv.seal`` (``harness.cacheseal``); a file that fails the
        check is discarded, reported and measured again.
        """
        if evaluator_id in self._records_files:
            return self._records_files[evaluator_id]
        if evaluator_id in self._store_gaps:  # found once: every test of it reports the same
            raise self._store_gaps[evaluator_id]
        from filelock import FileLock

        from harness.measure_images import MeasureStats, measure
        from harness.records import write_records

        key = self.records_key(evaluator_id)
        path = self.options.cache_dir / "records" / f"{key}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _records_ok(path, key):
            with FileLock(str(path) + ".lock"):
                if not _records_ok(path, key, discard=True):
                    stats = self.measure_stats.setdefault(evaluator_id, MeasureStats())
                    missing_before = stats.missing_pairs
                    frame = measure(
                        self.specs[evaluator_id],
                        self.plan,
                        self.renderer,
                        cache_dir=self.options.cache_dir,
                        load_evaluator=self._build_evaluator,
                        stats=stats,
                        score_cache=self._score_cache(),
                        fill=self.options.store_fill == "local" or not self.options.store,
                    )
                    if self.options.store:
                        try:
                            self._check_store_complete(evaluator_id, stats.missing_pairs - missing_before)
                        except AuditError as exc:
                            self._store_gaps[evaluator_id] = exc
                            raise
                    write_records(frame, path)  # atomic: temp file + rename
                    write_bytes_atomic(cacheseal.sidecar(path), cacheseal.seal(key, path.read_bytes()))
        self._records_files[evaluator_id] = path
        return path

    def records_cached(self, evaluator_id: str) -> bool:
        """Whether the evaluator's records are in the cache and intact (measures nothing; a
        verified file is then what :meth:`records_file` returns, without checking it again)."""
        if evaluator_id in self._records_files:
            return True
        key = self.records_key(evaluator_id)
        path = self.options.cache_dir / "records" / f"{key}.csv"
        if not _records_ok(path, key):
            return False
        self._records_files[evaluator_id] = path
        return True

    def _build_evaluator(self, spec: EvaluatorSpec) -> Any:
        if self._load_evaluator is not None:
            return self._load_evaluator(spec)
        return spec.build(device=self.options.device, batch_size=self.options.batch_size)

    def records(self, evaluator_id: str) -> pd.DataFrame:
        """The evaluator's tidy records (always as read back from the cache file)."""
        if evaluator_id not in self._records:
            from harness.records import read_records

            self._records[evaluator_id] = read_records(self.records_file(evaluator_id))
        return self._records[evaluator_id]

    # -------------------------------------------------------------------- statistics
    def _cached_summary(
        self, files: list[Path], compute: Callable[[], dict[str, Any]], extra: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        inputs: dict[str, Any] = {
            "records": [sha256_file(f) for f in files],
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "stats": _stats_code_hash(),
        }
        if extra is not None:  # only for other documents, so summary keys stay as they were
            inputs["extra"] = extra
        key = sha256_json(inputs)
        path = self.options.cache_dir / "summaries" / f"{key}.json"
        found = _read_summary(path, key)
        if found is not None:
            return found
        from filelock import FileLock

        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            found = _read_summary(path, key, discard=True)
            if found is not None:
                return found
            summary = compute()
            # store and return what a reader gets, so every process sees identical values
            text = json.dumps(summary, sort_keys=True, allow_nan=True)
            write_bytes_atomic(path, cacheseal.sealed(key, text.encode("utf-8")))
            return json.loads(text)

    def summary(self, evaluator_id: str) -> dict[str, Any]:
        """The evaluator's entry of the audit summary (statistics of its own records)."""
        if evaluator_id not in self._summaries:
            from harness.audit_inputs import audit_result
            from harness.stats.audit_stats import summary_with_intervals

            full = self._cached_summary(
                [self.records_file(evaluator_id)],
                lambda: summary_with_intervals(
                    audit_result(self.records(evaluator_id), self.bootstrap, self.seed)
                ),
            )
            self._summaries[evaluator_id] = full["evaluators"][evaluator_id]
        return self._summaries[evaluator_id]

    def panel_records(self, evaluator_ids: list[str] | None = None) -> pd.DataFrame:
        import pandas as pd

        ids = sorted(evaluator_ids or self.specs)
        return pd.concat([self.records(e) for e in ids], ignore_index=True)

    def panel_result(self, evaluator_ids: list[str] | None = None) -> AuditResult:
        """The ``AuditResult`` over the evaluators, computed once per process."""
        from harness.audit_inputs import audit_result

        ids = tuple(sorted(evaluator_ids or self.specs))
        if ids not in self._panel_results:
            self._panel_results[ids] = audit_result(
                self.panel_records(list(ids)), self.bootstrap, self.seed
            )
        return self._panel_results[ids]

    def panel_summary(self, evaluator_ids: list[str] | None = None) -> dict[str, Any]:
        """The full summary over the evaluators (simultaneous band, reversals), disk-cached."""
        from harness.stats.audit_stats import summary_with_intervals

        ids = sorted(evaluator_ids or self.specs)
        return self._cached_summary(
            [self.records_file(e) for e in ids],
            lambda: summary_with_intervals(self.panel_result(ids)),
        )

    @cached_property
    def gate_thresholds(self) -> Thresholds:
        """The thresholds that can gate this run: without the factorial-block ones
        (``harness.thresholds.BLOCK_THRESHOLDS``) when the profile declares no blocks, so an
        OFAT-only run's id, manifest and cards do not depend on them."""
        from harness.thresholds import BLOCK_THRESHOLDS, HUMAN_THRESHOLDS

        drop = () if self.named_profile.blocks else BLOCK_THRESHOLDS
        drop += () if self.options.human is not None else HUMAN_THRESHOLDS
        return self.options.thresholds.without(drop) if drop else self.options.thresholds

    # -------------------------------------------------------------------- human ratings
    @cached_property
    def human_ratings(self) -> tuple[Any, str] | None:
        """``(Ratings, dimension)`` of ``--audit-human`` (validated at configure time), or ``None``."""
        if self.options.human is None:
            return None
        from harness.human_audit import load_ratings

        return load_ratings(self.options.human)

    def human_source(self) -> dict[str, Any] | None:
        """The human data's facts (file name, sha256, scale, dimension), ``None`` without it."""
        if self.human_ratings is None:
            return None
        from harness.human_audit import source_facts

        return source_facts(*self.human_ratings)

    def human_means(self) -> dict[tuple[str, str], float] | None:
        """(generator, prompt_id) → mean rating of ``--audit-human`` (the ``--audit-baseline``
        comparison's human metrics); ``None`` without it or for ratings keyed by ``item_id``."""
        if self.human_ratings is None:
            return None
        from harness.human_audit import scene_means

        return scene_means(*self.human_ratings)

    def human_agreement(self, evaluator_id: str) -> dict[str, Any] | None:
        """The evaluator's agreement with ``--audit-human`` at every configuration
        (:func:`harness.human_audit.evaluator_agreement`), disk-cached with the summaries;
        ``None`` without human data."""
        if self.human_ratings is None:
            return None
        if evaluator_id not in self._human:
            from harness.human_audit import evaluator_agreement

            ratings, dim = self.human_ratings
            path = self.records_file(evaluator_id)
            self._human[evaluator_id] = self._cached_summary(
                [path],
                lambda: evaluator_agreement(ratings, dim, path, evaluator_id, self.bootstrap, self.seed),
                extra={"human": ratings.sha256, "dimension": dim, "scale": str(ratings.scale),
                       "evaluator": evaluator_id},
            )
        return self._human[evaluator_id]

    def thresholds_for(self, evaluator_id: str) -> dict[str, float]:
        return self.gate_thresholds.for_evaluator(evaluator_id)

    # -------------------------------------------------------------------- cards
    def companion_id(self) -> str | None:
        """The run's symbolic companion evaluator (the first by id), ``None`` when it has none."""
        from harness.evaluators.families import has_role

        ids = sorted(e for e, s in self.specs.items() if has_role(s, "companion"))
        return ids[0] if ids else None

    def card_facts(self, evaluators: Sequence[str]) -> dict[str, Any]:
        """What the cards of ``evaluators`` state beyond the raw scores and the run options.

        Recorded in ``manifest.json`` as ``options.card_facts`` so ``t3d-audit validate --deep``
        can rebuild every card from the report alone. JSON-ready::

            {"scenes": {"dataset", "generators", "n_scenes", "n_prompts", "prompt_source",
                        "kind": "room" | "object"},
             "companion": <companion evaluator id> | None,
             "evaluators": {id: {"identity": evaluator_fields(spec, served), "judge": bool,
                                 "thresholds": {name: value},
                                 "baseline_card_id": <card id> (with --audit-baseline only)}}}
        """
        from harness.cards.assemble import NOT_REPORTED, evaluator_fields, served_models
        from harness.evaluators.families import keeps_responses

        scenes = self.scene_set
        return {
            "scenes": {
                "dataset": "t3d-audit bundled scenes"
                if self.options.scenes is None
                else f"scene set {self.options.scenes.name}",
                "generators": list(scenes.generators),
                "n_scenes": len(scenes.scenes),
                "n_prompts": len(scenes.prompt_ids),
                "kind": scenes.kind,
                "prompt_source": ", ".join(sorted({s.prompt_source for s in scenes.scenes})) or NOT_REPORTED,
                **self._factors_not_applicable_fact(),
                **self._import_conventions_fact(),
            },
            "companion": self.companion_id(),
            "evaluators": {
                ev: {
                    "identity": evaluator_fields(self.specs[ev], served_models(self.records(ev))),
                    "judge": keeps_responses(self.specs[ev]),
                    "thresholds": self.thresholds_for(ev),
                    **({"baseline_card_id": self.baseline_card_ids[ev]}
                       if ev in self.baseline_card_ids else {}),
                    **({"human_agreement": self._human_card(ev)} if self.human_ratings else {}),
                }
                for ev in sorted(evaluators)
            },
        }

    def _import_conventions_fact(self) -> dict[str, Any]:
        """``{"import_conventions": [...]}``: per distinct imported format and conventions
        (scene ``source``), e.g. ``"obj: up z, front -y, unit m (2 scenes)"``; empty for sets
        without imported object files (bundled facts unchanged)."""
        counts: dict[str, int] = {}
        for scene in self.scene_set.scenes:
            src = scene.source
            if not src:
                continue
            fmt = src.get("format", "?") + (f" {src['variant']}" if src.get("variant") else "")
            unit = src.get("unit") or f"{src.get('metres_per_unit')} m per unit"
            line = f"{fmt}: up {src.get('up')}, front {src.get('front')}, unit {unit}"
            counts[line] = counts.get(line, 0) + 1
        lines = [f"{line} ({n} scene{'s' if n != 1 else ''})" for line, n in sorted(counts.items())]
        return {"import_conventions": lines} if lines else {}

    def _factors_not_applicable_fact(self) -> dict[str, Any]:
        """``{"factors_not_applicable": {factor: n scenes}}`` when some scene has factors that
        cannot change its image (splats: lighting); empty otherwise (bundled facts unchanged)."""
        counts: dict[str, int] = {}
        for factors in self.plan.factors_not_applicable.values():
            for factor in factors:
                counts[factor] = counts.get(factor, 0) + 1
        return {"factors_not_applicable": dict(sorted(counts.items()))} if counts else {}

    def _human_card(self, evaluator_id: str) -> dict[str, Any]:
        from harness.human_audit import card_figures

        return card_figures(self.human_agreement(evaluator_id))

    def run_options(self, evaluators: Sequence[str]) -> dict[str, Any]:
        """``manifest.json#/options``: every run setting the report's numbers and cards depend on,
        with :meth:`card_facts` — the plain inputs the card builder gets.

        JSON-ready (round-tripped), so a card built from it during the run equals the card
        ``validate --deep`` rebuilds from the manifest.
        """
        options = {
            "profile": self.profile.name,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "probe_seed": self.options.probe_seed,
            "renderer": self.renderer_identity,
            "evaluators": {ev: self.specs[ev].identity_hash for ev in sorted(evaluators)},
            "scene_set_sha256": self.scene_set.selection_sha256(),
            "plan_sha256": self.plan.key,
            "thresholds": self.gate_thresholds.to_dict(),
            "run_id_explicit": bool(self.options.run_id),
            "card_facts": self.card_facts(evaluators),
        }
        if self.options.view_policy != "single":  # absent means single: older manifests too
            options["view_policy"] = self.options.view_policy
        if self.plan.not_applicable:  # only imported sets have them; bundled manifests unchanged
            options["probes_not_applicable"] = self.plan.not_applicable
        if self.plan.factors_not_applicable:  # splat scenes: lighting has no rows, by design
            options["factors_not_applicable"] = self.plan.factors_not_applicable
        if self.human_ratings is not None:  # only with --audit-human: other manifests unchanged
            options["human"] = self.human_source()
        return json.loads(json.dumps(options, sort_keys=True, allow_nan=False))

    def card(self, evaluator_id: str) -> dict[str, Any]:
        """The evaluator's Evaluator Configuration Card (deterministic id), built from plain
        inputs: the run options (with card facts), its summary and its companion agreement."""
        if evaluator_id not in self._cards:
            from harness.cards.assemble import assemble_card
            from harness.stats.companion_agreement import records_agreement

            options = self.run_options([evaluator_id])
            cid = options["card_facts"]["companion"]
            agreement = None
            if cid is not None and cid != evaluator_id:
                agreement = records_agreement(self.records(evaluator_id), self.records(cid))
            self._cards[evaluator_id] = assemble_card(
                evaluator_id, options, self.summary(evaluator_id), agreement
            )
        return self._cards[evaluator_id]

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
        )

    def worker_facts(self) -> dict[str, Any]:
        """Per-worker facts for the controller (builtins only): what this process measured."""
        return {
            "collected": dict(sorted(self.collected_tests.items())),
            "records": {e: str(p) for e, p in sorted(self._records_files.items())},
            "measure": {
                e: {
                    "images": s.images,
                    "renders": s.renders,
                    "scored_pairs": s.scored_pairs,
                    "cached_pairs": s.cached_pairs,
                    "failed_rows": s.failed_rows,
                    "model_loaded": s.model_loaded,
                }
                for e, s in sorted(self.measure_stats.items())
            },
            "cache_discarded": {
                kind: n - self._discarded_before.get(kind, 0)
                for kind, n in sorted(cacheseal.discarded_counts().items())
                if n > self._discarded_before.get(kind, 0)
            },
        }
