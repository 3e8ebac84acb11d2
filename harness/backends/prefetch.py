"""What renders a search batch's missing renders before it is measured, on a chosen backend."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.backends import BACKENDS, warm_on
from harness.backends.slurm.options import load_options
from harness.core.errors import AuditError

if TYPE_CHECKING:
    from harness.render.service import RenderRequest
    from harness.search.evaluate import Prefetch


def prefetch_for(backend: str, cache_root: Path | str, jobs: int | None, address: str | None = None,
                 slurm: dict[str, object] | None = None) -> Prefetch | None:  # fmt: skip
    """Nothing for ``inline`` (renders are made one by one as measured), else a function that
    renders requests with :func:`harness.backends.warm_on` on ``backend`` into ``cache_root``
    (a render-cache dir or a store URL). ``local``: ``jobs`` processes; ``ray``: the cluster at
    ``address``; ``slurm``: jobs with the options ``slurm``, default ``[tool.t3d-audit.slurm]``
    of ``./pyproject.toml`` (see :func:`harness.backends.slurm.render.warm_slurm`)."""
    if backend == "inline":
        return None
    if backend not in BACKENDS:
        raise AuditError(f"unknown backend {backend!r}", where="--backend",
                         hint="use inline, local, ray or slurm")  # fmt: skip
    options: dict[str, object] = {"address": address} if backend == "ray" else {}
    if backend == "slurm":
        options = dict(slurm) if slurm is not None else {"options": load_options()}

    def prefetch(requests: Sequence[RenderRequest]) -> None:
        warm_on(backend, requests, cache_root, jobs=jobs, **options)

    return prefetch
