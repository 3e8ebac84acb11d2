"""``t3d-audit materialize``: fill a store with everything an audit reads, renders then scores.

Renders the profile's plan into ``--store`` (as ``warm --store``, on ``--backend local``,
``ray`` or ``slurm``), then scores every distinct image x caption pair of each selected image evaluator
into the store's score cache (scene evaluators read scene files and need nothing stored).
Resumable and shared: entries already in the store are skipped, and several machines can
materialize into one store at once. Afterwards ``pytest --audit-store=URL`` only reads.
On ``slurm`` the scoring runs as score shards (an evaluator's scene groups, one job each);
failed shards are listed with the command that retries only them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from harness.commands import warm as warm_cmd
from harness.run import argtypes

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec

HELP = "render and score a profile into a shared store (for pytest --audit-store)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    warm_cmd.add_arguments(parser)
    parser.add_argument(
        "--evaluators", type=argtypes.name_list, default=None,
        help="comma-separated evaluator ids or globs (default: the profile's)",
    )  # fmt: skip
    parser.add_argument("--score-device", type=argtypes.device, default="auto", help="auto (cuda if available), cpu, cuda")
    parser.add_argument("--batch-size", type=argtypes.batch_size, default=32, help="images per forward pass")
    parser.add_argument("--skip-render", action="store_true", help="only score (renders exist)")


def score_plan(session: object, *, backend: str = "local", address: str | None = None,
               device: str = "auto", batch_size: int = 32,
               log: object = print, slurm: dict[str, object] | None = None,
               shard_report: dict[str, object] | None = None) -> dict[str, object]:  # fmt: skip
    """Score every image evaluator of ``session`` (which has ``--audit-store`` and fill
    ``local``) into its store; returns evaluator id -> ``MeasureStats``. On ``ray`` each
    evaluator is one scoring actor, all evaluators at once. On ``slurm`` (``slurm``: the
    keyword arguments of :func:`harness.backends.slurm.score.score_slurm`) score shards run
    as jobs; ``shard_report`` gets ``failed`` (shard -> why) and ``size`` (groups per shard)."""
    from concurrent.futures import ThreadPoolExecutor

    from harness.core.progress import progress
    from harness.measure.images import MeasureStats, measure_images, measurement_kind, render_total

    inputs = session.inputs
    specs = [s for s in inputs.specs.values() if measurement_kind(s) == "image"]
    load = session.record_cache.build_evaluator
    if backend == "slurm":
        from harness.backends.slurm.options import SlurmOptions
        from harness.backends.slurm.score import score_slurm

        slurm = {"options": SlurmOptions(), **(slurm or {})}
        result = score_slurm(session, specs, log=log, **slurm)
        for spec_id, stats in result.stats.items():
            log(f"  {spec_id}: {stats.scored_pairs} pairs scored, {stats.cached_pairs} already "
                f"stored, {stats.failed_rows} failed rows")  # fmt: skip
        if shard_report is not None:
            shard_report.update(failed=result.failed_shards, size=result.shard_groups)
        return result.stats
    if backend == "ray":
        from harness.backends.ray.cluster import connect
        from harness.backends.ray.score import ray_evaluator_loader

        load = ray_evaluator_loader(connect(address), device=device, batch_size=batch_size)
    plan, renderer, cache_dir = inputs.plan, inputs.renderer, session.options.cache_dir
    workers = len(specs) if backend == "ray" else 1

    def one(spec: EvaluatorSpec) -> tuple[str, MeasureStats]:
        stats = MeasureStats()
        start = time.monotonic()
        # one evaluator at a time locally: its progress on stderr (a bar, or lines in a log)
        bar = progress(render_total(plan), verb="fetched", unit="render", label=f"scoring {spec.id}") \
            if workers == 1 else None  # fmt: skip
        try:
            measure_images(spec, plan, renderer, cache_dir=cache_dir, load_evaluator=load,
                           stats=stats, score_cache=inputs.score_cache(), progress=bar)  # fmt: skip
        finally:
            if bar is not None:
                bar.close()
        log(f"  {spec.id}: {stats.scored_pairs} pairs scored, {stats.cached_pairs} already "
            f"stored, {stats.failed_rows} failed rows ({time.monotonic() - start:.1f} s)")  # fmt: skip
        return spec.id, stats

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return dict(pool.map(one, specs))


def check_selection(profile: str, evaluators: tuple[str, ...], extra: Sequence[object] = ()) -> None:
    """Raise the typed error an unknown profile or evaluator pattern, or a named evaluator this
    install cannot run, would raise later, now. ``extra``: specs a project's
    ``pytest_audit_evaluators`` hook offers (they match too). Without ``evaluators`` only the
    profile is checked: the project's own configuration may choose its evaluators."""
    from harness.core.errors import EvaluatorError
    from harness.evaluators.families import install_problem
    from harness.protocol.profiles import get_profile
    from harness.run.evaluator_selection import select_evaluators

    get_profile(profile)
    if not evaluators:
        return
    lacking = {str(spec.id): problem for spec in select_evaluators(list(evaluators), extra)
               if (problem := install_problem(spec)) is not None}  # fmt: skip
    if lacking:
        first = next(iter(lacking.values()))
        raise EvaluatorError(
            f"{', '.join(lacking)} cannot run in this install: {first}",
            hint="install the extra, or leave them out with --evaluators (t3d-audit evaluators "
            "lists what this install can run)",
        )


def run(args: argparse.Namespace) -> int:
    from harness.core.paths import default_cache_dir
    from harness.run.options import AuditOptions
    from harness.run.session import AuditSession

    url = warm_cmd.store_url(args.store)
    if url is None:
        print("t3d-audit materialize: --store URL is required (where the audit will read)",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.prompts is not None:
        print("t3d-audit materialize: --prompts is not supported (the audit reads the whole "
              "profile)", file=sys.stderr)  # fmt: skip
        return 2
    evaluators = tuple(e.strip() for e in (args.evaluators or "").split(",") if e.strip())
    check_selection(args.profile, evaluators)  # before any render: a typo costs nothing
    code = 0
    if not args.skip_render:  # the local cache dir only holds this machine's records
        code = warm_cmd.run(argparse.Namespace(**{**vars(args), "cache_dir": None}))
    options = AuditOptions(profile=args.profile, evaluators=evaluators, scenes=args.scenes,
                           cache_dir=args.cache_dir or default_cache_dir(), store=url,
                           store_fill="local", device=args.score_device,
                           batch_size=args.batch_size)  # fmt: skip
    session = AuditSession(options)
    print(f"scoring into {url}/scores ({args.backend} backend):", flush=True)
    start = time.monotonic()
    shards: dict[str, object] = {}
    stats = score_plan(session, backend=args.backend, address=args.address,
                       device=args.score_device, batch_size=args.batch_size,
                       slurm=slurm_score_options(args) if args.backend == "slurm" else None,
                       shard_report=shards)  # fmt: skip
    scored = sum(s.scored_pairs for s in stats.values())
    print(f"done in {time.monotonic() - start:.1f} s: {scored} pairs scored for "
          f"{len(stats)} image evaluators")  # fmt: skip
    failed = sum(s.failed_rows for s in stats.values())
    if shards.get("failed"):
        from harness.backends.slurm.cli import report_failed_shards

        report_failed_shards("score", shards["failed"], shards["size"], args)
    return 1 if code or failed or shards.get("failed") else 0


def slurm_score_options(args: argparse.Namespace) -> dict[str, object]:
    """:func:`harness.backends.slurm.score.score_slurm`'s options from the command line."""
    from harness.backends.slurm.cli import options_from_args, scoring_seconds_per_pair

    options = options_from_args(args)
    per_pair = scoring_seconds_per_pair(args, options.gpus_per_task, options.cpus_per_task)
    return {"options": options, "only_shards": args.score_shards, "per_pair_s": per_pair}
