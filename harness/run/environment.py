"""Every ``T3D_AUDIT_*`` variable with a value to check, and :func:`check_environment`, which reads
them all when a command or a run starts (a bad value: one line naming it, before any work).

The readers live beside what they configure (``harness.core.envvars`` for the shared ones, the
renderer's resource limits, the glTF limits, the store options, the input bounds); this table
gathers them, so it sits above those stages.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from types import ModuleType

from harness.core.envvars import (
    OFFLINE_ENV,
    RENDER_DEVICE_ENV,
    RENDER_THREADS_ENV,
    SCORER_DEADLINE_ENV,
    flag,
    raw_value,
    render_device,
    render_threads,
    scorer_deadline,
    seconds,
)
from harness.core.errors import AuditError


def _resource(name: str) -> Callable[[Mapping[str, str] | None], object]:
    def read(environ: Mapping[str, str] | None) -> object:
        from harness.render import resource_limits

        env = dict(os.environ if environ is None else environ)
        if name == "memory":
            return resource_limits.memory_limit(env)
        if name == "import":
            return resource_limits.import_timeout(env)
        return resource_limits.render_deadline(None, env)

    return read


def _gltf_limits(environ: Mapping[str, str] | None) -> object:
    from harness.scenes.importers.gltf_io import GltfLimits

    return GltfLimits.from_env(dict(os.environ if environ is None else environ))


def _bounds() -> ModuleType:
    from harness.core import bounded_input
    return bounded_input


def _env(environ: Mapping[str, str] | None) -> dict[str, str]:
    return dict(os.environ if environ is None else environ)


def _store_options(environ: Mapping[str, str] | None) -> object:
    from harness.store.stores import OPTIONS_ENV

    raw = raw_value(OPTIONS_ENV, environ)
    if not raw:
        return {}
    try:  # the bounded parser: "[[[[..." (up to 128 KiB in one variable) is no RecursionError
        value = _bounds().loads(raw, where=OPTIONS_ENV)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise AuditError(f"{OPTIONS_ENV} is not a JSON object", where=OPTIONS_ENV,
                         hint='e.g. {"anon": true}, or unset it')  # fmt: skip
    return value


#: every T3D_AUDIT_* variable with a value to check -> its reader (raises AuditError on a bad
#: value). Path variables (T3D_AUDIT_CACHE_DIR, T3D_AUDIT_WEIGHTS_DIR) and the cache key
#: (T3D_AUDIT_CACHE_KEY[_FILE], checked by harness.core.cacheseal where it is used) are not here.
READERS: dict[str, Callable[[Mapping[str, str] | None], object]] = {
    SCORER_DEADLINE_ENV: scorer_deadline,
    RENDER_THREADS_ENV: render_threads,
    OFFLINE_ENV: lambda environ: flag(OFFLINE_ENV, environ),
    RENDER_DEVICE_ENV: render_device,
    "T3D_AUDIT_MEMORY_LIMIT": _resource("memory"),
    "T3D_AUDIT_IMPORT_TIMEOUT": _resource("import"),
    "T3D_AUDIT_RENDER_DEADLINE": _resource("deadline"),
    "T3D_AUDIT_GLTF_LIMITS": _gltf_limits,
    "T3D_AUDIT_STORE_OPTIONS": _store_options,
    "T3D_AUDIT_PROGRESS_INTERVAL": lambda environ: seconds("T3D_AUDIT_PROGRESS_INTERVAL", 30.0, environ),
    "T3D_AUDIT_MAX_INPUT_BYTES": lambda environ: _bounds().max_bytes(_env(environ)),
    "T3D_AUDIT_MAX_JSON_DEPTH": lambda environ: _bounds().max_depth(_env(environ)),
}


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Read every ``T3D_AUDIT_*`` variable of :data:`READERS` that is set; the first bad value
    raises :class:`AuditError` naming it (a command stops before any work)."""
    env = os.environ if environ is None else environ
    for name in sorted(READERS):
        if env.get(name, "").strip():
            try:
                READERS[name](env)
            except AuditError:
                raise
            except (ValueError, OverflowError, TypeError, MemoryError) as exc:  # a reader's gap
                raise AuditError(f"{name} has a value that cannot be read ({type(exc).__name__})",
                                 where=name, hint="give a plain value, or unset it") from None  # fmt: skip
