"""Running shards as submitit jobs, with retries: the part every Slurm workload shares.

:func:`run_shards` submits one job per shard (a job array on Slurm, at most
``array_parallelism`` at once; processes on this machine for the ``local`` executor; in this
process for ``debug``), waits for them, and resubmits a shard whose job failed (killed,
preempted past its requeues, node lost, an exception) until it has failed
``max_failures`` times; then it is reported as failed, with the error of its last attempt.
A shard's work is published to the store as it goes, so a resubmitted or requeued shard
only does what its earlier attempt did not finish.

A job body is a :class:`ShardBody`: submitit's ``Checkpointable``, so on Slurm a job that
reaches its time limit or is preempted is requeued with the same arguments (up to
``max_failures`` times) instead of failing.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from harness.backends.shared import BackendError
from harness.backends.slurm.options import SlurmOptions, make_executor, require_submitit

POLL_S = 0.2
#: seconds a local job's result file is waited for after its process ended (submitit waits
#: 15 s, for a shared filesystem's caches; a killed job never writes one)
LOCAL_RESULTS_TIMEOUT_S = 2


class ShardBody:
    """A job body: ``body(*args)`` runs one shard. Subclasses implement ``__call__``.

    ``checkpoint`` is what submitit calls on a Slurm timeout or preemption: it requeues the
    same call (the rerun resumes from the store)."""

    def checkpoint(self, *args: object, **kwargs: object) -> object:
        submitit = require_submitit()
        return submitit.helpers.DelayedSubmission(self, *args, **kwargs)


@dataclass
class ShardRun:
    """Outcome of :func:`run_shards`: each finished shard's result, each failed shard's last
    error, and how many attempts failed per shard (finished ones included)."""

    results: dict[int, object] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    failed_attempts: Counter[int] = field(default_factory=Counter)


def describe_failure(exc: BaseException) -> str:
    """One line for a failed job: its exception's type and first line (a submitit
    ``FailedJobError`` carries the job's log tail; only its first line is kept)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def run_shards(
    options: SlurmOptions,
    name: str,
    body: Callable[..., object],
    args: dict[int, Sequence[object]],
    *,
    on_result: Callable[[int, object], None] | None = None,
    on_failure: Callable[[int, str, bool], None] | None = None,
) -> ShardRun:
    """Run ``body(*args[i])`` for every shard ``i`` (see the module docstring).

    ``on_result(i, value)`` is called as each shard finishes; ``on_failure(i, why, final)``
    after each failed attempt (``final``: no attempt is left)."""
    executor = make_executor(options, name)
    run = ShardRun()
    queue: deque[int] = deque(sorted(args))
    inflight: dict[int, object] = {}
    limit = 1 if options.executor == "debug" else options.array_parallelism

    def finish(i: int, job: object) -> None:
        try:  # exception() first: a debug job's result() would open a debugger on failure
            exc = job.exception()
            value = job.result() if exc is None else None
        except Exception as raised:  # a job that never completed (killed, cancelled)
            exc = raised
        if exc is not None:  # one shard's failure is its own: retried, then recorded
            run.failed_attempts[i] += 1
            why = describe_failure(exc)
            final = run.failed_attempts[i] >= options.max_failures
            if final:
                run.failed[i] = why
            else:
                queue.append(i)
            if on_failure is not None:
                on_failure(i, why, final)
            return
        run.results[i] = value
        if on_result is not None:
            on_result(i, value)

    while queue or inflight:
        if options.executor == "slurm" and queue:  # one array; Slurm runs `limit` at once
            batch = list(queue)
            queue.clear()
            try:
                jobs = executor.map_array(body, *zip(*(args[i] for i in batch), strict=True))
            except Exception as exc:  # sbatch missing or refusing (partition, limits, account)
                raise BackendError(f"cannot submit to Slurm: {describe_failure(exc)}", where="--backend slurm",
                                   hint="run on a Slurm login node (sbatch on PATH) with a valid "
                                   "--partition and --time-limit, or pass --slurm-executor local") from exc  # fmt: skip
            inflight.update(zip(batch, jobs, strict=True))
        while queue and len(inflight) < limit:
            i = queue.popleft()
            inflight[i] = job = executor.submit(body, *args[i])
            if options.executor == "local":  # results on a local disk: no wait for NFS caches
                job._results_timeout_s = LOCAL_RESULTS_TIMEOUT_S
        if options.executor == "debug":  # a debug job runs when its result is asked for
            done = list(inflight)
        else:
            done = [i for i, job in inflight.items() if job.done()]
        for i in done:
            finish(i, inflight.pop(i))
        if not done:
            time.sleep(POLL_S)
    return run
