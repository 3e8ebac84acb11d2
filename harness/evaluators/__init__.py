"""Evaluators: registry of specs (data) and lazily imported adapters.

Public API: :func:`harness.evaluators.registry.select`, ``register``, ``all_specs``;
:class:`~harness.evaluators.base.EvaluatorSpec`, :class:`~harness.evaluators.base.Evaluator`,
:class:`~harness.evaluators.base.ScoreResult`. Importing this package never imports torch.
"""

from harness.evaluators.base import EmbeddingEvaluator, Evaluator, EvaluatorSpec, ScoreResult

__all__ = ["EmbeddingEvaluator", "Evaluator", "EvaluatorSpec", "ScoreResult"]
