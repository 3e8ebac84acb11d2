"""Every ``T3D_AUDIT_*`` environment variable in one place: its name and how its value is read.

Each reader takes the environment (default ``os.environ``), returns the typed value or the
default when the variable is unset or blank, and raises :class:`~harness.core.errors.AuditError`
naming the variable, the bad value and what to give instead. :func:`harness.run.environment.check_environment`
reads every variable, so a bad value stops a command at its start with one line, before any work.
A leaf module: it imports only :mod:`harness.core.errors`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping

from harness.core.errors import AuditError

SCORER_DEADLINE_ENV = "T3D_AUDIT_SCORER_DEADLINE"
DEFAULT_SCORER_DEADLINE_S = 600.0  # seconds one batch of a user Scorer may take


# ASCII only: int()/float() also take "٣" (Arabic-Indic 3), "1_000" and "+5"
_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


# seconds: the most a deadline may be (about 31 years); 1e300 passed the finite check, then
# every wait on it raised OverflowError ("timestamp out of range for platform time_t")
MAX_SECONDS = 1e9
# the largest count a variable takes unless its reader says less, and the digits read of one
MAX_COUNT = 1_000_000
_COUNT_DIGITS = 18
# Blender's own ceiling on render threads (BLENDER_MAX_THREADS)
MAX_RENDER_THREADS = 1024


def raw_value(name: str, environ: Mapping[str, str] | None) -> str:
    """The variable ``name`` of ``environ`` (default: the process environment), stripped; ``""`` when unset."""
    return (os.environ if environ is None else environ).get(name, "").strip()


def seconds(name: str, default: float, environ: Mapping[str, str] | None = None) -> float:
    """A positive number of seconds, at most :data:`MAX_SECONDS`, from ``$name`` (``default``
    when unset)."""
    raw = raw_value(name, environ)
    if not raw:
        return default
    value = float(raw) if _DECIMAL.fullmatch(raw) else math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
        raise AuditError(f"{name}={raw[:40]!r} is not a positive number of seconds up to "
                         f"{MAX_SECONDS:g}", where=name,
                         hint="give seconds such as 600, or unset it for the default")  # fmt: skip
    return value


def count(name: str, default: int, environ: Mapping[str, str] | None = None, *, minimum: int = 0,
          maximum: int = MAX_COUNT) -> int:
    """A whole number in ``[minimum, maximum]`` from ``$name`` (``default`` when unset)."""
    raw = raw_value(name, environ)
    if not raw:
        return default
    # a length check first: int() of over 4300 digits raises its own ValueError
    value = int(raw) if _WHOLE.fullmatch(raw) and len(raw) <= _COUNT_DIGITS else minimum - 1
    if not minimum <= value <= maximum:
        raise AuditError(f"{name}={raw[:40]!r} is not a whole number >= {minimum} and <= {maximum}",
                         where=name, hint="give a count, or unset it for the default")  # fmt: skip
    return value


def scorer_deadline(environ: Mapping[str, str] | None = None) -> float:
    """Seconds one ``score_batch`` call of a user Scorer may take (``$T3D_AUDIT_SCORER_DEADLINE``,
    default :data:`DEFAULT_SCORER_DEADLINE_S`)."""
    return seconds(SCORER_DEADLINE_ENV, DEFAULT_SCORER_DEADLINE_S, environ)


RENDER_THREADS_ENV = "T3D_AUDIT_RENDER_THREADS"
OFFLINE_ENV = "T3D_AUDIT_OFFLINE"
RENDER_DEVICE_ENV = "T3D_AUDIT_RENDER_DEVICE"
FLAG_WORDS = {"1": True, "true": True, "yes": True, "on": True,
              "0": False, "false": False, "no": False, "off": False}  # fmt: skip
RENDER_DEVICES = ("cpu", "gpu", "auto")


def render_threads(environ: Mapping[str, str] | None = None) -> int:
    """Threads per rendering process (``$T3D_AUDIT_RENDER_THREADS``; 0, the default: Cycles'
    automatic choice, up to :data:`MAX_RENDER_THREADS`); a negative, non-integer or larger value
    is an error."""
    return count(RENDER_THREADS_ENV, 0, environ, minimum=0, maximum=MAX_RENDER_THREADS)


def flag(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """An on/off switch from ``$name`` (:data:`FLAG_WORDS`, any case; unset: off)."""
    raw = raw_value(name, environ)
    if not raw:
        return False
    if raw.lower() not in FLAG_WORDS:
        raise AuditError(f"{name}={raw[:40]!r} is not an on/off value", where=name,
                         hint="give 1 or 0 (also true/false, yes/no, on/off)")  # fmt: skip
    return FLAG_WORDS[raw.lower()]


def render_device(environ: Mapping[str, str] | None = None) -> str:
    """Where renders run (``$T3D_AUDIT_RENDER_DEVICE``: cpu, the default, gpu or auto)."""
    raw = raw_value(RENDER_DEVICE_ENV, environ) or "cpu"
    if raw not in RENDER_DEVICES:
        raise AuditError(f"{RENDER_DEVICE_ENV}={raw[:40]!r} is not one of {', '.join(RENDER_DEVICES)}",
                         where=RENDER_DEVICE_ENV, hint="unset it for cpu")  # fmt: skip
    return raw
