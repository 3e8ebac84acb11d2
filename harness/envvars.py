"""Every ``T3D_AUDIT_*`` environment variable in one place: its name and how its value is read.

Each reader takes the environment (default ``os.environ``), returns the typed value or the
default when the variable is unset or blank, and raises :class:`~harness.errors.AuditError`
naming the variable, the bad value and what to give instead. :func:`check_environment` reads
every one of them, so a bad value stops a command at its start with one line, before any work.
A leaf module: it imports only :mod:`harness.errors`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping

from harness.errors import AuditError

SCORER_DEADLINE_ENV = "T3D_AUDIT_SCORER_DEADLINE"
DEFAULT_SCORER_DEADLINE_S = 600.0  # seconds one batch of a user Scorer may take


def _raw(name: str, environ: Mapping[str, str] | None) -> str:
    return (os.environ if environ is None else environ).get(name, "").strip()


def seconds(name: str, default: float, environ: Mapping[str, str] | None = None) -> float:
    """A positive, finite number of seconds from ``$name`` (``default`` when unset)."""
    raw = _raw(name, environ)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise AuditError(f"{name}={raw[:40]!r} is not a positive number of seconds", where=name,
                         hint="give seconds such as 600, or unset it for the default")  # fmt: skip
    return value


def count(name: str, default: int, environ: Mapping[str, str] | None = None, *, minimum: int = 0) -> int:
    """A whole number ``>= minimum`` from ``$name`` (``default`` when unset)."""
    raw = _raw(name, environ)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise AuditError(f"{name}={raw[:40]!r} is not a whole number >= {minimum}", where=name,
                         hint="give a count, or unset it for the default")  # fmt: skip
    return value


def scorer_deadline(environ: Mapping[str, str] | None = None) -> float:
    """Seconds one ``score_batch`` call of a user Scorer may take (``$T3D_AUDIT_SCORER_DEADLINE``,
    default :data:`DEFAULT_SCORER_DEADLINE_S`)."""
    return seconds(SCORER_DEADLINE_ENV, DEFAULT_SCORER_DEADLINE_S, environ)


#: name -> a reader that raises AuditError on a bad value (filled below and by the readers'
#: own modules through :func:`register`)
READERS: dict[str, Callable[[Mapping[str, str] | None], object]] = {
    SCORER_DEADLINE_ENV: scorer_deadline,
}


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Read every known ``T3D_AUDIT_*`` variable; the first bad value raises AuditError."""
    for name in sorted(READERS):
        READERS[name](environ)
