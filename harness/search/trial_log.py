"""The search's trial log: an append-only, sealed JSON-lines file that makes a search resumable.

Line 1 is the header: what was searched (``{"kind": "header", "key", "version", "search":
{...}}``, the search's inputs with the space). Every later line is one evaluated trial,
appended, flushed and fsync'ed before the optimiser is told its value::

    {"kind": "trial", "n": 17, "batch": 2, "point": "pitch=52,...", "value": 3.1,
     "status": "ok", "error": "", "seconds": 0.41, "seal": {...}}

``value`` is ``null`` for a failed trial (``status`` ``failed``, reason in ``error``): a
failure is never a number. Every line is canonical JSON and carries a ``seal``
(:mod:`harness.core.cacheseal`, keyed with ``hmac`` when the user holds the cache secret) of
the line without its seal, written for ``<search key>#<line index>`` over the sha256 of the
previous line followed by the line's canonical JSON. A changed, injected, duplicated,
reordered or removed line, or a line moved from another log, therefore fails the check.

A log that fails it is never trusted: it is moved aside to ``<log>.discarded``, counted and
warned about (:func:`harness.core.cacheseal.discarded`, kind ``search``) and the search is
measured afresh (every render and score is in its cache). A file that is not a trial log at
all, one written for another search, a symlink, a FIFO, a device or a folder is refused with
one line (:class:`TrialLogError`) and left as it is. The file is read through the bounded
reader (:mod:`harness.core.bounded_input`) and held under a file lock (``<log>.lock``) while a
search writes it, so two searches sharing one log take turns: the second replays the first.

After a crash or ``kill -9`` the file holds every finished trial and at most one torn last
line, which is dropped; a resumed search replays the log (the seeded optimiser proposes the
same points in the same order) and continues where it stopped.
"""

from __future__ import annotations

import errno
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from filelock import FileLock

from harness.core import bounded_input, cacheseal
from harness.core.errors import AuditError
from harness.core.fileio import not_a_plain_file
from harness.core.hashing import canonical_json, sha256_bytes
from harness.core.numbers import finite_or_none

LOG_VERSION = 2  # 2: every line sealed (version 1 logs are discarded and measured afresh)
CACHE_KIND = "search"
DISCARDED_SUFFIX = ".discarded"
LOCK_SUFFIX = ".lock"
STATUSES = ("ok", "failed")
MAX_POINT_CHARS = 4096  # a printed point of every axis is a few hundred characters
MAX_ERROR_CHARS = 4096


class TrialLogError(AuditError):
    """A trial log that belongs to another search or cannot be read."""


class TamperedLog(Exception):
    """A trial log whose lines fail their seals or their format (the message says how)."""


@dataclass(frozen=True)
class Trial:
    """One evaluated point: its index ``n`` (0-based, ask order), ``batch``, printed ``point``,
    ``value`` (the objective's effect; NaN when failed), ``status``, ``error``, ``seconds``."""

    n: int
    batch: int
    point: str
    value: float
    status: str = "ok"
    error: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {"kind": "trial", "n": self.n, "batch": self.batch, "point": self.point,
                "value": finite_or_none(self.value), "status": self.status,
                "error": self.error, "seconds": round(self.seconds, 4)}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> Trial:
        """The trial of a log line; ``ValueError`` naming the field when a field is missing or
        of the wrong type (``value`` must be a finite number for ``ok``, ``null`` for ``failed``)."""
        expected = {"kind", "n", "batch", "point", "value", "status", "error", "seconds"}
        if set(d) != expected or d["kind"] != "trial":
            raise ValueError(f"a trial line has exactly the fields {sorted(expected)}")
        n, batch, value, status, seconds = d["n"], d["batch"], d["value"], d["status"], d["seconds"]
        if not _whole(n) or not _whole(batch):
            raise ValueError("n and batch must be whole numbers >= 0")
        if not isinstance(d["point"], str) or not 0 < len(d["point"]) <= MAX_POINT_CHARS:
            raise ValueError("point must be a printed point")
        if not isinstance(d["error"], str) or len(d["error"]) > MAX_ERROR_CHARS:
            raise ValueError("error must be text")
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}")
        if status == "ok" and not (_number(value) and math.isfinite(value)):
            raise ValueError("an ok trial's value must be a finite number")
        if status == "failed" and value is not None:
            raise ValueError("a failed trial's value must be null")
        if not (_number(seconds) and 0 <= seconds < math.inf):
            raise ValueError("seconds must be a number >= 0")
        return cls(n, batch, d["point"], math.nan if value is None else float(value), status,
                   d["error"], float(seconds))  # fmt: skip


def _whole(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def _line_key(key: str, index: int) -> str:
    return f"{key}#{index}"


def _sealed_line(entry: dict[str, object], key: str, index: int, previous: bytes) -> bytes:
    """``entry`` as one canonical JSON line (no newline) with its seal; ``previous`` is the
    previous line's bytes (``b""`` for the header)."""
    payload = sha256_bytes(previous).encode("ascii") + canonical_json(entry)
    seal = bounded_input.loads(cacheseal.seal(_line_key(key, index), payload))
    return canonical_json({**entry, "seal": seal})


def _check_line(line: bytes, key: str, index: int, previous: bytes) -> dict[str, object]:
    """The entry of sealed ``line`` (its seal removed); :class:`TamperedLog` unless it is
    canonical, sealed for line ``index`` of search ``key`` and chained to ``previous``."""
    try:
        entry = bounded_input.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise TamperedLog(f"line {index + 1} is not JSON ({exc})") from None
    if not isinstance(entry, dict) or not isinstance(entry.get("seal"), dict):
        raise TamperedLog(f"line {index + 1} has no seal (written before trial logs were sealed, or edited)")
    seal = entry.pop("seal")
    try:
        if canonical_json({**entry, "seal": seal}) != line:
            raise TamperedLog(f"line {index + 1} is not in canonical form")
        payload = sha256_bytes(previous).encode("ascii") + canonical_json(entry)
        cacheseal.check_seal(canonical_json(seal), _line_key(key, index), payload)
    except (ValueError, TypeError) as exc:  # a value canonical JSON cannot write
        raise TamperedLog(f"line {index + 1}: {exc}") from None
    except cacheseal.CorruptEntry as exc:
        raise TamperedLog(f"line {index + 1}: {exc}") from None
    return entry


@dataclass(frozen=True)
class _Read:
    trials: list[Trial]
    good_bytes: int  # the length of the verified prefix (the torn tail, if any, follows it)
    last_line: bytes  # the last verified line (b"" when there is none)


def _refuse_odd_path(path: Path) -> bool:
    """Whether ``path`` exists (as a regular file); :class:`TrialLogError` for a symlink
    (dangling or not), FIFO, device, socket or folder."""
    try:
        kind = not_a_plain_file(path)
    except OSError as exc:
        raise TrialLogError(f"cannot read the trial log: {exc.strerror}", where=str(path)) from None
    if kind is not None:
        raise TrialLogError(f"the trial log is {kind}", where=str(path),
                            hint="give --log a path to a plain file, or to none yet")  # fmt: skip
    return path.exists()


def _read(path: Path, key: str) -> _Read:
    """Read and verify the log at ``path`` for search ``key``. :class:`TrialLogError` when it
    is not a trial log or is another search's; :class:`TamperedLog` when it fails its seals."""
    if not _refuse_odd_path(path):
        return _Read([], 0, b"")
    try:
        data = bounded_input.read_bytes(path, what="trial log")
    except OSError as exc:
        raise TrialLogError(f"cannot read the trial log: {exc.strerror or exc}", where=str(path),
                            hint="give --log a path to a plain file") from None  # fmt: skip
    lines = data.split(b"\n")
    complete = lines[:-1]  # every complete line ends with "\n": the last piece is torn or ""
    if not complete:
        start = b'{"key":"' + key.encode("utf-8")  # how a canonical header line begins
        if data and not (start.startswith(data) or data.startswith(start)):
            raise _not_a_log(path)  # a file of one line that no search wrote: leave it alone
        return _Read([], 0, b"")  # empty, or this search's header torn mid-write
    header = _header(complete[0], path)
    if header.get("key") != key:
        raise TrialLogError(
            "this trial log belongs to another search (its evaluator, profile, objective, "
            "budget, seed, split or space differ)", where=f"{path}:1",
            hint="give another --log, or delete the file to start afresh",
        )  # fmt: skip
    if header.get("version") != LOG_VERSION:
        raise TamperedLog(f"version {header.get('version')!r}, not {LOG_VERSION} (written before "
                          "trial logs were sealed)")  # fmt: skip
    _check_line(complete[0], key, 0, b"")
    previous = complete[0]
    trials: list[Trial] = []
    for index, line in enumerate(complete[1:], start=1):
        entry = _check_line(line, key, index, previous)
        try:
            trial = Trial.from_dict(entry)
        except (ValueError, KeyError, TypeError) as exc:
            raise TamperedLog(f"line {index + 1}: {exc}") from None
        if trial.n != index - 1:
            raise TamperedLog(f"line {index + 1} holds trial {trial.n}, not {index - 1}")
        trials.append(trial)
        previous = line
    return _Read(trials, sum(len(line) + 1 for line in complete), previous)


def _header(line: bytes, path: Path) -> dict[str, object]:
    """The header line as a dict; :class:`TrialLogError` when the file is no trial log."""
    try:
        header = bounded_input.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, UnicodeDecodeError):
        raise _not_a_log(path) from None
    if not isinstance(header, dict) or header.get("kind") != "header":
        raise _not_a_log(path)
    return header


def _not_a_log(path: Path) -> TrialLogError:
    return TrialLogError("this file is not a t3d-audit trial log (its first line is no header)",
                         where=f"{path}:1", hint="give --log another path; the file was left as it is")  # fmt: skip


def check_log_target(path: Path) -> None:
    """Refuse, before a search does any work, a ``--log`` path no search may write: a symlink,
    FIFO, device, socket or folder, or an existing file that is no trial log
    (:class:`TrialLogError`). Whose search a log is, is checked when it is opened."""
    path = Path(path)
    if not _refuse_odd_path(path):
        return
    try:
        data = bounded_input.read_bytes(path, what="trial log")
    except OSError as exc:
        raise TrialLogError(f"cannot read the trial log: {exc.strerror or exc}", where=str(path)) from None
    first, newline, _ = data.partition(b"\n")
    if newline:
        _header(first, path)
    elif data and not data.startswith(b'{"key":"'):
        raise _not_a_log(path)


def read_log(path: Path, key: str) -> list[Trial]:
    """The verified trials of the log at ``path`` written for search ``key`` (``[]`` when
    absent). A torn last line is dropped. :class:`TrialLogError` when the file is not a trial
    log, is another search's, or fails its seals (a reader that only looks does not discard)."""
    try:
        return _read(Path(path), key).trials
    except TamperedLog as exc:
        raise TrialLogError(f"the trial log fails verification: {exc}", where=str(path),
                            hint="a search on it discards it and measures afresh") from None  # fmt: skip


class TrialLog:
    """Appends sealed trials to ``path`` (creating it with its header), fsync'ed line by line,
    under the file lock ``<path>.lock`` from construction to :meth:`close`."""

    def __init__(self, path: Path, key: str, header: dict[str, object]):
        self.path = Path(path)
        self.key = key
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(self.path.name + LOCK_SUFFIX)
        self._lock = FileLock(str(lock_path))
        try:
            self._lock.acquire()
        except OSError as exc:  # a symlink (never followed), a folder or a device in its place
            what = "its lock file is a symlink" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
            raise TrialLogError(f"cannot lock the trial log: {what}", where=str(lock_path),
                                hint="remove it; a search creates its own") from None  # fmt: skip
        try:
            self._open(header)
        except BaseException:
            self._lock.release()
            raise

    def _open(self, header: dict[str, object]) -> None:
        try:
            found = _read(self.path, self.key)
        except TamperedLog as exc:
            aside = self.path.with_name(self.path.name + DISCARDED_SUFFIX)
            if _refuse_odd_path(aside):
                aside.unlink()
            os.replace(self.path, aside)
            cacheseal.discarded(CACHE_KIND, self.path, f"{exc}; kept as {aside.name}")
            found = _Read([], 0, b"")
        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags | getattr(os, "O_NONBLOCK", 0), 0o666)
        except OSError as exc:
            what = "a symlink" if exc.errno == errno.ELOOP else exc.strerror
            raise TrialLogError(f"cannot write the trial log: {what}", where=str(self.path)) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped in since it was read
            os.close(fd)
            raise TrialLogError("the trial log is not a regular file", where=str(self.path))
        os.ftruncate(fd, found.good_bytes)  # drop a torn last line before appending after it
        os.lseek(fd, 0, os.SEEK_END)
        self._fh = os.fdopen(fd, "wb")
        self.trials = list(found.trials)
        self._previous = found.last_line
        self._lines = 1 + len(self.trials) if found.last_line else 0
        if not found.last_line:
            self._write({"kind": "header", "key": self.key, "version": LOG_VERSION, "search": header})

    def _write(self, entry: dict[str, object]) -> None:
        line = _sealed_line(entry, self.key, self._lines, self._previous)
        self._fh.write(line + b"\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._previous = line
        self._lines += 1

    def append(self, trial: Trial) -> None:
        if trial.n != len(self.trials):
            raise ValueError(f"trial {trial.n} appended as trial {len(self.trials)}")
        self._write(trial.to_dict())
        self.trials.append(trial)

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            if self._lock.is_locked:
                self._lock.release()

    def __enter__(self) -> TrialLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
