"""The ``--backend slurm`` flags the commands share (``warm``, ``materialize``, ``search``)
and what a command prints about failed shards: which, and the command that retries only
them."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.backends.shards import format_shards, parse_shards
from harness.backends.slurm.options import EXECUTORS, SlurmOptions, load_options
from harness.run import argtypes

#: flag -> SlurmOptions field
FLAGS = {
    "slurm_executor": "executor",
    "partition": "partition",
    "time_limit": "time_limit_min",
    "gpus_per_task": "gpus_per_task",
    "cpus_per_task": "cpus_per_task",
    "array_parallelism": "array_parallelism",
    "max_failures": "max_failures",
    "shard_size": "shard_size",
    "score_shard_groups": "score_shard_groups",
    "slurm_folder": "folder",
}


def _shards(text: str) -> frozenset[int]:
    from harness.core.errors import AuditError

    try:
        return parse_shards(text)
    except AuditError as exc:
        raise argparse.ArgumentTypeError(f"{exc.what} ({exc.hint})" if exc.hint else exc.what) from None


def add_slurm_arguments(parser: argparse.ArgumentParser) -> None:
    """The Slurm flags; each overrides its key of ``[tool.t3d-audit.slurm]``."""
    group = parser.add_argument_group("slurm backend (override [tool.t3d-audit.slurm])")
    group.add_argument("--slurm-executor", choices=EXECUTORS, default=None,
                       help="slurm (submit job arrays, default), local (processes here) or debug (in process)")  # fmt: skip
    group.add_argument("--partition", default=None, help="Slurm partition")
    group.add_argument("--time-limit", type=argtypes.positive_int, default=None, help="minutes per job (default 60)")
    group.add_argument("--gpus-per-task", type=argtypes.integer(0), default=None, help="GPUs per job (default 0)")
    group.add_argument("--cpus-per-task", type=argtypes.positive_int, default=None, help="CPUs per job (default 1)")
    group.add_argument("--array-parallelism", type=argtypes.positive_int, default=None,
                       help="jobs running at once (default 2)")  # fmt: skip
    group.add_argument("--max-failures", type=argtypes.positive_int, default=None,
                       help="attempts per shard before it is recorded as failed (default 3)")  # fmt: skip
    group.add_argument("--shard-size", type=argtypes.positive_int, default=None,
                       help="renders per shard (default: from the calibration and --time-limit)")  # fmt: skip
    group.add_argument("--shards", type=_shards, default=None,
                       help="only these shard numbers, e.g. 3,7,10-12 (the retry of a failed run)")  # fmt: skip
    group.add_argument("--score-shards", type=_shards, default=None,
                       help="only these score shard numbers (the retry of a failed materialize)")  # fmt: skip
    group.add_argument("--score-shard-groups", type=argtypes.positive_int, default=None,
                       help="scene groups per score shard (default: from the calibration and --time-limit)")  # fmt: skip
    group.add_argument("--slurm-folder", default=None, help="submitit's job folder (on a filesystem every node sees)")
    group.add_argument("--costs", type=argtypes.input_path, default=None,
                       help="costs file sizing the shards (default: the shipped 2-core CPU calibration)")  # fmt: skip


def options_from_args(args: argparse.Namespace, pyproject: Path | None = None) -> SlurmOptions:
    """``[tool.t3d-audit.slurm]`` of ``./pyproject.toml`` with the given flags applied."""
    return load_options(pyproject, **{field: getattr(args, flag, None) for flag, field in FLAGS.items()})


def seconds_per_render(args: argparse.Namespace, cpus_per_task: int) -> float:
    """One render's wall seconds on ``cpus_per_task`` cores, from ``--costs`` or the shipped
    calibration (its core-seconds spread over the job's cores)."""
    from harness.measure.cluster_estimate import load_calibration

    costs, _ = load_calibration(getattr(args, "costs", None))
    cores = int(costs.get("host", {}).get("cores", 1))
    return float(costs["render"]["marginal_s"]) * cores / max(1, cpus_per_task)


def scoring_seconds_per_pair(args: argparse.Namespace, gpus_per_task: int, cpus_per_task: int) -> dict[str, float]:
    """Seconds per score pair in one job, per calibrated evaluator, from ``--costs`` or the
    shipped calibration: its GPU timing when the job has a GPU, else its CPU timing spread
    over the job's cores."""
    from harness.measure.cluster_estimate import load_calibration

    costs, _ = load_calibration(getattr(args, "costs", None))
    cores = int(costs.get("host", {}).get("cores", 1))
    out: dict[str, float] = {}
    for evaluator, devices in costs.get("scoring", {}).items():
        gpu = next((m for d, m in devices.items() if d.startswith("cuda")), None)
        if gpus_per_task and gpu is not None:
            out[evaluator] = float(gpu["per_pair_s"])
        elif "cpu" in devices:
            out[evaluator] = float(devices["cpu"]["per_pair_s"]) * cores / max(1, cpus_per_task)
    return out


def slurm_warm_options(args: argparse.Namespace) -> dict[str, object]:
    """``warm_on(..., **options)`` for ``--backend slurm``."""
    options = options_from_args(args)
    return {"options": options, "seconds_per_render": seconds_per_render(args, options.cpus_per_task),
            "only_shards": getattr(args, "shards", None), "log": lambda text: print(text, flush=True)}  # fmt: skip


#: the kind of shard -> (the flag naming shards, the flag of their size, extra flags of a retry)
RETRY_FLAGS = {
    "render": ("--shards", "--shard-size", ()),
    "score": ("--score-shards", "--score-shard-groups", ("--skip-render",)),
}


def retry_command(argv: Sequence[str], kind: str, failed: Sequence[int], size: int) -> str:
    """The command line that reruns only the ``failed`` shards of ``kind``: ``argv`` (the
    command and its arguments) with any earlier shard selection and size replaced."""
    shards_flag, size_flag, extra = RETRY_FLAGS[kind]
    drop = {"--shards", "--shard-size", "--score-shards", "--score-shard-groups"}
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in drop:
            skip = True
            continue
        if arg.split("=", 1)[0] in drop or arg in extra:
            continue
        out.append(arg)
    out += [*extra, size_flag, str(size), shards_flag, format_shards(failed)]
    return "t3d-audit " + " ".join(shlex.quote(a) for a in out)


def report_failed_shards(kind: str, failed: dict[int, str], size: int, args: argparse.Namespace) -> None:
    """Print (stderr) the failed shards of ``kind`` (``render``, ``score``) and the command
    that retries only them."""
    if not failed:
        return
    print(f"{len(failed)} {kind} shard(s) failed: {format_shards(list(failed))}", file=sys.stderr)
    for i, why in sorted(failed.items()):
        print(f"  {kind} shard {i}: {why}", file=sys.stderr)
    argv = getattr(args, "argv", None)
    if argv:
        print(f"retry only those: {retry_command(argv, kind, list(failed), size)}", file=sys.stderr)
