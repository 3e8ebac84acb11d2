"""Connecting to Ray: the lazy import, ``ray.init`` for ``--address``, and the environment
forwarded to workers (store credentials and endpoints, harness settings)."""

from __future__ import annotations

import os
from types import ModuleType

from harness.backends.shared import BackendError

INSTALL_HINT = "pip install 't3d-audit[distributed]'"
#: environment variables every Ray worker gets from the driver (store access, harness settings)
FORWARDED_PREFIXES = ("T3D_AUDIT_", "AWS_", "GOOGLE_", "AZURE_", "FSSPEC_", "HF_", "TRANSFORMERS_")


def require_ray() -> ModuleType:
    """The ``ray`` module, or a :class:`BackendError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendError(
            "--backend ray needs the ray package, which is not installed",
            where="--backend",
            hint=INSTALL_HINT,
        ) from None
    return ray


def forwarded_env() -> dict[str, str]:
    """The driver's variables that workers need (see :data:`FORWARDED_PREFIXES`)."""
    return {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_PREFIXES)}


def connect(address: str | None = None, *, num_cpus: int | None = None) -> object:
    """Ray, initialised: already initialised (e.g. by a test) is used as is; ``address``
    ``auto`` joins the cluster of this machine, ``ray://host:port`` a remote one through Ray
    Client, ``None`` or ``local`` starts a private one on this machine (``num_cpus`` cores)."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    env = {"env_vars": forwarded_env()}
    kwargs: dict[str, object] = {"log_to_driver": False, "runtime_env": env}
    if address in (None, "", "local"):
        kwargs.update(include_dashboard=False, num_cpus=num_cpus)
    else:
        kwargs["address"] = address
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise BackendError(
            f"cannot connect to Ray at {address!r}: {exc}",
            where="--address",
            hint="start the cluster first (ray start --head) or pass --address ray://HOST:10001",
        ) from exc
    return ray


def cluster_cpus(ray: ModuleType) -> int:
    """Whole CPUs the cluster offers (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
