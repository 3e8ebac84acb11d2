"""Scoring on Ray: each evaluator is a stateful actor that loads its model once and scores
batches of distinct images (one scene group's missing image x caption grid per call).

The driver runs :func:`harness.measure.images.measure_images` as usual (it composites the
images from the render store, skips every pair already in the score store and publishes the
new scores there); only the model calls go to the actor, through a proxy with the
evaluator's own interface (``score``, and ``score_grid`` for embedding evaluators). Several
evaluators score concurrently, one actor each. Actors declare ``num_gpus`` when the scoring
device is a GPU (``cuda``, or ``auto`` on a cluster that has GPUs).
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from harness.backends.shared import BackendError

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec


class ScoreWorker:
    """The body of a scoring actor: one evaluator model, built once per actor process."""

    def __init__(self, spec: EvaluatorSpec, device: str, batch_size: int):
        self.evaluator = spec.build(device=device, batch_size=batch_size)

    def has_grid(self) -> bool:
        return hasattr(self.evaluator, "score_grid")

    def score(self, images: list, captions: list) -> list:
        return list(self.evaluator.score(images, captions))

    def score_grid(self, images: list, captions: list) -> object:
        import numpy as np

        return np.asarray(self.evaluator.score_grid(images, captions), dtype=np.float64)

    def close(self) -> None:
        if hasattr(self.evaluator, "close"):
            self.evaluator.close()


class RayEvaluator:
    """Driver-side proxy of a pairwise evaluator running in a :class:`ScoreWorker` actor."""

    def __init__(self, ray: ModuleType, actor: object):
        self._ray, self._actor = ray, actor

    def score(self, images: list, captions: list) -> list:
        return self._ray.get(self._actor.score.remote(images, captions))

    def close(self) -> None:
        try:
            self._ray.get(self._actor.close.remote())
        finally:
            self._ray.kill(self._actor, no_restart=True)


class RayGridEvaluator(RayEvaluator):
    """Proxy of an embedding evaluator (it also has ``score_grid``)."""

    def score_grid(self, images: list, captions: list) -> object:
        return self._ray.get(self._actor.score_grid.remote(images, captions))


def scoring_gpus(ray: ModuleType, device: str) -> float:
    """GPUs one scoring actor declares: 1 for ``cuda*``, 1 for ``auto`` when the cluster has
    GPUs, else 0."""
    if device.startswith("cuda"):
        return 1.0
    if device == "auto" and ray.cluster_resources().get("GPU", 0) >= 1:
        return 1.0
    return 0.0


def ray_evaluator_loader(ray: ModuleType, *, device: str = "auto", batch_size: int = 32,
                         cpus: float = 1.0, retries: int = 2):  # fmt: skip
    """``load_evaluator(spec)`` for :func:`harness.measure.images.measure_images`: starts one
    scoring actor for ``spec`` (model loaded once there) and returns its proxy. A dead
    actor is restarted by Ray (``max_restarts``) and its call retried (``max_task_retries``)."""
    from ray.exceptions import RayActorError

    gpus = scoring_gpus(ray, device)
    remote = ray.remote(ScoreWorker).options(
        num_cpus=cpus, num_gpus=gpus, max_restarts=retries, max_task_retries=retries
    )

    def load(spec: EvaluatorSpec) -> RayEvaluator:
        actor = remote.remote(spec, device, batch_size)
        try:
            grid = ray.get(actor.has_grid.remote())
        except RayActorError as exc:
            raise BackendError(f"scoring actor for {spec.id} did not start: {exc}",
                               where="--backend ray") from exc  # fmt: skip
        return (RayGridEvaluator if grid else RayEvaluator)(ray, actor)

    return load
