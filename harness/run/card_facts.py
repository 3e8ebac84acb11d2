"""The run's Evaluator Configuration Cards and the options that make them.

:meth:`RunCards.run_options` is ``manifest.json#/options``: every run setting the report's
numbers and cards depend on, with the card facts (scenes, companion, each evaluator's identity,
thresholds, baseline card, human agreement), the plain inputs :mod:`harness.cards.assemble`
gets, so ``t3d-audit validate --deep`` rebuilds every card from the report alone.
:class:`harness.run.session.AuditSession` owns one :class:`RunCards` (``session.cards``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from harness.vocab.metrics import HUMAN_AGREEMENT

if TYPE_CHECKING:
    from harness.checks.thresholds import Thresholds
    from harness.run.human import RunHumanRatings
    from harness.run.inputs import RunInputs
    from harness.run.record_cache import RecordsCache
    from harness.run.repeatability import RunRepeatability
    from harness.run.searches import RunSearches
    from harness.run.summary_cache import SummaryCache


class RunCards:
    """Card facts, run options and the cards of the run's evaluators (each built once)."""

    def __init__(
        self,
        inputs: RunInputs,
        records: RecordsCache,
        summaries: SummaryCache,
        human: RunHumanRatings,
        thresholds: Callable[[], Thresholds],
        baseline_card_ids: dict[str, str],
        searches: RunSearches | None = None,
        repeatability: RunRepeatability | None = None,
    ):
        self.inputs = inputs
        self.records = records
        self.summaries = summaries
        self.human = human
        self._thresholds = thresholds  # the gate thresholds (resolved lazily)
        self.baseline_card_ids = baseline_card_ids  # evaluator → previous release's card
        self._cards: dict[str, dict[str, object]] = {}
        self.searches = searches  # the profile's search beyond the grid, if any
        self.repeatability = repeatability  # each evaluator's repeatability check

    def companion_id(self) -> str | None:
        """The run's symbolic companion evaluator (the first by id), ``None`` when it has none."""
        from harness.evaluators.families import has_role

        ids = sorted(e for e, s in self.inputs.specs.items() if has_role(s, "companion"))
        return ids[0] if ids else None

    def card_facts(self, evaluators: Sequence[str]) -> dict[str, object]:
        """What the cards of ``evaluators`` state beyond the raw scores and the run options.

        Recorded in ``manifest.json`` as ``options.card_facts`` so ``t3d-audit validate --deep``
        can rebuild every card from the report alone. JSON-ready::

            {"scenes": {"dataset", "generators", "n_scenes", "n_prompts", "prompt_source",
                        "kind": "room" | "object"},
             "companion": <companion evaluator id> | None,
             "evaluators": {id: {"identity": evaluator_fields(spec, served), "judge": bool,
                                 "thresholds": {name: value},
                                 "baseline_card_id": <card id> (with --audit-baseline only),
                                 "repeatability": card_repeatability(...)}}}
        """
        from harness.cards.assemble import NOT_REPORTED, evaluator_fields, served_models
        from harness.evaluators.families import keeps_responses

        scenes = self.inputs.scene_set
        specs = self.inputs.specs
        options = self.inputs.options
        return {
            "scenes": {
                "dataset": "t3d-audit bundled scenes"
                if options.scenes is None
                else f"scene set {options.scenes.name}",
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
                    "identity": evaluator_fields(specs[ev], served_models(self.records.records(ev))),
                    "judge": keeps_responses(specs[ev]),
                    "thresholds": self._thresholds().for_evaluator(ev),
                    **({"baseline_card_id": self.baseline_card_ids[ev]}
                       if ev in self.baseline_card_ids else {}),
                    **({HUMAN_AGREEMENT: self.human.card_figures(ev)} if self.human.ratings else {}),
                    **self._search_fact(ev),
                    **self._repeatability_fact(ev),
                }
                for ev in sorted(evaluators)
            },
        }

    def _search_fact(self, evaluator_id: str) -> dict[str, object]:
        """``{"search": {...}}`` (:func:`harness.run.searches.card_search`) when the profile
        declares a search block; empty otherwise (other cards keep their ids)."""
        if self.searches is None or not self.searches.declared:
            return {}
        from harness.run.searches import card_search

        document = self.searches.result(evaluator_id)
        return {"search": card_search(document)} if document is not None else {}

    def _repeatability_fact(self, evaluator_id: str) -> dict[str, object]:
        """``{"repeatability": {...}}`` (:func:`harness.run.repeatability.card_repeatability`):
        the evaluator's repeatability check with its tolerance (``max_repeatability_diff``)."""
        if self.repeatability is None:
            return {}
        from harness.run.repeatability import card_repeatability
        from harness.vocab.metrics import MAX_REPEATABILITY_DIFF

        tolerance = self._thresholds().for_evaluator(evaluator_id).get(MAX_REPEATABILITY_DIFF)
        return {"repeatability": card_repeatability(self.repeatability.result(evaluator_id), tolerance)}

    def _import_conventions_fact(self) -> dict[str, object]:
        """``{"import_conventions": [...]}``: per distinct imported format and conventions
        (scene ``source``), e.g. ``"obj: up z, front -y, unit m (2 scenes)"``; empty for sets
        without imported object files (bundled facts unchanged)."""
        counts: dict[str, int] = {}
        for scene in self.inputs.scene_set.scenes:
            src = scene.source
            if not src:
                continue
            fmt = src.get("format", "?") + (f" {src['variant']}" if src.get("variant") else "")
            unit = src.get("unit") or f"{src.get('metres_per_unit')} m per unit"
            line = f"{fmt}: up {src.get('up')}, front {src.get('front')}, unit {unit}"
            counts[line] = counts.get(line, 0) + 1
        lines = [f"{line} ({n} scene{'s' if n != 1 else ''})" for line, n in sorted(counts.items())]
        return {"import_conventions": lines} if lines else {}

    def _factors_not_applicable_fact(self) -> dict[str, object]:
        """``{"factors_not_applicable": {factor: n scenes}}`` when some scene has factors that
        cannot change its image (splats: lighting); empty otherwise (bundled facts unchanged)."""
        counts: dict[str, int] = {}
        for factors in self.inputs.plan.factors_not_applicable.values():
            for factor in factors:
                counts[factor] = counts.get(factor, 0) + 1
        return {"factors_not_applicable": dict(sorted(counts.items()))} if counts else {}

    def run_options(self, evaluators: Sequence[str]) -> dict[str, object]:
        """``manifest.json#/options``: every run setting the report's numbers and cards depend on,
        with :meth:`card_facts` — the plain inputs the card builder gets.

        JSON-ready (round-tripped), so a card built from it during the run equals the card
        ``validate --deep`` rebuilds from the manifest.
        """
        inputs = self.inputs
        options = {
            "profile": inputs.profile.name,
            "bootstrap": inputs.bootstrap,
            "seed": inputs.seed,
            "probe_seed": inputs.options.probe_seed,
            "renderer": inputs.renderer_identity,
            "evaluators": {ev: inputs.specs[ev].identity_hash for ev in sorted(evaluators)},
            "scene_set_sha256": inputs.scene_set.selection_sha256(),
            "plan_sha256": inputs.plan.key,
            "thresholds": self._thresholds().to_dict(),
            "run_id_explicit": bool(inputs.options.run_id),
            "card_facts": self.card_facts(evaluators),
        }
        if inputs.options.view_policy != "single":  # absent means single: older manifests too
            options["view_policy"] = inputs.options.view_policy
        if inputs.plan.not_applicable:  # only imported sets have them; bundled manifests unchanged
            options["probes_not_applicable"] = inputs.plan.not_applicable
        if inputs.plan.factors_not_applicable:  # splat scenes: lighting has no rows, by design
            options["factors_not_applicable"] = inputs.plan.factors_not_applicable
        if self.human.ratings is not None:  # only with --audit-human: other manifests unchanged
            options["human"] = self.human.source()
        saved = self.searches.saved_levels if self.searches is not None else {}
        if saved:  # only with --audit-profile-file's saved levels: other manifests unchanged
            options["saved_levels"] = saved
        return json.loads(json.dumps(options, sort_keys=True, allow_nan=False))

    def card(self, evaluator_id: str) -> dict[str, object]:
        """The evaluator's Evaluator Configuration Card (deterministic id), built from plain
        inputs: the run options (with card facts), its summary and its companion agreement."""
        if evaluator_id not in self._cards:
            from harness.cards.assemble import assemble_card
            from harness.stats.companion_agreement import records_agreement

            options = self.run_options([evaluator_id])
            cid = options["card_facts"]["companion"]
            agreement = None
            if cid is not None and cid != evaluator_id:
                agreement = records_agreement(self.records.records(evaluator_id), self.records.records(cid))
            self._cards[evaluator_id] = assemble_card(
                evaluator_id, options, self.summaries.summary(evaluator_id), agreement
            )
        return self._cards[evaluator_id]

    def card_id(self, evaluator_id: str) -> str:
        """The evaluator's card id (``ecc-v1-sha256:…``)."""
        return str(self.card(evaluator_id)["card_id"])
