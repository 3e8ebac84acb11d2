"""Where the work runs: ``local`` (this machine's process pool, the default), ``ray`` (a Ray
cluster: one Blender state per render actor, one model per scoring actor) or ``slurm`` (job
arrays through submitit: the plan cut into shards, one job per shard).

Both backends publish into the same content-addressed caches (a local directory or a shared
store, :mod:`harness.store`), so results are identical whichever ran them. Ray is imported
only when the ``ray`` backend is used (``pip install 't3d-audit[distributed]'``), submitit
only for ``slurm`` (``pip install 't3d-audit[slurm]'``).

The interface is one call per kind of work, the same for every backend:

* :func:`warm_on` renders render requests into a cache location;
* scoring: :func:`harness.commands.materialize.score_plan` with ``backend=``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.render.cache_warmer import WarmResult
    from harness.render.service import RenderRequest

BACKENDS = ("local", "ray", "slurm")


def warm_on(
    backend: str,
    requests: Sequence[RenderRequest],
    location: Path | str,
    *,
    jobs: int | None = None,
    timeout_s: float = 600.0,
    device: str = "cpu",
    progress: Callable[[int], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    **backend_options: object,
) -> WarmResult:
    """Render every request missing at ``location`` (a render-cache dir or a store URL) on
    ``backend``. ``jobs``: worker processes (local, default 1) or render actors (ray, default
    the cluster's CPUs / ``cpus_per_actor``; unused on slurm). ``backend_options``: for ray
    ``address``, ``cpus_per_actor``, ``gpus_per_actor``, ``retries`` (see
    :func:`harness.backends.ray.render.warm_ray`); for slurm ``options`` (a
    :class:`~harness.backends.slurm.options.SlurmOptions`), ``seconds_per_render``,
    ``only_shards``, ``log`` (see :func:`harness.backends.slurm.render.warm_slurm`)."""
    if backend == "local":
        from harness.render.cache_warmer import warm

        return warm(requests, location, jobs=jobs or 1, timeout_s=timeout_s, device=device,
                    progress=progress, on_start=on_start)  # fmt: skip
    if backend == "ray":
        from harness.backends.ray.render import warm_ray

        return warm_ray(requests, str(location), actors=jobs, timeout_s=timeout_s, device=device,
                        progress=progress, on_start=on_start, **backend_options)  # fmt: skip
    if backend == "slurm":
        from harness.backends.slurm.options import SlurmOptions, require_submitit
        from harness.backends.slurm.render import warm_slurm

        require_submitit()
        backend_options.setdefault("options", SlurmOptions())
        return warm_slurm(requests, str(location), timeout_s=timeout_s, device=device,
                          progress=progress, on_start=on_start, **backend_options)  # fmt: skip
    from harness.backends.shared import BackendError

    raise BackendError(f"unknown backend {backend!r}", where="--backend",
                       hint=f"choose one of {', '.join(BACKENDS)}")  # fmt: skip
