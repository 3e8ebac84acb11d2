"""Atomic file publication: readers see the old file or the whole new one, never a partial one.

The bytes go to a temporary file in the target's own directory (same file system, so the
rename is atomic), are flushed and fsync'ed, and the temp file is renamed over the target with
``os.replace``. On any failure (including KeyboardInterrupt) the temp file is removed and the
target is left as it was. Parent directories are created.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Atomically replace (or create) ``path`` with exactly ``data``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    """Atomically write ``text`` encoded as ``encoding``; newlines are written as given."""
    write_bytes_atomic(path, text.encode(encoding))
