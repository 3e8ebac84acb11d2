"""What code and which libraries made a cached piece: the sha256 of source files by their name
under ``harness/``, and installed distribution versions. Part of the keys of report pieces,
thumbnails and summaries, so a change of either makes them anew."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from harness.core.hashing import sha256_file


def source_hash(paths: Iterable[Path]) -> dict[str, str]:
    """``{file name relative to harness/: sha256}`` of source files (the code making a piece)."""
    from harness.core.paths import PACKAGE_DIR

    root = PACKAGE_DIR  # the checkout's harness/ or the installed package: the same names
    out: dict[str, str] = {}
    for path in sorted(Path(p) for p in paths):
        try:
            name = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            name = path.name
        out[name] = sha256_file(path)
    return out


def package_versions(names: Iterable[str]) -> dict[str, str]:
    """Installed version of each distribution (``""`` when absent): drawing and encoding libraries
    whose output bytes may change between versions."""
    out = {}
    for name in sorted(names):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = ""
    return out
