"""The run's searches beyond the grid (docs/search.md "In an audit").

A profile with a ``search`` block has every selected evaluator searched once per run, with the
block's objective, budget, split, seed and flip points, on the run's scenes, cache and
renderer; ``test_worst_case`` and ``test_flip_region`` check the result and the card records
it. Searches are written under a file lock per evaluator and replayed from their trial log
(:mod:`harness.search.trial_log`), so xdist workers and reruns share one search: the second
process to ask replays the first one's trials (no render or score is made again). Without a
search block nothing here runs.

``--audit-profile-file`` adds the file's *saved levels* of the run's profile (confirmed worst
configurations of earlier searches, :mod:`harness.search.saved_levels`): each is measured on the
run's scenes against c0 with its objective, and ``test_saved_level`` checks it like
``test_worst_case``, so a fragility found once stays a regression check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.core.locks import held_lock

if TYPE_CHECKING:
    from harness.run.inputs import RunInputs


class RunSearches:
    """Each evaluator's search document (``search --json``'s object), computed once per process."""

    def __init__(self, inputs: RunInputs, thresholds: Callable[[str], dict[str, float]]):
        self.inputs = inputs
        self._thresholds = thresholds  # evaluator → its gate thresholds (overrides applied)
        self._done: dict[str, dict[str, object]] = {}
        self._results: dict[str, object] = {}  # evaluator → its SearchResult (the figures' inputs)
        self._saved: dict[str, dict[str, object]] = {}  # "evaluator\0level" → its measurement

    @property
    def declared(self) -> bool:
        """Whether the run's profile declares a search block."""
        return self.inputs.named_profile.search is not None

    @property
    def saved_levels(self) -> dict[str, dict[str, str]]:
        """``--audit-profile-file``'s saved levels of the run's profile: name → ``{"point",
        "objective"}`` (the objective each is checked with); empty without that file."""
        saved = self.inputs.saved_profile
        if saved is None:
            return {}
        return {name: {"point": level.point, "objective": saved.objective_of(name)}
                for name, level in sorted(saved.saved.items())}  # fmt: skip

    def saved_level(self, evaluator_id: str, name: str) -> dict[str, object]:
        """Saved level ``name`` measured for the evaluator on the run's scenes against c0: the
        effect of its objective with a paired prompt-bootstrap interval and the objective's
        threshold (``test_saved_level``, docs/search.md "Saved levels in an audit")."""
        key = f"{evaluator_id}\0{name}"
        if key not in self._saved:
            self._saved[key] = self._measure_saved(evaluator_id, name)
        return self._saved[key]

    def _measure_saved(self, evaluator_id: str, name: str) -> dict[str, object]:
        from harness.search.confirm import confirm
        from harness.search.evaluate import PointScorer
        from harness.search.objectives import parse_objective
        from harness.search.pipeline import objective_threshold
        from harness.search.space import space_for

        level = self.saved_levels[name]
        space = space_for(self.inputs.profile)  # the run's c0 (for the scenes' kind)
        where = f"{self.inputs.options.profile_file}#/{self.inputs.profile.name}/saved_levels/{name}"
        config = space.configuration(space.parse(level["point"], where=where))
        scorer = PointScorer(self.inputs.specs[evaluator_id], self.inputs.scene_set, self.inputs.renderer,
                             self.inputs.options.cache_dir)  # fmt: skip
        try:
            base, moved = scorer.measure([space.base, config])
        finally:
            scorer.close()
        objective = parse_objective(level["objective"], scorer.generators)
        threshold = objective_threshold(objective.threshold, self._thresholds(evaluator_id))
        out: dict[str, object] = {"name": name, **level, "objective_label": objective.label, "error": ""}
        failed = "" if base.ok and moved.ok else (base.error or moved.error)
        if failed or self.inputs.bootstrap < 1:
            return {**out, "estimate": None if failed else objective.effect(base.scores, moved.scores),
                    "interval": None, "threshold": {"name": objective.threshold, "value": threshold},
                    "confirmed": False, "error": failed or "the bootstrap is off (--audit-bootstrap 0)"}  # fmt: skip
        found = confirm(objective, base.scores, moved.scores, threshold=threshold,
                        bootstrap=self.inputs.bootstrap, seed=self.inputs.seed)  # fmt: skip
        return {**out, **found.to_dict(), "confirmed": found.confirmed}

    def result(self, evaluator_id: str) -> dict[str, object] | None:
        """The evaluator's search document, ``None`` when the profile declares no search."""
        if not self.declared:
            return None
        if evaluator_id not in self._done:
            self._done[evaluator_id] = self._run(evaluator_id)
        return self._done[evaluator_id]

    def figure_inputs(self, evaluator_id: str) -> tuple[object, object]:
        """What the report's search figures are drawn from (:mod:`harness.search.figure_inputs`):
        the first discovery scene at c0 and at the *confirmed* worst configuration (renders
        through the run's render cache; ``None`` when nothing was confirmed) and the flip
        region's sample (``None`` without one); ``(None, None)`` without a search block."""
        from harness.search.figure_inputs import flip_sample, worst_images

        if self.result(evaluator_id) is None:
            return None, None
        found = self._results[evaluator_id]
        images = worst_images(found, self.inputs.renderer, self.inputs.scene_set) if found.confirmed else None
        return images, flip_sample(found)

    def _run(self, evaluator_id: str) -> dict[str, object]:
        from harness.search.pipeline import SearchError, SearchRequest, Split, run_search

        block = self.inputs.named_profile.search
        assert block is not None
        options = self.inputs.options
        request = SearchRequest(
            evaluator_id, self.inputs.named_profile.name, block.objective, block.budget, block.seed,
            split=Split(*block.split) if block.split else None, flip_points=block.flip_points,
        )  # fmt: skip
        lock = options.cache_dir / "search" / f"audit-{evaluator_id}.lock"
        with held_lock(lock, f"the audit's search of {evaluator_id!r}", SearchError):
            result = run_search(request, scenes=options.scenes, cache_dir=options.cache_dir,
                                renderer=self.inputs.renderer, spec=self.inputs.specs[evaluator_id],
                                thresholds=self._thresholds(evaluator_id))  # fmt: skip
        self._results[evaluator_id] = result
        return result.to_dict()


def card_search(document: dict[str, object]) -> dict[str, object]:
    """What a card records of a search (docs/formats.md, card ``search``): its space, budget,
    seed, objective, split sizes and the confirmed worst configuration (``null`` when none
    was confirmed). Only inputs and the confirmed point: no timing, log path or trace."""
    worst = document.get("worst")
    confirmed = bool(document.get("confirmed")) and worst is not None
    return {
        "objective": document["objective"],
        "budget": document["budget"],
        "seed": document["seed"],
        "split": [len(document["split"]["discovery"]), len(document["split"]["held_out"])],
        "space": document["space"],
        "confirmed_worst": worst["text"] if confirmed else None,
    }
