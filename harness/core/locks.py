"""A cache lock the audit creates and holds while one process computes what others wait for
(a search, a claim): :func:`held_lock`."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.core.errors import AuditError


@contextmanager
def held_lock(path: Path, what: str, error: type[AuditError] = AuditError) -> Iterator[None]:
    """Hold the file lock ``path`` (its folder made first) for the ``with`` block. A lock file
    that cannot be taken (a symlink, never followed; a folder or a device in its place) is an
    ``error``: "cannot lock ``what``", naming the file and what to do."""
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path))
    try:
        lock.acquire()
    except OSError as exc:
        why = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise error(f"cannot lock {what}: {why}", where=lock.lock_file,
                    hint="remove it; the audit creates its own") from None  # fmt: skip
    try:
        yield
    finally:
        lock.release()
