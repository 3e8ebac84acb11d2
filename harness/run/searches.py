"""The run's searches beyond the grid (issue 40, docs/search.md "In an audit").

A profile with a ``search`` block has every selected evaluator searched once per run, with the
block's objective, budget, split, seed and flip points, on the run's scenes, cache and
renderer; ``test_worst_case`` and ``test_flip_region`` check the result and the card records
it. Searches are written under a file lock per evaluator and replayed from their trial log
(:mod:`harness.search.trial_log`), so xdist workers and reruns share one search: the second
process to ask replays the first one's trials (no render or score is made again). Without a
search block nothing here runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.run.inputs import RunInputs


class RunSearches:
    """Each evaluator's search document (``search --json``'s object), computed once per process."""

    def __init__(self, inputs: RunInputs, thresholds: Callable[[str], dict[str, float]]):
        self.inputs = inputs
        self._thresholds = thresholds  # evaluator → its gate thresholds (overrides applied)
        self._done: dict[str, dict[str, Any]] = {}

    @property
    def declared(self) -> bool:
        """Whether the run's profile declares a search block."""
        return self.inputs.named_profile.search is not None

    def result(self, evaluator_id: str) -> dict[str, Any] | None:
        """The evaluator's search document, ``None`` when the profile declares no search."""
        if not self.declared:
            return None
        if evaluator_id not in self._done:
            self._done[evaluator_id] = self._run(evaluator_id)
        return self._done[evaluator_id]

    def _run(self, evaluator_id: str) -> dict[str, Any]:
        from filelock import FileLock

        from harness.search.run import SearchRequest, Split, run_search

        block = self.inputs.named_profile.search
        assert block is not None
        options = self.inputs.options
        request = SearchRequest(
            evaluator_id, self.inputs.named_profile.name, block.objective, block.budget, block.seed,
            split=Split(*block.split) if block.split else None, flip_points=block.flip_points,
        )  # fmt: skip
        locks = options.cache_dir / "search"
        locks.mkdir(parents=True, exist_ok=True)
        with FileLock(str(locks / f"audit-{evaluator_id}.lock")):
            result = run_search(request, scenes=options.scenes, cache_dir=options.cache_dir,
                                renderer=self.inputs.renderer, spec=self.inputs.specs[evaluator_id],
                                thresholds=self._thresholds(evaluator_id))  # fmt: skip
        return result.to_dict()


def card_search(document: dict[str, Any]) -> dict[str, Any]:
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
