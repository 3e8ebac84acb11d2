"""Blender's own output goes to a log file, not the terminal.

bpy prints from C and C++ straight to file descriptors 1 and 2, past ``sys.stdout``: a line per
imported OBJ ("OBJ import of 'a.obj' took 0.4 ms"), per saved render ("Saved: ..."), Cycles'
"CUEW initialization failed" per process, and its logger's warnings and errors. While
:func:`capture` is active both descriptors point at ``<log dir>/blender-<pid>.log`` (appended),
so the terminal keeps only the harness's progress, verdict and summary. A failure can quote
what Blender said with :meth:`Span.tail`.

Descriptors are per process, so this is process-wide: anything else the process writes to
fd 1/2 while Blender runs (another thread's print) lands in the log too. Re-entrant: a nested
``capture`` joins the outer one. If the log cannot be opened, output stays on the terminal.
Old logs are not pruned: each is a few hundred bytes per render and per imported asset.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

TAIL_LINES = 8  # lines of Blender output quoted in a render error
TAIL_CHARS = 1200


def log_path(log_dir: Path | str) -> Path:
    """This process's Blender log file in ``log_dir``."""
    return Path(log_dir) / f"blender-{os.getpid()}.log"


def _flush_all() -> None:
    """Flush Python's and C stdio's buffers, so buffered text lands where fds 1/2 point now."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        _libc().fflush(None)


_LIBC: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None))
    return _LIBC[0]


@dataclass
class Span:
    """The part of a log file written during one capture: ``path`` from byte ``start`` on."""

    path: Path | None
    start: int = 0

    def tail(self, lines: int = TAIL_LINES) -> str:
        """The last ``lines`` non-empty lines Blender wrote in this span, joined by " | "."""
        if self.path is None:
            return ""
        _flush_all()
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.start)
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
        return " | ".join(kept)[-TAIL_CHARS:]

    def from_here(self) -> Span:
        """A span of the same log starting at its current end (to quote one operation)."""
        if self.path is None:
            return Span(None)
        _flush_all()
        try:
            return Span(self.path, self.path.stat().st_size)
        except OSError:
            return Span(self.path, self.start)

    def describe(self) -> str:
        """A hint for an error: the log file and the span's last lines."""
        if self.path is None:
            return ""
        tail = self.tail()
        return f"Blender's output is in {self.path}" + (f"; it ended: {tail}" if tail else "")


_ACTIVE: list[Span] = []
_DIR: list[Path] = []


def set_log_dir(log_dir: Path | str) -> None:
    """Where later captures of this process write (``RenderService``: ``<cache>/logs``)."""
    _DIR[:] = [Path(log_dir)]


def current_log_dir() -> Path:
    """The folder set by :func:`set_log_dir`, else ``<default render cache dir>/logs``."""
    if _DIR:
        return _DIR[0]
    from harness.render.cache import default_render_cache_dir

    return default_render_cache_dir() / "logs"


@contextlib.contextmanager
def capture(log_dir: Path | str | None = None) -> Iterator[Span]:
    """Point fds 1 and 2 at this process's log in ``log_dir`` for the ``with`` body.

    ``log_dir`` defaults to :func:`current_log_dir`. A log that cannot be opened leaves output
    on the terminal (the yielded span then has ``path`` None).
    """
    if _ACTIVE:
        yield _ACTIVE[-1]
        return
    span = Span(None)
    path = log_path(log_dir if log_dir is not None else current_log_dir())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        span = Span(path, os.fstat(fd).st_size)
    except OSError:
        fd = -1
    if fd < 0:
        _ACTIVE.append(span)
        try:
            yield span
        finally:
            _ACTIVE.pop()
        return
    _flush_all()
    saved = (os.dup(1), os.dup(2))
    _ACTIVE.append(span)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield span
    finally:
        _ACTIVE.pop()
        _flush_all()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for f in (*saved, fd):
            os.close(f)
