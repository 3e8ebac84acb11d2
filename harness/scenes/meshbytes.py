"""The input bound applied to mesh and asset files: every importer reads them here.

A mesh body can be far larger than its header suggests (a 4 GB sparse PLY behind a 300-byte
header), so each mesh, scene asset and file an asset pulls in (glTF buffers and images, OBJ
materials and textures, USD layers) is sized by ``fstat`` on its opened descriptor and
refused above the project's one input bound, ``$T3D_AUDIT_MAX_INPUT_BYTES`` (default 256 MiB,
``harness.core.bounded_input``), before a byte of its body is read or the file is handed to
Blender. Reads take at most bound + 1 bytes, so a file that grows while it is read is refused
too. Each refusal is one :class:`~harness.core.errors.ImportError_` line (or the ``error``
type a caller passes) naming the file, its size, the bound and the variable that raises it.
"""

from __future__ import annotations

from pathlib import Path

from harness.core import bounded_input
from harness.core.errors import ImportError_, SceneError


def mesh_size(path: Path | str, what: str = "mesh file", *,
              error: type[SceneError] = ImportError_) -> int:
    """Bytes of the regular file ``path`` within the input bound, reading none of them.
    Raises ``error`` for a file over the bound, not a regular file, or unreadable."""
    try:
        return bounded_input.checked_size(path, what=what)
    except bounded_input.InputFileError as exc:
        raise error(exc.what, path=path, hint=exc.hint) from None
    except OSError as exc:
        raise error(f"cannot read the {what}: {exc.strerror or exc}", path=path) from None


def mesh_head(path: Path | str, count: int, what: str = "mesh file", *,
              error: type[SceneError] = ImportError_) -> tuple[bytes, int]:
    """(the first ``count`` bytes, the size) of ``path``, refused as :func:`mesh_size` refuses."""
    try:
        return bounded_input.read_head(path, count, what=what)
    except bounded_input.InputFileError as exc:
        raise error(exc.what, path=path, hint=exc.hint) from None
    except OSError as exc:
        raise error(f"cannot read the {what}: {exc.strerror or exc}", path=path) from None


def mesh_bytes(path: Path | str, what: str = "mesh file", *,
               error: type[SceneError] = ImportError_) -> bytes:
    """Every byte of ``path``, at most the input bound (a file that grows past it while read
    is refused), refused as :func:`mesh_size` refuses."""
    try:
        return bounded_input.read_bytes(path, what=what)
    except bounded_input.InputFileError as exc:
        raise error(exc.what, path=path, hint=exc.hint) from None
    except OSError as exc:
        raise error(f"cannot read the {what}: {exc.strerror or exc}", path=path) from None
