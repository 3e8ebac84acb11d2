"""Warm a render store on Slurm (through submitit): the plan's renders cut into shards, one
job of a job array per shard, every render published to the store as it finishes.

* Shards are cut from the whole plan (:mod:`harness.backends.shards`), so shard numbers are
  stable and ``--shards 3,7`` reruns exactly the shards a run reported as failed.
* A job that dies (killed, out of memory, node lost, preempted past its requeues) is
  resubmitted up to ``max_failures`` times; its rerun finds the renders the dead attempt
  published and renders only the rest. The leases a dead attempt held are broken by the
  next attempt of the same shard (each attempt writes its ``host:pid`` to an owners file in
  the submitit folder first), so no render waits for a lease to expire.
* A render that fails (``RenderError``) is a failure with its reason, never stored; a shard
  whose attempts are spent reports each render it left unpublished as failed.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.shards import format_shards, render_shards, renders_per_shard
from harness.backends.shared import BackendError, shared_render_cache
from harness.backends.slurm.jobs import ShardBody, run_shards
from harness.backends.slurm.options import SlurmOptions
from harness.core.errors import RenderError
from harness.render.cache_warmer import WarmResult, check_device, pending
from harness.render.service import RenderRequest
from harness.render.store_cache import PREFIX, StoreRenderCache
from harness.store import leases

BUSY_RETRY_S = 0.5
#: seconds per render used to size shards when no calibration is given (512 px, 32 samples
#: on one core of the shipped 2-core calibration, rounded up)
DEFAULT_SECONDS_PER_RENDER = 40.0


@dataclass
class SlurmWarmResult(WarmResult):
    """:class:`WarmResult` plus the shard bookkeeping of a Slurm run."""

    shards: int = 0
    shard_size: int = 0
    #: renders a job found published by an earlier attempt of its shard (or by a concurrent
    #: run) since this run started, and did not redo; counted in ``rendered`` too
    resumed: int = 0
    failed_shards: dict[int, str] = field(default_factory=dict)


def owners_file(folder: str, name: str, shard: int) -> Path:
    """Where each attempt of shard ``shard`` of run ``name`` writes its ``host:pid``."""
    return Path(folder).expanduser() / "owners" / f"{name}-{shard}.txt"


class RenderShard(ShardBody):
    """Job body: render one shard's requests into the store (see the module docstring).

    ``fault_marker`` is a fault-injection hook for tests: the first attempt to create that
    file stops after ``fault_after`` published renders, in the middle of the next one
    (rendered, not published, its lease held): ``fault_mode`` ``exit`` ends its process
    abruptly, as a killed job; ``hang`` never returns, for a test to kill it from outside."""

    def __call__(self, store_url: str, requests: list[RenderRequest], timeout_s: float, device: str,
                 threads: int, owners: str, fault_marker: str | None = None,
                 fault_after: int = 1, fault_mode: str = "exit") -> list[tuple[str, str | None]]:  # fmt: skip
        from harness.render.cache_warmer import init_render_process
        from harness.render.service import RenderService

        init_render_process(threads)
        service = RenderService(store_url, timeout_s=timeout_s, device=device)
        cache = service.cache
        _break_dead_leases(cache, requests, device, Path(owners))
        if fault_marker and _claim(fault_marker):
            _arm_fault(service, fault_after, fault_mode)
        out: list[tuple[str, str | None]] = [("", None)] * len(requests)
        todo = list(range(len(requests)))
        deadline = time.monotonic() + timeout_s + leases_ttl_grace()
        while todo:
            busy = []
            for i in todo:
                r = requests[i]
                try:
                    status = service.try_render(r.scene, r.scene_root, r.identity, r.cfg)
                except RenderError as exc:
                    out[i] = ("failed", str(exc))
                    continue
                if status == "busy":
                    busy.append(i)
                else:
                    out[i] = (status, None)
            todo = busy
            if todo and time.monotonic() > deadline:
                for i in todo:
                    out[i] = ("failed", f"scene {requests[i].scene.id}: another writer held the render's "
                                        f"lease past its expiry")  # fmt: skip
                break
            if todo:
                time.sleep(BUSY_RETRY_S)
        return out


def leases_ttl_grace() -> float:
    """Seconds past the render timeout a busy key is waited for (a lease's TTL is the render
    timeout + 120 s, :mod:`harness.store.leases`)."""
    return 120.0


def _claim(marker: str) -> bool:
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def _arm_fault(service: object, after: int, mode: str) -> None:
    real = service._render_fn

    def dying(*args: object) -> object:
        fn = real(*args)

        def render_then_die() -> object:
            image = fn()
            if service.rendered > after:  # mid-run: rendered, not published, lease still held
                while mode == "hang":
                    time.sleep(60)
                os._exit(1)
            return image

        return render_then_die

    service._render_fn = dying


def _break_dead_leases(cache: StoreRenderCache, requests: Sequence[RenderRequest], device: str,
                       owners: Path) -> None:  # fmt: skip
    """Break the leases earlier attempts of this shard left (they are over: this attempt
    runs), then record this attempt as an owner."""
    me = f"{socket.gethostname()}:{os.getpid()}"
    earlier = owners.read_text().split() if owners.is_file() else []
    for owner in sorted(set(earlier) - {me}):
        for r in requests:
            leases.release_if_owner(cache.store, f"{PREFIX}/{cache.key(r.identity, r.cfg, device)}", owner)
    owners.parent.mkdir(parents=True, exist_ok=True)
    with owners.open("a") as f:
        f.write(me + "\n")


def warm_slurm(
    requests: Sequence[RenderRequest],
    store_url: str,
    *,
    options: SlurmOptions,
    timeout_s: float = 600.0,
    device: str = "cpu",
    seconds_per_render: float | None = None,
    only_shards: frozenset[int] | None = None,
    progress: Callable[[int], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    log: Callable[[str], None] | None = None,
    fault_marker: str | None = None,
    fault_after: int = 1,
    fault_mode: str = "exit",
) -> SlurmWarmResult:
    """Render every request missing from the store at ``store_url`` in Slurm jobs; returns
    the counts and the shards that failed.

    The shard size is ``options.shard_size``, else :func:`renders_per_shard` of
    ``seconds_per_render`` (a calibration's, default :data:`DEFAULT_SECONDS_PER_RENDER`)
    and the time limit. ``only_shards`` restricts the run to those shard numbers (a retry).
    ``WarmResult.rendered`` counts renders this run made, ``retries`` resubmitted shards."""
    check_device(device)
    cache = shared_render_cache(store_url, "slurm")
    size = options.shard_size or renders_per_shard(seconds_per_render or DEFAULT_SECONDS_PER_RENDER,
                                                   options.time_limit_min)  # fmt: skip
    cache.prune_tmp()
    unique = pending(requests, _NoCache(cache), device)  # distinct keys, plan order
    shards = render_shards(unique, size)
    chosen = {i: s for i, s in enumerate(shards) if only_shards is None or i in only_shards}
    if only_shards is not None and (unknown := sorted(only_shards - set(range(len(shards))))):
        raise BackendError(f"no shard {format_shards(unknown)}: the plan has {len(shards)} shards of "
                           f"{size} renders", where="--shards",
                           hint="pass the --shard-size the failed run printed with its retry command")  # fmt: skip
    todo = {i: pending(s, cache, device) for i, s in chosen.items()}
    todo = {i: s for i, s in todo.items() if s}
    wanted = sum(len(s) for s in chosen.values())
    result = SlurmWarmResult(total=len(requests), cached=len(requests) - sum(len(s) for s in todo.values()),
                             shards=len(shards), shard_size=size)  # fmt: skip
    if only_shards is not None:
        result.total, result.cached = wanted, wanted - sum(len(s) for s in todo.values())
    if on_start is not None:
        on_start(result.cached, sum(len(s) for s in todo.values()))
    if not todo:
        return result
    tick = progress or (lambda n: None)
    say = log or (lambda text: None)
    name = f"t3d-render-{cache.store.url.rstrip('/').rsplit('/', 1)[-1] or 'store'}"
    threads = options.cpus_per_task
    args = {i: (store_url, s, timeout_s, device, threads, str(owners_file(options.folder, name, i)),
                fault_marker, fault_after, fault_mode) for i, s in todo.items()}  # fmt: skip
    say(f"{len(todo)} of {len(shards)} render shards to run ({size} renders per shard, "
        f"{options.executor} executor)")

    def on_result(i: int, statuses: list[tuple[str, str | None]]) -> None:
        for status, reason in statuses:
            if status == "failed":
                result.failures.append(reason or "render failed")
            else:  # cached: it was pending when the run started, so a job of this run made it
                result.rendered += 1
                result.resumed += status == "cached"
        tick(len(statuses))

    def on_failure(i: int, why: str, final: bool) -> None:
        say(f"render shard {i} failed ({why})" + ("" if final else "; resubmitting it"))
        if not final:
            result.retries += 1

    run = run_shards(options, name, RenderShard(), args, on_result=on_result, on_failure=on_failure)
    for i, why in sorted(run.failed.items()):
        result.failed_shards[i] = why
        left = pending(todo[i], cache, device)
        result.rendered += len(todo[i]) - len(left)  # published by its dead attempts
        for r in left:
            result.failures.append(f"scene {r.scene.id}: render shard {i} failed "
                                   f"{options.max_failures} times ({why})")  # fmt: skip
        tick(len(todo[i]))
    return result


class _NoCache:
    """A cache stand-in whose ``contains`` is always false: :func:`pending` then only
    removes duplicate keys (the plan's distinct renders, in order)."""

    def __init__(self, cache: StoreRenderCache):
        self.key = cache.key

    def contains(self, key: str) -> bool:
        return False
