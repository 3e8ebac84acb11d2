"""Each evaluator's repeatability in a run (:mod:`harness.measure.repeatability`), measured once.

The measurement lives under ``<cache dir>/repeatability/<key>.json``, keyed by the evaluator's
identity, the plan (so the sampled inputs) and the renderer, written under a file lock and
sealed like the records (:mod:`harness.core.cacheseal`): xdist workers and warm reruns read
it instead of scoring again. Only a measured result is cached; one that could not be measured
(a failed pass) is measured again by the next run, and is a failure in this one.
:class:`harness.run.session.AuditSession` owns one :class:`RunRepeatability`
(``session.repeatability``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from harness.core import cacheseal
from harness.core.fileio import write_bytes_atomic
from harness.core.hashing import canonical_json, sha256_json

if TYPE_CHECKING:
    from harness.measure.repeatability import Repeatability
    from harness.run.inputs import RunInputs
    from harness.run.record_cache import RecordsCache

FORMAT = "t3d-repeatability-v1"


class RunRepeatability:
    """The run's repeatability measurements by evaluator (computed once per process)."""

    def __init__(self, inputs: RunInputs, record_cache: RecordsCache):
        self.inputs = inputs
        self.record_cache = record_cache
        self._done: dict[str, Repeatability] = {}

    def key(self, evaluator_id: str) -> str:
        from harness.measure.repeatability import SAMPLE_SIZE

        spec = self.inputs.specs[evaluator_id]
        return sha256_json({"format": FORMAT, "evaluator": spec.identity_hash, "plan": self.inputs.plan.key,
                            "renderer": self.inputs.renderer_identity, "sample": SAMPLE_SIZE})  # fmt: skip

    def result(self, evaluator_id: str) -> Repeatability:
        """The evaluator's measurement (from the cache when a run measured it before)."""
        if evaluator_id not in self._done:
            self._done[evaluator_id] = self._cached_or_measured(evaluator_id)
        return self._done[evaluator_id]

    def _read(self, path: object, key: str) -> Repeatability | None:
        from harness.measure.repeatability import Repeatability

        if not path.is_file():
            return None
        try:
            return Repeatability.from_dict(json.loads(cacheseal.read_sealed(path, key)))
        except (cacheseal.CorruptEntry, ValueError, TypeError) as exc:
            path.unlink(missing_ok=True)
            cacheseal.discarded("repeatability", path, str(exc))
            return None

    def _cached_or_measured(self, evaluator_id: str) -> Repeatability:
        from filelock import FileLock

        from harness.core.envvars import scorer_deadline
        from harness.measure.repeatability import measure_repeatability

        key = self.key(evaluator_id)
        path = self.inputs.options.cache_dir / "repeatability" / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            found = self._read(path, key)
            if found is not None:
                return found
            spec = self.inputs.specs[evaluator_id]
            result = measure_repeatability(
                spec, self.inputs.plan, self.inputs.renderer,
                build=lambda: self.record_cache.build_evaluator(spec), device=self.inputs.options.device,
                build_batch_size=self.inputs.options.batch_size,
                fresh_timeout_s=2 * scorer_deadline() + 60,
            )  # fmt: skip
            if result.measured:
                write_bytes_atomic(path, cacheseal.sealed(key, canonical_json(result.to_dict())))
        return result


def card_repeatability(result: Repeatability | None, tolerance: float | None) -> dict[str, object] | None:
    """What a card and ``summary.json`` record of a repeatability measurement (docs/formats.md,
    card ``repeatability``): no timing, so a card stays a function of its inputs."""
    if result is None:
        return None
    limit = 0.0 if tolerance is None else tolerance  # undeclared: the built-in exact 0
    return {**result.to_dict(with_seconds=False), "tolerance": tolerance,
            "repeatable": bool(result.measured and result.max_abs_diff is not None
                               and result.max_abs_diff <= limit)}  # fmt: skip
