"""Memory and time bounds for the processes that run Blender on untrusted assets.

A hostile or broken asset can make Blender allocate until the machine runs out of memory, or
run for hours. Blender then dies of SIGABRT (its allocator aborts) or the OOM killer, with no
message. Processes that exist only to run Blender therefore start with an address-space limit
(``RLIMIT_AS``), and their parent waits at most a deadline:

* ``T3D_AUDIT_MEMORY_LIMIT``: bytes, with an optional ``K``/``M``/``G``/``T`` suffix (powers of
  1024), default :data:`DEFAULT_MEMORY` (8 GiB); ``0`` or ``off`` disables it. Applied in the
  glTF measuring child of the importers (``harness.render.gltfmeasure``) and in the worker
  processes of ``warm --jobs N`` rendering on the CPU. Not applied to GPU workers (the CUDA
  driver reserves far more address space than it uses) nor to the audit process itself.
* ``T3D_AUDIT_IMPORT_TIMEOUT``: seconds the glTF measuring child may run, default
  :data:`DEFAULT_IMPORT_TIMEOUT_S` (600).
* ``T3D_AUDIT_RENDER_DEADLINE``: seconds one render may take in a ``warm --jobs N`` worker,
  scene building included (default: three times ``warm --timeout``, which bounds Cycles'
  sampling only; at least 60 s). A worker past it is ended by ``SIGALRM``.

Renders in the audit process itself (``pytest``, ``warm --jobs 1``) get neither the memory limit
nor the hard deadline: they are bounded by the glTF checks (``harness.scenes.gltf_limits``) and
the render timeout. A breach is a typed error naming the limit and the variable: the child's
``MemoryError``, or its death by a signal, is described by :func:`describe_death`.
"""

from __future__ import annotations

import os
import re
import resource
import signal

from harness.core.errors import AuditError

MEMORY_ENV = "T3D_AUDIT_MEMORY_LIMIT"
IMPORT_TIMEOUT_ENV = "T3D_AUDIT_IMPORT_TIMEOUT"
RENDER_DEADLINE_ENV = "T3D_AUDIT_RENDER_DEADLINE"
DEFAULT_MEMORY = 8 << 30  # bytes of address space: bpy alone maps about 1.3 GB
MAX_MEMORY = 1 << 50  # the largest settable limit (1 PiB; setrlimit takes at most 2**63)
DEFAULT_IMPORT_TIMEOUT_S = 600.0
MAX_SECONDS = 1e9  # a longer deadline overflows time_t in setitimer and lock waits

_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:i?B)?\s*", re.IGNORECASE)
# seconds: ASCII decimal only (float() would also take "٣", "1_0" and "infinity")
_SECONDS = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def memory_limit(environ: dict[str, str] | None = None) -> int | None:
    """Bytes of address space a Blender process may map (``None``: unlimited), from
    ``$T3D_AUDIT_MEMORY_LIMIT`` or the default. Raises :class:`AuditError` for a bad value."""
    raw = (environ if environ is not None else os.environ).get(MEMORY_ENV, "").strip()
    if not raw:
        return DEFAULT_MEMORY
    if raw.lower() in ("0", "off", "none"):
        return None
    match = _SIZE.fullmatch(raw)
    size = float(match.group(1)) * _UNITS[match.group(2).upper()] if match else 0.0
    # "0.5" would round to a limit of 0 bytes (every child killed at once), unlike "0" (off);
    # 5,000 digits read as inf, which int() cannot convert
    if not 1 <= size <= MAX_MEMORY:
        raise AuditError(
            f"{raw[:40]!r} is not a size up to 1024T",
            where=MEMORY_ENV,
            hint="bytes with an optional K, M, G or T suffix (e.g. 8G), or 0 for no limit",
        )
    return int(size)


def import_timeout(environ: dict[str, str] | None = None) -> float:
    """Seconds the glTF measuring child may run, from ``$T3D_AUDIT_IMPORT_TIMEOUT``."""
    raw = (environ if environ is not None else os.environ).get(IMPORT_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_IMPORT_TIMEOUT_S
    value = float(raw) if _SECONDS.fullmatch(raw) else -1.0
    if not 0 < value <= MAX_SECONDS:
        raise AuditError(
            f"{raw!r} is not a positive number of seconds",
            where=IMPORT_TIMEOUT_ENV,
        )
    return value


def render_deadline(timeout_s: float | None, environ: dict[str, str] | None = None) -> float:
    """Seconds one render may take in a ``warm --jobs N`` worker, from building the scene to
    the image: ``$T3D_AUDIT_RENDER_DEADLINE``, else three times the render timeout (Cycles'
    own limit on sampling), at least 60 s."""
    raw = (environ if environ is not None else os.environ).get(RENDER_DEADLINE_ENV, "").strip()
    if not raw:
        return max(60.0, 3.0 * float(timeout_s or 600.0))
    value = float(raw) if _SECONDS.fullmatch(raw) else -1.0
    if not 0 < value <= MAX_SECONDS:
        raise AuditError(f"{raw!r} is not a positive number of seconds", where=RENDER_DEADLINE_ENV)
    return value


def human(size: int | None) -> str:
    """``8 GiB``, ``512 MiB``; ``no limit`` for ``None``."""
    if size is None:
        return "no limit"
    for unit, name in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= unit:
            return f"{size / unit:.3g} {name}"
    return f"{size} B"


def apply_memory_limit(limit: int | None) -> None:
    """Lower this process's soft ``RLIMIT_AS`` to ``limit`` bytes (never above the hard
    limit, never raised); ``None`` leaves it. Call it first thing in a child process."""
    if limit is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    target = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    if soft == resource.RLIM_INFINITY or target < soft:
        resource.setrlimit(resource.RLIMIT_AS, (target, hard))


def out_of_memory(limit: int | None) -> str:
    """The message of a ``MemoryError`` under ``limit``."""
    return (
        f"ran out of memory under the {human(limit)} limit; raise {MEMORY_ENV} if the asset "
        "is genuine"
    )


def describe_death(returncode: int, limit: int | None) -> str | None:
    """What killed a child that exited with ``returncode`` (negative: a signal), or ``None``
    when it exited normally. An abort or kill is most often an allocation past the limit."""
    if returncode >= 0:
        return None
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    if -returncode in (signal.SIGABRT, signal.SIGKILL, signal.SIGSEGV, signal.SIGBUS):
        return (
            f"killed by {name}: Blender aborts when an allocation fails, so it most likely "
            f"needed more than the {human(limit)} memory limit ({MEMORY_ENV}) or the machine "
            "ran out of memory"
        )
    return f"killed by {name}"
