"""``claim --out DIR``: every file of a claim, all or nothing.

The files are written into a fresh folder beside ``DIR`` first; only when every one of them is
written are they moved into ``DIR`` (one rename of the folder when ``DIR`` does not exist yet,
else one rename per file, each replacing the old file at once). A claim that fails, before or
while writing, leaves ``DIR`` as it was and removes its temporary folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from harness.core.errors import AuditError

#: Every name ``--out`` may write (a claim writes those it has).
OUT_NAMES = ("claim.json", "claim.md", "claim.tex", "claim.html", "card.json", "claim_envelope.png",
             "claim_presets.png", "claim_worst_vs_c0.png", "claim_matrix.png")  # fmt: skip


def check_out(out: Path) -> None:
    """An :class:`AuditError`, before any work, when ``out`` cannot take the claim's files: a
    file (not a folder) at ``out``, or one of :data:`OUT_NAMES` taken by a folder or a device."""
    from harness.core.fileio import not_a_plain_file

    if out.exists() and not out.is_dir():
        raise AuditError(f"{out} is not a folder", where="--out", hint="name a folder")
    for name in OUT_NAMES:
        kind = not_a_plain_file(out / name) if out.is_dir() else None
        if kind is not None and kind != "a symlink":
            raise AuditError(f"{out / name} is {kind}; the claim writes a file there", where="--out",
                             hint="remove it, or give --out another folder")  # fmt: skip


def write_all(out: Path, files: Mapping[str, bytes]) -> list[Path]:
    """Write ``files`` (name → bytes, names of :data:`OUT_NAMES`) into ``out`` (module doc);
    returns the paths written."""
    from harness.core.fileio import write_bytes_atomic

    unknown = sorted(set(files) - set(OUT_NAMES))
    if unknown:
        raise ValueError(f"not a claim output: {unknown}")
    check_out(out)
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.claim-", dir=parent))
    try:
        for name, data in files.items():
            write_bytes_atomic(staging / name, data)
        if not out.exists():
            os.chmod(staging, 0o777 & ~_umask())  # as mkdir would have made it
            os.replace(staging, out)
        else:
            for name in files:
                os.replace(staging / name, out / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / name for name in files]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
