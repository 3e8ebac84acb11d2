"""``--audit-human`` in a run: the ratings loaded once, their source facts, per-scene means, and
each evaluator's agreement with them at every configuration (disk-cached with the summaries).

:class:`harness.run.session.AuditSession` owns one :class:`RunHumanRatings` (``session.human``); the
computations are :mod:`harness.human.audit`'s.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.human.audit import HumanInput
    from harness.run.inputs import RunInputs
    from harness.run.record_cache import RecordsCache
    from harness.run.summary_cache import SummaryCache


class RunHumanRatings:
    """The run's human ratings (``None`` everywhere without ``--audit-human``)."""

    def __init__(self, human: HumanInput | None, inputs: RunInputs, records: RecordsCache,
                 summaries: SummaryCache):
        self.human = human
        self.inputs = inputs
        self.records = records
        self.summaries = summaries
        self._agreement: dict[str, dict[str, object]] = {}

    @cached_property
    def ratings(self) -> tuple[object, str] | None:
        """``(Ratings, dimension)`` of ``--audit-human`` (validated at configure time), or ``None``."""
        if self.human is None:
            return None
        from harness.human.audit import load_ratings

        return load_ratings(self.human)

    def source(self) -> dict[str, object] | None:
        """The human data's facts (file name, sha256, scale, dimension), ``None`` without it."""
        if self.ratings is None:
            return None
        from harness.human.audit import source_facts

        return source_facts(*self.ratings)

    def means(self) -> dict[tuple[str, str], float] | None:
        """(generator, prompt_id) → mean rating of ``--audit-human`` (the ``--audit-baseline``
        comparison's human metrics); ``None`` without it or for ratings keyed by ``item_id``."""
        if self.ratings is None:
            return None
        from harness.human.audit import scene_means

        return scene_means(*self.ratings)

    def agreement(self, evaluator_id: str) -> dict[str, object] | None:
        """The evaluator's agreement with ``--audit-human`` at every configuration
        (:func:`harness.human.audit.evaluator_agreement`), disk-cached with the summaries;
        ``None`` without human data."""
        if self.ratings is None:
            return None
        if evaluator_id not in self._agreement:
            from harness.human.audit import evaluator_agreement

            ratings, dim = self.ratings
            path = self.records.file(evaluator_id)
            bootstrap, seed = self.inputs.bootstrap, self.inputs.seed
            self._agreement[evaluator_id] = self.summaries.cached(
                [path],
                lambda: evaluator_agreement(ratings, dim, path, evaluator_id, bootstrap, seed),
                extra={"human": ratings.sha256, "dimension": dim, "scale": str(ratings.scale),
                       "evaluator": evaluator_id},
            )
        return self._agreement[evaluator_id]

    def card_figures(self, evaluator_id: str) -> dict[str, object]:
        """The card's ``human_agreement`` figures of the evaluator."""
        from harness.human.audit import card_figures

        return card_figures(self.agreement(evaluator_id))
