"""Option value checks shared by every ``t3d-audit`` command and the ``--audit-*`` options.

Each check is an argparse ``type=``: it takes the option's text and returns the parsed value,
or raises :class:`argparse.ArgumentTypeError` with one line that says what was given and what
to write instead. argparse turns that into a usage error (exit 2) before the command does any
work; :mod:`harness.run.options` turns the same checks into ``pytest.UsageError`` (exit 4). The
rules live here once, so a command declares its options and gets them checked for free.

Paths that a command will write are probed here too (a directory that can be created, with
nothing in its way); paths it only reads are left to the command, whose typed errors name the
file and what is wrong with it.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

MAX_SEED = 2**63 - 1
MAX_JOBS = 4096  # processes, actors or xdist workers: a larger number is a typo
MAX_BATCH = 65536  # images per forward pass
MAX_RETRIES = 1000
MAX_SAMPLES = 1 << 20  # Cycles samples per pixel
MAX_PIXELS = 16384  # render resolution, per side
MAX_TILE = 1024  # contact-sheet tile side: a sheet holds dozens of them in memory

# Schemes a shared store may use: each has create-only writes the store's publication relies
# on (docs/distributed.md). ftp://, http:// and the like are refused, not tried.
STORE_SCHEMES: tuple[str, ...] = ("file", "s3", "gs", "gcs", "memory")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")  # S3/GCS bucket names (lower case)
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_DEVICE = re.compile(r"auto|cpu|mps|cuda(:[0-9]{1,3})?")
_RAY_ADDRESS = re.compile(r"auto|local|(ray://)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252})?:[0-9]{1,5}")

Error = argparse.ArgumentTypeError


def _shown(text: str) -> str:
    """``text`` as the error quotes it: repr, cut to 80 characters."""
    shown = repr(text)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def integer(low: int, high: int | None = None, *, what: str = "a whole number") -> Callable[[str], int]:
    """A checker for a decimal integer in ``[low, high]`` (``high`` None: no upper bound)."""

    def check(text: str) -> int:
        value = str(text).strip()
        # int() would take '1_000'; a count is plain decimal digits
        if not re.fullmatch(r"[+-]?[0-9]{1,30}", value):
            raise Error(f"must be {what}, got {_shown(text)}")
        number = int(value)
        if number < low:
            raise Error(f"must be at least {low}, got {number}")
        if high is not None and number > high:
            raise Error(f"must be at most {high}, got {number}")
        return number

    check.__name__ = "integer"  # argparse names the type in its own messages
    return check


def real(low: float, *, strict: bool = False) -> Callable[[str], float]:
    """A checker for a finite decimal number ``>= low`` (``> low`` when ``strict``)."""

    def check(text: str) -> float:
        try:
            number = float(str(text).strip())
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise Error(f"must be a finite number, got {_shown(text)}")
        if number < low or (strict and number == low):
            raise Error(f"must be {'greater than' if strict else 'at least'} {low:g}, got {number:g}")
        return number

    check.__name__ = "number"
    return check


# a number as a paper prints it: ASCII decimal, optional sign, fraction and exponent
_REPORTED = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


def reported_number(text: str) -> str:
    """A reported score as printed (``27.23``, ``-0.5``, ``3.1e-2``): a finite ASCII decimal
    number, kept as text so its last digit sets the default margin. ``nan``, ``inf``, ``1e400``
    (infinite as a float) and exponents of four digits or more are refused."""
    value = str(text).strip()
    if len(value) > 100 or not _REPORTED.fullmatch(value) or not math.isfinite(float(value)):
        raise Error(f"must be a finite decimal number as reported (e.g. 27.23), got {_shown(text)}")
    return value


positive_int = integer(1)
seed = integer(0, MAX_SEED)
jobs = integer(1, MAX_JOBS)
batch_size = integer(1, MAX_BATCH)
retries = integer(0, MAX_RETRIES)
samples = integer(1, MAX_SAMPLES)
pixels = integer(1, MAX_PIXELS)
tile = integer(8, MAX_TILE)
positive_float = real(0.0, strict=True)
non_negative_float = real(0.0)


def workers(text: str) -> str:
    """pytest-xdist's ``-n``: ``auto``, ``logical`` or a process count (0: no workers)."""
    value = str(text).strip()
    if value in ("auto", "logical"):
        return value
    try:
        return str(integer(0, MAX_JOBS)(value))
    except Error:
        raise Error(f"must be auto, logical or a whole number in [0, {MAX_JOBS}], got {_shown(text)}") from None


def device(text: str) -> str:
    """A torch device name: auto, cpu, mps, cuda or cuda:N."""
    value = str(text).strip()
    if not _DEVICE.fullmatch(value):
        raise Error(f"must be auto, cpu, mps, cuda or cuda:N, got {_shown(text)}")
    return value


def ray_address(text: str) -> str:
    """A Ray cluster address: ``auto``, ``local``, ``ray://HOST:PORT`` or ``HOST:PORT``."""
    value = str(text).strip()
    if value in ("auto", "local"):
        return value
    if not _RAY_ADDRESS.fullmatch(value) or not 0 < int(value.rpartition(":")[2]) < 65536:
        raise Error(f"must be auto, local, ray://HOST:PORT or HOST:PORT, got {_shown(text)}")
    return value


def plain_name(text: str) -> str:
    """A name that becomes one directory: letters, digits, ``.``, ``_``, ``-``; no path."""
    value = str(text)
    if not _PLAIN_NAME.fullmatch(value) or value in (".", ".."):
        raise Error(
            f"must be a plain directory name (letters, digits, . _ -; at most 128), got {_shown(text)}"
        )
    return value


def name_list(text: str) -> str:
    """A comma-separated list of ids or globs that names at least one (returned unchanged)."""
    if "\x00" in str(text):
        raise Error(f"must not hold a NUL character, got {_shown(text)}")
    if not [part for part in str(text).split(",") if part.strip()]:
        raise Error(f"must name at least one id or glob (comma-separated), got {_shown(text)}")
    return str(text)


def _nul_free(text: str) -> str:
    if not str(text).strip():
        raise Error("must be a path, got ''")
    if "\x00" in str(text):
        raise Error(f"must not hold a NUL character, got {_shown(text)}")
    return str(text)


def can_be_directory(path: Path) -> None:
    """Raise :class:`Error` unless ``path`` is a directory, or one can be made there.

    The first existing ancestor must be a directory in which a folder can actually be
    created: probed with a temporary directory, removed at once (permissions, read-only
    mounts and pseudo file systems such as ``/proc`` all answer the same way)."""
    try:
        if path.is_dir():
            if not os.access(path, os.W_OK | os.X_OK):
                raise Error(f"{path}: the directory is not writable")
            return
        for candidate in (path, *path.parents):
            if candidate.exists():
                break
        else:  # pragma: no cover - '/' always exists
            raise Error(f"{path}: no existing parent directory")
        if not candidate.is_dir():
            what = "is" if candidate == path else f"has {candidate} in its way, which is"
            raise Error(f"{path}: {what} a file, not a directory")
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".t3d-probe-", dir=candidate))
        except OSError as exc:
            raise Error(f"{path}: cannot create a directory in {candidate} ({exc.strerror})") from None
    except (OSError, ValueError) as exc:  # too long, bad characters
        raise Error(f"{path}: not a usable path ({exc})") from None


def output_dir(text: str) -> Path:
    """A directory the command writes into (created when missing)."""
    path = Path(_nul_free(text)).expanduser()
    can_be_directory(path.resolve())
    return path


def output_file(text: str) -> Path:
    """A file the command writes (its folder is created when missing)."""
    path = Path(_nul_free(text)).expanduser()
    full = path.resolve()
    if full.is_dir():
        raise Error(f"{path}: is a directory; give a file name")
    can_be_directory(full.parent)
    return path


def records_file(text: str) -> Path:
    """A records file the command writes: :func:`output_file` named ``.csv`` or ``.parquet``
    (checked before the scoring, not when the scores are written)."""
    from harness.protocol.records import CSV_SUFFIXES, PARQUET_SUFFIXES

    path = output_file(text)
    if path.suffix.lower() not in (*CSV_SUFFIXES, *PARQUET_SUFFIXES):
        raise Error(f"must be a .csv or .parquet file name, got {_shown(text)}")
    return path


def input_path(text: str) -> Path:
    """A path the command reads (its existence is the command's to check, by name)."""
    return Path(_nul_free(text)).expanduser()


def store_url(text: str, *, base: Path | None = None) -> str:
    """A shared store location as a URL: a plain path (relative to ``base``, default the
    working directory) becomes ``file://``; otherwise one of :data:`STORE_SCHEMES` with a
    location after it (a bucket for ``s3://``/``gs://``) and its fsspec library installed."""
    value = str(text).strip()
    if not value:
        raise Error("must be a store URL or a directory, got ''")
    if "\x00" in value:
        raise Error(f"must not hold a NUL character, got {_shown(text)}")
    if "://" not in value:
        path = ((base or Path.cwd()) / Path(value).expanduser()).resolve()
        can_be_directory(path)
        return path.as_uri()
    scheme, _, rest = value.partition("://")
    scheme = scheme.lower()
    if scheme not in STORE_SCHEMES:
        raise Error(
            f"{_shown(value)}: unknown scheme {scheme!r} for a store; use "
            + ", ".join(f"{s}://" for s in STORE_SCHEMES) + " or a directory"
        )
    if scheme == "file":
        if not rest.startswith("/"):
            raise Error(f"{_shown(value)}: a file:// store needs an absolute path (file:///DIR)")
        can_be_directory(Path(rest).resolve())
        return value
    location = rest.strip("/")
    if not location:
        raise Error(f"{_shown(value)}: names no bucket; write {scheme}://BUCKET[/PREFIX]")
    if scheme in ("s3", "gs", "gcs") and not _BUCKET.fullmatch(location.split("/", 1)[0]):
        raise Error(
            f"{_shown(value)}: {location.split('/', 1)[0]!r} is not a bucket name "
            "(1-63 lower-case letters, digits, . _ -)"
        )
    try:
        import fsspec

        fsspec.get_filesystem_class(scheme)
    except ImportError as exc:
        raise Error(
            f"{_shown(value)}: {scheme}:// needs a library that is not installed ({exc}); "
            "pip install 't3d-audit[distributed]'"
        ) from None
    except ValueError:  # pragma: no cover - STORE_SCHEMES are all fsspec's
        raise Error(f"{_shown(value)}: fsspec does not know {scheme}://") from None
    return value


def view_policy(text: str) -> str:
    """A view policy: ``single``, ``mean4``, ``max4``, ``sheet4`` or ``preset:NAME`` (a
    protocol preset, docs/protocols.md)."""
    from harness.core.errors import ProtocolError
    from harness.protocol.view_policies import VIEW_POLICIES

    value = str(text).strip()
    if value.startswith("preset:"):
        from harness.protocol.presets import PRESETS, get_preset

        try:
            get_preset(value.removeprefix("preset:"))
        except ProtocolError:
            raise Error(f"unknown protocol preset in {_shown(text)}: use preset:NAME with NAME one of "
                        f"{', '.join(PRESETS)}") from None  # fmt: skip
        return value
    if value not in VIEW_POLICIES:
        raise Error(f"must be one of {', '.join(VIEW_POLICIES)} or preset:NAME, got {_shown(text)}")
    return value
