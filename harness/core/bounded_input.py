"""The one reader of user-supplied JSON and text files: bounded in size and nesting depth.

Every command and importer that reads a file the user names (scene files, manifests, prompt
lists, conventions, ratings, report directories, key files, ...) reads it here, so a hostile
file gets one clear line instead of a traceback or an unbounded allocation:

* only a **regular file** is read (a device such as ``/dev/zero``, a FIFO or a folder is
  refused before any byte is read), and at most :func:`max_bytes` bytes of it
  (``$T3D_AUDIT_MAX_INPUT_BYTES``, default 256 MiB; ``K``/``M``/``G`` suffixes are binary):
  the size is taken by ``fstat`` on the opened descriptor before reading (:func:`checked_size`
  and :func:`read_head` read no body at all; mesh and asset files go through
  ``harness.scenes.meshbytes``), and at most the bound + 1 bytes are read, so a file that
  grows while read is refused too;
* JSON nested deeper than :func:`max_depth` levels (``$T3D_AUDIT_MAX_JSON_DEPTH``, default
  200) is refused by a pre-scan of the bracket depth (strings skipped) before Python's
  ``json`` parses it, so the parser's recursion never reaches Python's limit; a
  ``RecursionError`` is still caught as a backstop. The pre-scan is linear in the text
  (``benchmarks/bench_bounded_input.py``). Files of the harness's own formats (a report
  directory's JSON) are read with :func:`read_report_json`: the size bound, not the user's
  depth setting;
* a bad value in either variable is an :class:`~harness.core.errors.AuditError` naming it.

The errors are typed twice so existing handlers keep working: :class:`InputFileError` is an
``OSError`` (handlers that turn an unreadable file into their own typed error still do) and
an ``AuditError`` (the CLI prints it in one line); :class:`JsonDepthError` is a
``json.JSONDecodeError`` and an ``AuditError``. A leaf: imports only ``errors`` (and numpy,
lazily, for the bracket scan of a text with more brackets than the limit).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path

from harness.core.errors import AuditError
from harness.core.jsonout import JSONValue

MAX_BYTES_ENV = "T3D_AUDIT_MAX_INPUT_BYTES"
MAX_DEPTH_ENV = "T3D_AUDIT_MAX_JSON_DEPTH"
DEFAULT_MAX_BYTES = 256 << 20
MAX_BYTES_CEILING = 1 << 40  # the largest settable size limit (1 TiB)
_CHUNK = 1 << 20  # bytes read at a time past a file's stated size
DEFAULT_MAX_DEPTH = 200
DEPTH_CEILING = 10_000  # the largest settable depth (the scan is iterative; json is guarded)
_SIZE = re.compile(r"^\s*([0-9]+)\s*([KMG]?)i?B?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
# a JSON string (escapes included); stripped before the depth scan so brackets in text don't
# count. An unterminated string runs to the end of the text (a lone backslash there too), so a
# match never fails: a failed match restarted at every later quote, quadratic on '"\\"\\"...'
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# each bracket as a signed byte: +1 opening, -1 (255) closing
_STEP_BYTES = bytes(1 if b in b"[{" else 255 if b in b"]}" else 0 for b in range(256))
_STEP = [1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256)]


class InputFileError(OSError, AuditError):
    """A user file that is not read: not a regular file, or over the size limit."""

    def __init__(self, what: str, *, path: str | Path, hint: str | None = None,
                 code: int = errno.EINVAL) -> None:
        OSError.__init__(self, code, what)
        self.what, self.where, self.hint = what, str(path), hint

    def __str__(self) -> str:
        return self.render()


class JsonDepthError(json.JSONDecodeError, AuditError):
    """JSON nested deeper than the limit (or deep enough to exhaust the parser's recursion)."""

    def __init__(self, limit: int, where: str | Path | None = None, *, parser: bool = False) -> None:
        what = (f"JSON nested too deeply: deeper than Python's parser allows (limit {limit})"
                if parser else f"JSON nested too deeply: more than the limit of {limit} levels")
        json.JSONDecodeError.__init__(self, what, "", 0)
        self.what, self.where = what, str(where) if where is not None else None
        self.hint = f"flatten the file, or raise ${MAX_DEPTH_ENV}"

    def __str__(self) -> str:
        return self.render()


def max_bytes(environ: dict[str, str] | None = None) -> int:
    """The size limit of a user file in bytes: ``$T3D_AUDIT_MAX_INPUT_BYTES`` or 256 MiB, at
    most :data:`MAX_BYTES_CEILING`."""
    raw = (environ if environ is not None else os.environ).get(MAX_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    match = _SIZE.match(raw)
    # the digit count first: int() of over 4300 digits raises its own ValueError
    value = int(match.group(1)) * _UNITS[match.group(2).upper()] if match and len(match.group(1)) <= 15 else 0
    if not 1 <= value <= MAX_BYTES_CEILING:
        raise AuditError(f"{raw[:40]!r} is not a positive size in bytes up to 1T (e.g. 262144, 512K, 64M, 1G)",
                         where=MAX_BYTES_ENV)  # fmt: skip
    return value


def max_depth(environ: dict[str, str] | None = None) -> int:
    """The JSON nesting limit: ``$T3D_AUDIT_MAX_JSON_DEPTH`` or 200, in [1, 10000]."""
    raw = (environ if environ is not None else os.environ).get(MAX_DEPTH_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_DEPTH
    ok = raw.isascii() and raw.isdigit() and len(raw) <= 6  # not "²" nor "٣" nor 5,000 digits
    value = int(raw) if ok else 0
    if not 1 <= value <= DEPTH_CEILING:
        raise AuditError(f"{raw[:40]!r} is not a whole number in [1, {DEPTH_CEILING}]",
                         where=MAX_DEPTH_ENV)
    return value


def read_bytes(path: str | Path, *, limit: int | None = None, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` (default :func:`max_bytes`).

    Raises :class:`InputFileError` for a device, FIFO, socket or folder (checked on the open
    descriptor, so a symlink swapped in between is no way round) and for a file over the
    limit; ``OSError`` as ``open`` raises it for a missing or unreadable file.
    """
    limit = max_bytes() if limit is None else limit
    fd, size = _open_checked(path, limit, what)
    with os.fdopen(fd, "rb") as handle:
        # read(n) allocates n bytes up front: ask for the size found, then chunks, so a file
        # that grows while read, or states size 0 as /proc files do, is still cut at the limit
        chunks = [handle.read(size + 1)]
        total = len(chunks[0])
        # read(n) sets n bytes aside even at the end of the file: go on only past the stated size
        while size < total <= limit and (chunk := handle.read(min(_CHUNK, limit + 1 - total))):
            chunks.append(chunk)
            total += len(chunk)
    if total > limit:  # grew while being read
        raise _too_big(path, what, limit)
    return b"".join(chunks)


def checked_size(path: str | Path, *, limit: int | None = None, what: str = "file") -> int:
    """The size in bytes of the regular file ``path`` (``fstat`` on its opened descriptor, so
    a sparse file counts its apparent size), reading no byte of it. Raises as
    :func:`read_bytes` does: not a regular file, or over ``limit`` (default :func:`max_bytes`)."""
    fd, size = _open_checked(path, max_bytes() if limit is None else limit, what)
    os.close(fd)
    return size


def read_head(path: str | Path, count: int, *, limit: int | None = None,
              what: str = "file") -> tuple[bytes, int]:
    """(the first ``count`` bytes, the size in bytes) of the regular file ``path``, refused
    as :func:`read_bytes` refuses it when the whole file is over ``limit``."""
    fd, size = _open_checked(path, max_bytes() if limit is None else limit, what)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(count), size


def _open_checked(path: str | Path, limit: int, what: str) -> tuple[int, int]:
    """A read-only descriptor of the regular file ``path`` and its size (at most ``limit``)."""
    # O_NONBLOCK: opening a FIFO with no writer must not hang before the type check
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputFileError(f"the {what} is not a regular file (a device, FIFO or folder)",
                                 path=path, hint="name a plain file")
        if info.st_size > limit:
            raise _too_big(path, what, limit, info.st_size)
    except BaseException:
        os.close(fd)
        raise
    return fd, info.st_size


def _too_big(path: str | Path, what: str, limit: int, size: int | None = None) -> InputFileError:
    found = f"is {size} bytes, " if size is not None else "grew while read, "
    return InputFileError(f"the {what} {found}over the input limit of {limit} bytes", path=path,
                          hint=f"raise ${MAX_BYTES_ENV} if the file is meant to be this large",
                          code=errno.EFBIG)


def read_text(path: str | Path, *, encoding: str = "utf-8", errors: str = "strict",
              limit: int | None = None, what: str = "file") -> str:
    """:func:`read_bytes` decoded (``UnicodeDecodeError`` as ``bytes.decode`` raises it)."""
    return read_bytes(path, limit=limit, what=what).decode(encoding, errors)


class DuplicateKeyError(ValueError):
    """A JSON object gave ``key`` twice (``json`` alone would keep the last, silently)."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def unique_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """``object_pairs_hook`` for ``json``: the object as a dict, or :class:`DuplicateKeyError`
    for a key given twice."""
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def json_depth(data: str | bytes) -> int:
    """The deepest bracket nesting of JSON text, strings not counted (0 for a scalar)."""
    brackets = _brackets(data)
    return max(accumulate(_STEP[b] for b in brackets), default=0)


def _deeper_than(brackets: bytes, limit: int) -> bool:
    """Whether a bracket sequence nests deeper than ``limit``: the running depth (+1 per
    opening, -1 per closing bracket), summed by numpy a chunk at a time, so time is linear in
    the sequence and memory is bounded by the chunk."""
    if brackets.count(b"[") + brackets.count(b"{") <= limit:  # most files: no scan at all
        return False
    import numpy as np

    steps = np.frombuffer(brackets.translate(_STEP_BYTES), dtype=np.int8)
    depth = 0
    for start in range(0, len(steps), _CHUNK):
        running = np.cumsum(steps[start : start + _CHUNK], dtype=np.int64) + depth
        if running.max(initial=depth) > limit:
            return True
        depth = int(running[-1])
    return False


def _brackets(data: str | bytes) -> bytes:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    return _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)


def loads(text: str | bytes, *, where: str | Path | None = None, limit: int | None = None,
          **kwargs: object) -> JSONValue:
    """``json.loads(text, **kwargs)`` with the nesting of :func:`json_depth` at most ``limit``
    (default :func:`max_depth`). Raises ``json.JSONDecodeError`` (a :class:`JsonDepthError`
    when too deep) as ``json.loads`` would, also for an integer too long for Python to convert
    (``json`` raises a plain ``ValueError`` there, which readers catching
    ``JSONDecodeError`` would let through as a traceback)."""
    limit = max_depth() if limit is None else limit
    if _deeper_than(_brackets(text), limit):
        raise JsonDepthError(limit, where)
    try:
        return json.loads(text, **kwargs)
    except RecursionError:  # a limit set above what this interpreter's stack allows
        raise JsonDepthError(limit, where, parser=True) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer of over 4300 digits: a plain ValueError from json
        if "integer string conversion" not in str(exc):
            raise  # a caller's own hook refused a value (parse_constant, object_pairs_hook): its words
        raise json.JSONDecodeError(f"an integer too long to read ({str(exc).split(':')[0]})", "", 0) from None


def read_json(path: str | Path, *, encoding: str = "utf-8", what: str = "file",
              parse_constant: Callable[[str], object] | None = None, **kwargs: object) -> object:
    """A user JSON file, bounded in size and depth (see the module docstring)."""
    text = read_text(path, encoding=encoding, what=what)
    if parse_constant is not None:
        kwargs["parse_constant"] = parse_constant
    return loads(text, where=path, **kwargs)


def read_report_json(path: str | Path, *, encoding: str = "utf-8", what: str = "file", **kwargs: object) -> JSONValue:
    """A JSON file of the harness's own output format (a report directory's files, bundled
    data), bounded in size like :func:`read_json` but not by the user's
    ``$T3D_AUDIT_MAX_JSON_DEPTH``: a low depth setting meant for untrusted input must not make
    the project's own reports unreadable (a partial rerun would then replace the results it
    could not read). Nesting past :data:`DEPTH_CEILING` is still a :class:`JsonDepthError`."""
    return loads(read_text(path, encoding=encoding, what=what), where=path, limit=DEPTH_CEILING, **kwargs)


def read_toml(path: str | Path, *, what: str = "file") -> dict[str, object]:
    """A user TOML file (``pyproject.toml``), bounded in size; nesting too deep for
    ``tomllib``'s recursion is a :class:`JsonDepthError`-like ``ValueError`` (``TOMLDecodeError``)
    naming the limit instead of a ``RecursionError``."""
    return toml_loads(read_text(path, what=what), where=path)


def toml_loads(text: str, *, where: str | Path | None = None) -> dict[str, object]:
    """``tomllib.loads(text)``, where every failure is a ``TOMLDecodeError``: nesting too deep
    for its recursion, and an integer over Python's 4300 digits (a plain ``ValueError`` from
    ``tomllib``, which handlers catching ``TOMLDecodeError`` let through as a traceback)."""
    import tomllib

    prefix = f"{where}: " if where is not None else ""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(
            f"{prefix}TOML nested too deeply for the parser (flatten the arrays or tables)"
        ) from None
    except tomllib.TOMLDecodeError:
        raise
    except ValueError as exc:
        raise tomllib.TOMLDecodeError(
            f"{prefix}an integer too long to read ({str(exc).split(':')[0]})") from None
