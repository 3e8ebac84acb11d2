"""All-or-nothing output folders for imports: build in a sibling staging folder, swap in at the end.

``with staged_directory(out) as stage:`` yields a fresh folder next to ``out`` (same file
system) that starts as a copy of ``out`` when ``out`` exists: files are hard-linked, not copied,
so staging a large scene set is cheap. Writers inside the stage must replace files (temp +
rename, ``harness.core.fileio``), never write into an existing file, or they would change ``out``'s
file through the shared link. On a normal exit the stage is renamed to ``out`` (an existing
``out`` is first renamed aside, then removed); on any exception the stage is removed, folders
created for ``out``'s parents are removed again, and ``out`` is left exactly as it was.

The swap is two renames, so a reader that opens ``out`` between them sees no folder; concurrent
imports into one ``out`` are not merged (the last one wins).

A process killed mid-import (SIGKILL, power loss) leaves its staging folder behind. Folder names
carry their owner (``.<out>.import-<pid>+<host>+<random>``, the swap's ``.<out>.old-…`` alike),
so the next import into ``out`` removes them (:func:`prune_stale_stages`): at once when the
owner is a process of this host that no longer runs, else (another host, or a name without an
owner) once untouched for :data:`STALE_AGE_S`. A swap killed between its two renames left the
previous ``out`` inside its ``.old-`` folder; that is renamed back to ``out`` first.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.core.errors import ImportError_


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # file system without hard links
        shutil.copy2(src, dst)


def _make_parents(parent: Path, out: Path) -> list[Path]:
    """Create ``parent`` and missing ancestors; returns the created ones, deepest first."""
    missing = []
    probe = parent
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _remove_empty(missing)
        raise ImportError_(
            f"cannot create the output folder's parent: {exc.strerror or exc}",
            path=out,
            hint="--out must be a folder path whose parents can be created",
        ) from None
    return missing


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


STALE_AGE_S = 6 * 3600.0  # a staging folder whose owner cannot be checked, untouched this long
_OWNER = re.compile(r"(?:import|old)-(\d+)\+([^+/]*)\+")


def _tag(out: Path, kind: str) -> str:
    """Prefix of this process's ``kind`` (``import`` or ``old``) folders next to ``out``."""
    return f".{out.name}.{kind}-{os.getpid()}+{_host()}+"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())[:64]


def _stale(entry: Path, out_name: str, now: float) -> bool:
    """Whether a staging folder's owner is gone (see the module docstring)."""
    match = _OWNER.match(entry.name[len(out_name) + 2 :])  # after ".<out>."
    if match is not None and match.group(2) == _host():
        return not _alive(int(match.group(1)))
    try:
        return now - entry.lstat().st_mtime > STALE_AGE_S
    except OSError:
        return False


def prune_stale_stages(out: Path | str) -> int:
    """Remove staging (and swap) folders next to ``out`` left by killed imports; returns how
    many. A killed swap's previous ``out`` is put back first when ``out`` is missing."""
    out = Path(out)
    try:
        siblings = sorted(out.parent.iterdir()) if out.parent.is_dir() else []
    except OSError:
        return 0
    now, removed = time.time(), 0
    prefixes = (f".{out.name}.old-", f".{out.name}.import-")  # old first: it may hold the set
    for prefix in prefixes:
        for entry in siblings:
            if not (entry.name.startswith(prefix) and entry.is_dir() and not entry.is_symlink()):
                continue
            if not _stale(entry, out.name, now):
                continue
            kept = entry / "old"
            if prefix.endswith(".old-") and kept.is_dir() and not out.exists():
                os.rename(kept, out)
            shutil.rmtree(entry, ignore_errors=True)
            removed += 1
    return removed


@contextmanager
def staged_directory(out: Path | str) -> Iterator[Path]:
    """Yield a staging folder to fill; publish it as ``out`` on success (see module docstring).

    Raises :class:`ImportError_` when ``out`` exists and is not a folder, or when its parent
    cannot be created.
    """
    given = Path(out)
    out = given.resolve()
    if out.exists() and not out.is_dir():
        raise ImportError_(
            "output path exists and is not a folder",
            path=given,
            hint="--out names the scene-set folder to create or extend",
        )
    created = _make_parents(out.parent, given)
    prune_stale_stages(out)
    try:
        stage = Path(tempfile.mkdtemp(prefix=_tag(out, "import"), dir=out.parent))
    except OSError as exc:
        _remove_empty(created)
        raise ImportError_(
            f"cannot create a staging folder next to the output: {exc.strerror or exc}",
            path=given,
            hint="the output's parent folder must be writable",
        ) from None
    try:
        if out.is_dir():
            shutil.copytree(
                out, stage, symlinks=True, copy_function=_link_or_copy, dirs_exist_ok=True
            )
        else:
            os.chmod(stage, _default_mode())  # mkdtemp makes it owner-only
        yield stage
        _swap(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        _remove_empty(created)
        raise


def _swap(stage: Path, out: Path) -> None:
    if not out.exists():
        os.rename(stage, out)
        return
    aside = Path(tempfile.mkdtemp(prefix=_tag(out, "old"), dir=out.parent))
    os.rename(out, aside / "old")
    try:
        os.rename(stage, out)
    except BaseException:
        os.rename(aside / "old", out)
        shutil.rmtree(aside, ignore_errors=True)
        raise
    shutil.rmtree(aside, ignore_errors=True)
