"""Warm the render cache: render every job of a plan, resumably, over several processes.

Resumable by construction: each finished render is published to the content-addressed cache
immediately, and a restart skips every job whose entry exists, so after Ctrl-C or a crash
nothing is rendered twice. Jobs are grouped by scene identity and a whole group goes to one
worker process, so each scene is built into Blender once per process.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue as queue_mod
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from pathlib import Path

from harness.core.errors import AuditError, RenderError
from harness.render import resource_limits
from harness.render.cache import RenderCache
from harness.render.job_plan import RenderJob
from harness.render.service import RenderRequest, RenderService
from harness.render.settings import THREADS_ENV, core_share
from harness.render.store_cache import StoreRenderCache, open_render_cache
from harness.scenes.model import Scene, scene_identity

Progress = Callable[[int], None]  # called with the number of renders just finished


@dataclass
class WarmResult:
    """Outcome of a warm run: counts and the failures (``scene id [config]: reason``)."""

    total: int
    cached: int
    rendered: int = 0
    failures: list[str] = field(default_factory=list)
    retries: int = 0  # renders redone after their worker died (Ray backend)


def resolve_jobs(
    jobs: Sequence[RenderJob],
    scenes: Sequence[Scene],
    scene_root: Path,
    identity_of: Callable[[Scene], str] | None = None,
    probe_fn: Callable[[Scene, str], Scene] | None = None,
) -> tuple[list[RenderRequest], list[str]]:
    """Turn plan jobs into render requests: probe-edited scenes built once, identities hashed once.

    ``identity_of`` defaults to :func:`scene_identity` against ``scene_root``; ``probe_fn``
    (required when a job has a probe) returns the probe-edited scene. A probe that cannot
    apply (``AuditError``) drops its job and is returned as a failure reason, as the audit
    records it as a failed measurement.
    """
    by_id = {s.id: s for s in scenes}
    ident = identity_of or (lambda s: scene_identity(s, scene_root))
    memo: dict[tuple[str, str | None], tuple[Scene, str] | None] = {}
    out: list[RenderRequest] = []
    failures: list[str] = []
    for job in jobs:
        k = (job.scene_id, job.probe)
        if k not in memo:
            scene = by_id[job.scene_id]
            if job.probe is not None:
                if probe_fn is None:
                    raise RenderError(f"job {job} needs a probe function", where="warm")
                try:
                    scene = probe_fn(scene, job.probe)
                except AuditError as exc:
                    failures.append(f"scene {job.scene_id}: probe {job.probe} failed: {exc}")
                    memo[k] = None
                    continue
            memo[k] = (scene, ident(scene))
        resolved = memo[k]
        if resolved is not None:
            out.append(RenderRequest(resolved[0], Path(scene_root), resolved[1], job.cfg))
    return out, failures


def pending(
    requests: Sequence[RenderRequest], cache: RenderCache | StoreRenderCache, device: str = "cpu"
) -> list[RenderRequest]:
    """The requests whose cache entry does not exist yet (duplicates removed)."""
    seen: set[str] = set()
    out = []
    for r in requests:
        key = cache.key(r.identity, r.cfg, device)
        if key not in seen and not cache.contains(key):
            seen.add(key)
            out.append(r)
    return out


def scene_groups(requests: Sequence[RenderRequest]) -> list[list[RenderRequest]]:
    """Requests grouped by scene identity, largest group first (better load balance)."""
    groups: dict[str, list[RenderRequest]] = {}
    for r in requests:
        groups.setdefault(r.identity, []).append(r)
    return sorted(groups.values(), key=len, reverse=True)


FOUND = "\0found"  # report() message: the entry was published meanwhile (by another run)


def _render_group(
    service: RenderService, group: Sequence[RenderRequest], report: Callable[[str | None], None]
) -> None:
    """Render one scene's requests; ``report(None)`` per render made here, ``report(FOUND)``
    per entry another process published meanwhile, ``report(reason)`` per failure."""
    for r in group:
        before = service.rendered
        try:
            service.render(r.scene, r.scene_root, r.identity, r.cfg)
        except RenderError as exc:
            report(str(exc))
        except MemoryError:  # under a worker's memory limit (harness.render.resource_limits)
            report(
                f"scene {r.scene.id}: {resource_limits.out_of_memory(resource_limits.memory_limit())}"
            )
        else:
            report(None if service.rendered > before else FOUND)


# -- worker processes ------------------------------------------------------------------------

_WORKER: dict[str, object] = {}


def _is_blender_scripts_dir(entry: str) -> bool:
    """Whether a ``sys.path`` entry is one Blender adds after ``import bpy`` (its scripts dirs)."""
    parts = Path(entry).parts
    return "bpy" in parts and "scripts" in parts[parts.index("bpy") :]


def init_render_process(threads: int) -> None:
    """Prepare a spawned process to render with ``threads`` Cycles threads.

    Call it first thing in the process (a process-pool initializer)."""
    # a spawned worker inherits the parent's sys.path; if the parent had imported bpy, that
    # holds Blender's scripts/modules, whose pure-Python "bpy" shadows the real module
    sys.path[:] = [p for p in sys.path if not _is_blender_scripts_dir(p)]
    # one Cycles thread pool per core, not one per process on every core (a user setting wins)
    os.environ.setdefault(THREADS_ENV, str(threads))


def _init_worker(
    q: object,
    cache_root: str,
    timeout_s: float,
    device: str,
    threads: int,
    memory: int | None = None,
    deadline: float = 0.0,
) -> None:
    if device == "cpu":  # the CUDA driver reserves more address space than any limit allows
        resource_limits.apply_memory_limit(memory)
    init_render_process(threads)
    _WORKER["queue"] = q
    _WORKER["service"] = RenderService(cache_root, timeout_s=timeout_s, device=device)
    _WORKER["deadline"] = deadline


def _worker_group(group: list[RenderRequest]) -> None:
    q, deadline = _WORKER["queue"], _WORKER["deadline"]
    for request in group:
        # SIGALRM's default action ends the process even inside Blender's C code; the parent
        # reports the death as a typed error (_worker_died)
        if deadline:
            signal.setitimer(signal.ITIMER_REAL, deadline)
        try:
            _render_group(_WORKER["service"], [request], q.put)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


#: Seconds to wait for a dead worker's exit status (the pool may not have reaped it yet).
REAP_WAIT_S = 5.0


def _worker_died(
    workers: Sequence[BaseProcess], device: str, memory: int | None, deadline: float
) -> RenderError:
    """The typed error of a render worker that died (its deadline, an abort, the OOM killer).
    ``workers``: every worker process the pool started; the dead one is waited for briefly, as
    a broken pool can be noticed before its process is reaped and has an exit status."""
    end = time.monotonic() + REAP_WAIT_S
    dead = None
    while dead is None:
        codes = [p.exitcode for p in workers]
        dead = next((c for c in codes if c is not None and c < 0), None)
        if dead is not None or time.monotonic() > end:
            break
        time.sleep(0.05)
    why = None
    if dead == -signal.SIGALRM:
        why = (
            f"a render ran past the {deadline:g} s deadline, {resource_limits.RENDER_DEADLINE_ENV}"
        )
    elif dead is not None:
        why = resource_limits.describe_death(dead, memory if device == "cpu" else None)
    return RenderError(
        f"a render worker process died{f' ({why})' if why else ''}; renders finished before "
        "it are cached",
        where="warm",
        hint=f"rerun to resume; render the failing scene alone to see its error; "
        f"{resource_limits.MEMORY_ENV} sets the workers' memory limit",
    )


def check_device(device: str) -> None:
    """Raise :class:`RenderError` unless ``device`` is ``cpu`` or ``gpu``."""
    if device not in ("cpu", "gpu"):
        raise RenderError(f"warm renders on 'cpu' or 'gpu', not {device!r}", where="--device")


def begin_warm(
    requests: Sequence[object], cache: object, device: str, on_start: Callable[[int, int], None] | None
) -> tuple[list[object], WarmResult]:
    """The start of every warm backend: stale temp entries pruned, the requests still to render
    and a result counting the cached ones; ``on_start(cached, to_render)`` is told both."""
    cache.prune_tmp()
    todo = pending(requests, cache, device)
    result = WarmResult(total=len(requests), cached=len(requests) - len(todo))
    if on_start is not None:
        on_start(result.cached, len(todo))
    return todo, result


def warm(
    requests: Sequence[RenderRequest],
    cache_root: Path | str,
    *,
    jobs: int = 1,
    timeout_s: float = 600.0,
    device: str = "cpu",
    progress: Progress | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> WarmResult:
    """Render every request missing from the cache at ``cache_root`` (a local render-cache
    directory, or a store URL: see :func:`harness.render.store_cache.open_render_cache`);
    returns the counts.

    ``jobs`` worker processes (1: in this process). ``on_start(cached, to_render)`` is called
    once before rendering, ``progress(n)`` after each finished render. Render failures are
    collected, not raised; KeyboardInterrupt stops the workers and propagates (finished
    renders stay cached).
    """
    check_device(device)
    cache = open_render_cache(cache_root)
    todo, result = begin_warm(requests, cache, device, on_start)
    tick = progress or (lambda n: None)

    def record(reason: str | None) -> None:
        if reason is None:
            result.rendered += 1
        elif reason == FOUND:
            result.cached += 1
        else:
            result.failures.append(reason)
        tick(1)

    if not todo:
        return result
    if jobs <= 1:
        service = RenderService(cache_root, timeout_s=timeout_s, device=device)
        for group in scene_groups(todo):
            _render_group(service, group, record)
        return result

    memory = resource_limits.memory_limit()  # a bad variable fails here, before any worker
    deadline = resource_limits.render_deadline(timeout_s)
    ctx = mp.get_context("spawn")  # a fresh interpreter per worker: bpy state is per process
    q = ctx.Queue()
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(q, str(cache_root), timeout_s, device, core_share(jobs), memory, deadline),
    )
    workers: dict[int, BaseProcess] = {}  # every process the pool started, kept past its death
    try:
        futures = {pool.submit(_worker_group, g) for g in scene_groups(todo)}
        remaining = len(todo)
        while remaining:
            workers.update(getattr(pool, "_processes", None) or {})
            try:
                record(q.get(timeout=0.2))
                remaining -= 1
                continue
            except queue_mod.Empty:
                pass
            done, _ = wait(futures, timeout=0, return_when=FIRST_EXCEPTION)
            for fut in done:
                if isinstance(fut.exception(), BrokenProcessPool):
                    workers.update(getattr(pool, "_processes", None) or {})
                    raise _worker_died(list(workers.values()), device, memory, deadline) from None
                if fut.exception() is not None:
                    raise fut.exception()  # type: ignore[misc]
            if all(f.done() for f in futures):
                while remaining:  # the workers are done: collect their last messages
                    try:
                        record(q.get(timeout=5.0))
                    except queue_mod.Empty:
                        break
                    remaining -= 1
                break
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.terminate()
        raise
    pool.shutdown(wait=True)
    return result
