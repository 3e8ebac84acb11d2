"""Atomic file publication: readers see the old file or the whole new one, never a partial one.

The bytes go to a temporary file in the target's own directory (same file system, so the
rename is atomic), are flushed and fsync'ed, and the temp file is renamed over the target with
``os.replace``. On any failure (including KeyboardInterrupt) the temp file is removed and the
target is left as it was. Parent directories are created.

Every JSON file goes through :func:`write_json_atomic` (or :func:`json_text` where the bytes
are hashed or sealed first), so all of them share one NaN policy.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path


def current_umask() -> int:
    """The process's umask (e.g. ``0o022``), read without changing it where the OS allows
    (Linux's ``/proc/self/status``); elsewhere set and restored at once."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def give_plain_file_mode(fd: int) -> None:
    """Give a ``tempfile.mkstemp`` file (always 0600) the mode ``open()`` would have given it:
    0666 less the umask (0644 under the usual 022), so every published file has the same
    mode however it was written."""
    os.fchmod(fd, 0o666 & ~current_umask())


def not_a_plain_file(path: str | Path) -> str | None:
    """What stands at ``path`` when it is not a regular file, in words ("a symlink", dangling or
    not; "a folder"; "not a regular file (a FIFO, socket or device)"), else ``None`` (a regular
    file, or nothing there). Reads ``lstat`` only, so a link is never followed; other
    ``OSError``s propagate."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket or device)"


def write_bytes_atomic(path: str | Path, data: bytes, *, mode: int | None = None) -> None:
    """Atomically replace (or create) ``path`` with exactly ``data``; the file gets ``mode``
    (permission bits, set before the rename) or, by default, the mode ``open()`` would give it
    (0666 less the umask), not mkstemp's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is None:
            give_plain_file_mode(fd)
        else:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(
    path: str | Path, text: str, encoding: str = "utf-8", *, mode: int | None = None
) -> None:
    """Atomically write ``text`` encoded as ``encoding``; newlines are written as given."""
    write_bytes_atomic(path, text.encode(encoding), mode=mode)


def json_text(
    value: object, *, indent: int | None = 2, sort_keys: bool = True, ensure_ascii: bool = False
) -> str:
    """``value`` as JSON text with a trailing newline: the one serialisation of every JSON file
    the harness writes (each writer keeps its own indent, key order and escaping, so its bytes
    are stable).

    One NaN policy for all of them: ``allow_nan=False``. JSON has no NaN or Infinity, so a
    non-finite float raises ``ValueError``; writers state missing values as ``null`` (or
    ``not_reported`` in cards) before they get here.
    """
    return json.dumps(
        value, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii, allow_nan=False
    ) + "\n"


def write_json_atomic(
    path: str | Path,
    value: object,
    *,
    indent: int | None = 2,
    sort_keys: bool = True,
    ensure_ascii: bool = False,
) -> Path:
    """Atomically write ``value`` as :func:`json_text` (UTF-8) to ``path``; returns ``path``."""
    path = Path(path)
    write_text_atomic(
        path, json_text(value, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    )
    return path


def prune_stale(folder: str | Path, max_age_s: float) -> int:
    """Delete the entries (files or folders) of ``folder`` last modified over ``max_age_s``
    seconds ago, i.e. left by killed writers; returns how many. Younger ones may belong to a
    live writer and are kept; a missing folder holds nothing."""
    folder = Path(folder)
    if not folder.is_dir():
        return 0
    now, removed = time.time(), 0
    for path in folder.iterdir():
        try:
            if now - path.stat().st_mtime > max_age_s:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
                removed += 1
        except FileNotFoundError:
            continue
    return removed
