"""Evaluators: registry of specs (data) and lazily imported adapters.

Public API: :func:`harness.evaluators.registry.select`, ``register``, ``all_specs``;
:class:`~harness.evaluators.base.EvaluatorSpec`, :class:`~harness.evaluators.base.Evaluator`,
:class:`~harness.evaluators.base.ScoreResult`, :class:`~harness.evaluators.scorer.Scorer` (your
own scoring code) and :func:`register` (``harness.evaluators.registry.register``). Importing this
package never imports torch.
"""

from harness.evaluators.base import EmbeddingEvaluator, Evaluator, EvaluatorSpec, ScoreResult
from harness.evaluators.scorer import Scorer

__all__ = ["EmbeddingEvaluator", "Evaluator", "EvaluatorSpec", "ScoreResult", "Scorer", "register"]


def __getattr__(name: str) -> object:
    if name == "register":  # the registry loads the catalogue: only when asked for
        from harness.evaluators.registry import register

        return register
    raise AttributeError(f"module 'harness.evaluators' has no attribute {name!r}")
