"""Scoring on Slurm (through submitit): each image evaluator's scene groups cut into score
shards, one job per (evaluator, shard).

A job rebuilds the audit's inputs from the session's options (the same plan, the renderer
reading the store, the store's score cache), keeps the rows of its scene groups and runs
:func:`harness.measure.images.measure_images` on them, exactly as the local backend does
for the whole plan: it composites the images from the stored renders, skips every pair the
store already has and publishes the new scores. A resubmitted or requeued shard therefore
scores only what its earlier attempt did not publish. A shard whose attempts are spent
publishes nothing more; its pairs stay missing from the store, so a later read-only audit
reports them missing (failed, never a score) and names the command that fills them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from harness.backends.shards import chunks, groups_per_shard
from harness.backends.slurm.jobs import ShardBody, run_shards
from harness.backends.slurm.options import SlurmOptions
from harness.measure.images import MeasureStats

#: seconds one scene group's scoring is assumed to take when no calibration sizes the shards
DEFAULT_SECONDS_PER_GROUP = 30.0


@dataclass
class SlurmScoreResult:
    """Per evaluator: the summed stats of its finished shards; the failed shards (shard
    number -> ``evaluator: error``) and the shard size in scene groups."""

    stats: dict[str, MeasureStats] = field(default_factory=dict)
    failed_shards: dict[int, str] = field(default_factory=dict)
    shard_groups: int = 0
    shards: int = 0


class ScoreShard(ShardBody):
    """Job body: measure one evaluator on one slice of the plan's scene groups."""

    def __call__(self, options: object, renderer_factory: object, extra: list, evaluator_id: str,
                 groups: list[str]) -> MeasureStats:  # fmt: skip
        from harness.measure.images import measure_images
        from harness.run.inputs import RunInputs

        inputs = RunInputs(options, renderer_factory=renderer_factory, extra_evaluators=extra)
        plan = inputs.plan
        wanted = set(groups)
        part = replace(plan, rows=[r for r in plan.rows if r.group in wanted])
        spec = inputs.specs[evaluator_id]
        opts = inputs.options
        stats = MeasureStats()
        measure_images(spec, part, inputs.renderer, cache_dir=opts.cache_dir, stats=stats,
                       load_evaluator=lambda s: s.build(device=opts.device, batch_size=opts.batch_size),
                       score_cache=inputs.score_cache())  # fmt: skip
        return stats


def group_seconds(plan: object, specs: list, per_pair_s: dict[str, float]) -> float:
    """Seconds the costliest scene group takes the slowest calibrated evaluator: its distinct
    pairs (image x caption; images alone for a prompt-free evaluator) x seconds per pair."""
    worst = 0.0
    for _, rows in plan.groups():
        images = {r.image for r in rows if r.image is not None}
        pairs = {(r.image, r.caption) for r in rows if r.image is not None}
        for spec in specs:
            if spec.id in per_pair_s:
                n = len(pairs) if getattr(spec, "needs_text", True) else len(images)
                worst = max(worst, n * per_pair_s[spec.id])
    return worst


def _add(total: MeasureStats, part: MeasureStats) -> None:
    for name in ("images", "renders", "scored_pairs", "cached_pairs", "reused_pairs", "failed_rows",
                 "missing_pairs"):  # fmt: skip
        setattr(total, name, getattr(total, name) + getattr(part, name))
    total.model_loaded = total.model_loaded or part.model_loaded


def score_slurm(
    session: object,
    specs: list,
    *,
    options: SlurmOptions,
    seconds_per_group: float | None = None,
    per_pair_s: dict[str, float] | None = None,
    only_shards: frozenset[int] | None = None,
    log: Callable[[str], None] = print,
) -> SlurmScoreResult:
    """Score every image evaluator in ``specs`` into the store of ``session`` (which has
    ``--audit-store`` and fill ``local``) in Slurm jobs. Shards are numbered over the
    evaluators in order, each evaluator's groups cut into ``options.score_shard_groups``
    groups (else :func:`groups_per_shard` of ``seconds_per_group``, or of the largest
    group's cost at the calibrated ``per_pair_s`` (evaluator id -> seconds per pair in one
    job), and the time limit);
    ``only_shards`` restricts the run to those numbers (a retry)."""
    inputs = session.inputs
    groups = [g for g, _ in inputs.plan.groups()]
    if seconds_per_group is None and per_pair_s:
        seconds_per_group = group_seconds(inputs.plan, specs, per_pair_s)
    size = options.score_shard_groups or groups_per_shard(seconds_per_group or DEFAULT_SECONDS_PER_GROUP,
                                                          options.time_limit_min)  # fmt: skip
    pieces = chunks(groups, size)
    args: dict[int, tuple] = {}
    owner: dict[int, str] = {}
    for e, spec in enumerate(specs):
        for p, piece in enumerate(pieces):
            i = e * len(pieces) + p
            owner[i] = spec.id
            if only_shards is None or i in only_shards:
                args[i] = (inputs.options, inputs._renderer_factory, inputs._extra, spec.id, piece)
    result = SlurmScoreResult(stats={s.id: MeasureStats() for s in specs}, shard_groups=size,
                              shards=len(owner))  # fmt: skip
    log(f"{len(args)} of {len(owner)} score shards to run ({size} scene groups per shard, "
        f"{len(specs)} evaluators, {options.executor} executor)")

    def on_result(i: int, stats: MeasureStats) -> None:
        _add(result.stats[owner[i]], stats)

    def on_failure(i: int, why: str, final: bool) -> None:
        log(f"score shard {i} ({owner[i]}) failed ({why})" + ("" if final else "; resubmitting it"))

    run = run_shards(options, "t3d-score", ScoreShard(), args, on_result=on_result, on_failure=on_failure)
    result.failed_shards = {i: f"{owner[i]}: {why}" for i, why in run.failed.items()}
    return result
