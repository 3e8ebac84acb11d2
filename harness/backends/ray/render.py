"""Warm a render store on Ray: one Blender state per actor, reused across a scene's configs.

Scheduling mirrors the local pool (:mod:`harness.render.cache_warmer`): the missing renders
are grouped by scene identity and each actor works through one scene's group at a time, so
a scene is built into Blender once per actor. The driver keeps one render in flight per
actor, which gives per-render progress, a per-render timeout and per-render retries:

* a render that fails (``RenderError``) is a failure, reported and never stored;
* an actor that dies (process killed, node lost) is replaced, the lease it held is broken,
  and its render is retried on the new actor, up to ``retries`` times;
* a render still running ``timeout_s`` (plus a grace period) after it started has its actor
  killed and is reported as timed out (Cycles' own time limit normally stops it first);
* a render whose key another machine has leased comes back ``busy`` and is retried after
  the others, so concurrent ``warm`` runs on one store never render a key twice.

Actors declare ``num_cpus`` (their Cycles threads) and, with ``device="gpu"``, ``num_gpus``.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from harness.backends.ray.cluster import cluster_cpus, connect
from harness.backends.shared import BackendError, shared_render_cache
from harness.core.errors import RenderError
from harness.render.cache_warmer import WarmResult, begin_warm, check_device, scene_groups
from harness.render.service import RenderRequest
from harness.render.store_cache import PREFIX
from harness.store import leases

TIMEOUT_GRACE_S = 30.0
BUSY_RETRY_S = 0.5


class RenderWorker:
    """The body of a render actor: one :class:`RenderService` (one Blender state) per process.

    ``fault_marker`` is a fault-injection hook for tests: the first worker to create that
    file fails as ``fault_mode`` says after rendering and before publishing: ``exit`` ends its
    process abruptly, as a killed worker would; ``hang`` never returns, as a stuck one.
    """

    def __init__(self, store_url: str, timeout_s: float, device: str, threads: int,
                 fault_marker: str | None = None, fault_mode: str = "exit"):  # fmt: skip
        from harness.render.cache_warmer import _is_blender_scripts_dir
        from harness.render.service import RenderService
        from harness.render.settings import THREADS_ENV

        sys.path[:] = [p for p in sys.path if not _is_blender_scripts_dir(p)]
        os.environ[THREADS_ENV] = str(threads)
        self.service = RenderService(store_url, timeout_s=timeout_s, device=device)
        self.fault_marker = fault_marker
        self.fault_mode = fault_mode

    def owner(self) -> str:
        """``host:pid`` of this actor: the owner written into its leases."""
        return f"{socket.gethostname()}:{os.getpid()}"

    def start(self) -> str:
        """Start this actor's Blender (factory reset, render device) and return :meth:`owner`.

        The driver calls it before the actor gets work, so that a render's timeout measures
        the render and never Blender's start-up, which on a loaded machine can take longer
        than a short timeout (a replacement actor's first render would otherwise time out)."""
        self.service.start()
        return self.owner()

    def render(self, request: RenderRequest) -> tuple[str, str | None]:
        """``(status, reason)``: ``rendered``, ``cached``, ``busy`` or ``failed`` + message."""
        if self.fault_marker:
            self._arm_fault()
        try:
            status = self.service.try_render(request.scene, request.scene_root, request.identity,
                                             request.cfg)  # fmt: skip
        except RenderError as exc:
            return "failed", str(exc)
        return status, None

    def _arm_fault(self) -> None:
        try:
            fd = os.open(self.fault_marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(fd)
        real = self.service._render_fn
        mode = self.fault_mode

        def dying(*args: object) -> object:
            fn = real(*args)

            def render_then_die() -> object:
                fn()
                if mode == "hang":
                    while True:
                        time.sleep(60)
                os._exit(1)  # mid-run: rendered, not published, lease still held

            return render_then_die

        self.service._render_fn = dying  # type: ignore[method-assign]


@dataclass
class _Slot:
    """One actor and the work it holds: its scene group and the render in flight."""

    actor: object
    owner: str
    group: deque = field(default_factory=deque)
    ref: object = None
    request: RenderRequest | None = None
    started: float = 0.0


def warm_ray(
    requests: Sequence[RenderRequest],
    store_url: str,
    *,
    address: str | None = None,
    actors: int | None = None,
    cpus_per_actor: int = 1,
    gpus_per_actor: float = 1.0,
    timeout_s: float = 600.0,
    device: str = "cpu",
    retries: int = 2,
    progress: Callable[[int], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    timeout_grace_s: float = TIMEOUT_GRACE_S,
    fault_marker: str | None = None,
    fault_mode: str = "exit",
) -> WarmResult:
    """Render every request missing from the store at ``store_url`` on Ray; returns the counts.

    ``actors`` defaults to the cluster's CPUs / ``cpus_per_actor``. ``WarmResult.rendered``
    counts renders made by this run, ``cached`` the ones found already published (also those
    another run published meanwhile); ``retries`` how often a dead worker's render was redone.
    A render still running ``timeout_s + timeout_grace_s`` after it was sent has its actor
    killed and counts as a failure.
    """
    check_device(device)
    cache = shared_render_cache(store_url, "ray")
    todo, result = begin_warm(requests, cache, device, on_start)
    tick = progress or (lambda n: None)
    if not todo:
        return result

    ray = connect(address)
    from ray.exceptions import GetTimeoutError, RayActorError, WorkerCrashedError

    n = actors or max(1, cluster_cpus(ray) // max(1, cpus_per_actor))
    n = min(n, len(todo))
    options: dict[str, object] = {"num_cpus": cpus_per_actor, "max_restarts": 0}
    if device == "gpu":
        options["num_gpus"] = gpus_per_actor
    remote_cls = ray.remote(RenderWorker).options(**options)
    args = (store_url, timeout_s, device, cpus_per_actor, fault_marker, fault_mode)

    def new_slot() -> _Slot:
        actor = remote_cls.remote(*args)
        try:
            owner = ray.get(actor.start.remote(), timeout=300)
        except (GetTimeoutError, RayActorError) as exc:
            raise BackendError(f"a Ray render actor did not start: {exc}", where="--backend ray",
                               hint="check the cluster has free CPUs/GPUs (ray status)") from exc  # fmt: skip
        return _Slot(actor, owner)

    groups = deque(deque(g) for g in scene_groups(todo))
    deferred: deque[tuple[float, RenderRequest]] = deque()
    attempts: Counter[str] = Counter()
    slots = [new_slot() for _ in range(n)]
    device_key = device

    def key_of(r: RenderRequest) -> str:
        return cache.key(r.identity, r.cfg, device_key)

    def next_request(slot: _Slot) -> RenderRequest | None:
        if not slot.group and groups:
            slot.group = groups.popleft()
        if slot.group:
            return slot.group.popleft()
        if deferred and time.monotonic() - deferred[0][0] >= BUSY_RETRY_S:
            return deferred.popleft()[1]
        return None

    def record(reason: str | None, *, cached: bool = False) -> None:
        if reason is not None:
            result.failures.append(reason)
        elif cached:
            result.cached += 1
        else:
            result.rendered += 1
        tick(1)

    def replace(slot: _Slot) -> None:
        """A fresh actor for ``slot``; the lease its dead or killed actor held is broken."""
        assert slot.request is not None
        leases.release_if_owner(cache.store, f"{PREFIX}/{key_of(slot.request)}", slot.owner)
        ray.kill(slot.actor, no_restart=True)
        fresh = new_slot()
        slot.actor, slot.owner = fresh.actor, fresh.owner

    try:
        while True:
            for slot in slots:
                if slot.ref is None:
                    req = next_request(slot)
                    if req is not None:
                        slot.request, slot.started = req, time.monotonic()
                        slot.ref = slot.actor.render.remote(req)
            busy = [s for s in slots if s.ref is not None]
            if not busy:
                if deferred:
                    time.sleep(BUSY_RETRY_S)
                    continue
                break
            ready, _ = ray.wait([s.ref for s in busy], num_returns=1, timeout=0.5)
            for slot in busy:
                if slot.ref in ready:
                    req = slot.request
                    assert req is not None
                    try:
                        status, reason = ray.get(slot.ref)
                    except (RayActorError, WorkerCrashedError) as exc:
                        slot.ref = None
                        k = key_of(req)
                        attempts[k] += 1
                        replace(slot)
                        if attempts[k] <= retries:
                            result.retries += 1
                            slot.group.appendleft(req)
                        else:
                            record(f"scene {req.scene.id}: render worker died {attempts[k]} times "
                                   f"({type(exc).__name__})")  # fmt: skip
                        continue
                    slot.ref = None
                    if status == "busy":
                        deferred.append((time.monotonic(), req))
                    elif status == "failed":
                        record(reason)
                    else:
                        record(None, cached=status == "cached")
                elif time.monotonic() - slot.started > timeout_s + timeout_grace_s:
                    req = slot.request
                    assert req is not None
                    slot.ref, owner = None, slot.owner
                    replace(slot)
                    record(f"scene {req.scene.id}: render timed out after {timeout_s:g} s "
                           f"(worker {owner} killed)")  # fmt: skip
    finally:
        for slot in slots:
            ray.kill(slot.actor, no_restart=True)
    return result
