"""All-or-nothing output folders for imports: build in a sibling staging folder, swap in at the end.

``with staged_directory(out) as stage:`` yields a fresh folder next to ``out`` (same file
system) that starts as a copy of ``out`` when ``out`` exists: files are hard-linked, not copied,
so staging a large scene set is cheap. Writers inside the stage must replace files (temp +
rename, ``harness.fileio``), never write into an existing file, or they would change ``out``'s
file through the shared link. On a normal exit the stage is renamed to ``out`` (an existing
``out`` is first renamed aside, then removed); on any exception the stage is removed, folders
created for ``out``'s parents are removed again, and ``out`` is left exactly as it was.

The swap is two renames, so a reader that opens ``out`` between them sees no folder; concurrent
imports into one ``out`` are not merged (the last one wins).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.errors import ImportError_


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
    try:
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.import-", dir=out.parent))
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
    aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    os.rename(out, aside / "old")
    try:
        os.rename(stage, out)
    except BaseException:
        os.rename(aside / "old", out)
        shutil.rmtree(aside, ignore_errors=True)
        raise
    shutil.rmtree(aside, ignore_errors=True)
