"""Files an asset pulls in when it is rendered: an OBJ's ``mtllib`` files and their texture
maps, a glTF's buffer and image files (``harness.scenes.importers.gltf_io.dependencies``).

They are part of the asset: the manifest lists them (so the frozen-scene rule covers a changed
material) and ``scene_identity`` hashes them (so render-cache keys change with them). Only
relative names that resolve to existing files inside the scene-set root count; a missing
material is not an error here (the renderer falls back to a default material).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

_MAP_KEYS = ("map_", "bump", "disp", "decal", "refl", "norm")


def asset_dependencies(root: Path | str, asset: str) -> tuple[str, ...]:
    """Sorted POSIX paths (relative to ``root``) of the material/texture files ``asset`` uses.

    ``asset`` is a scene asset path relative to ``root``; assets other than OBJ and glTF have
    none.
    """
    if asset.lower().endswith((".gltf", ".glb")):
        return _gltf_dependencies(_resolved(str(root)), asset)
    if not asset.lower().endswith(".obj"):
        return ()
    root = _resolved(str(root))
    target = root / asset
    try:
        stat = target.stat()
    except OSError:
        return ()
    return _cached(str(root), asset, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=256)
def _resolved(root: str) -> Path:
    # resolve() costs a syscall per path component; a scene-set root does not move mid-run
    return Path(root).resolve()


@lru_cache(maxsize=4096)
def _cached(root_str: str, asset: str, _mtime: int, _size: int) -> tuple[str, ...]:
    # keyed on mtime and size as well, so an edited OBJ is re-read
    root = Path(root_str)
    obj = root / asset
    found: set[str] = set()
    for mtl_name in _names(obj, ("mtllib",)):
        mtl = _inside(root, obj.parent, mtl_name)
        if mtl is None:
            continue
        found.add(mtl.relative_to(root).as_posix())
        for tex_name in _names(mtl, _MAP_KEYS, last_only=True):
            tex = _inside(root, mtl.parent, tex_name)
            if tex is not None:
                found.add(tex.relative_to(root).as_posix())
    return tuple(sorted(found))


def _names(path: Path, keys: tuple[str, ...], *, last_only: bool = False) -> list[str]:
    """File names on lines starting with one of ``keys`` (all tokens, or the last one)."""
    out: list[str] = []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        words = line.split()
        if len(words) < 2 or not words[0].lower().startswith(keys):
            continue
        out.extend(words[-1:] if last_only else words[1:])
    return out


def _inside(root: Path, base: Path, name: str) -> Path | None:
    if name.startswith("/") or "\\" in name or os.path.isabs(name):
        return None
    try:
        resolved = (base / name).resolve()
    except (OSError, RuntimeError):
        return None
    if resolved.is_relative_to(root) and resolved.is_file():
        return resolved
    return None


def _gltf_dependencies(root: Path, asset: str) -> tuple[str, ...]:
    from harness.errors import SceneError
    from harness.scenes.importers.gltf_io import dependencies, read_gltf

    target = root / asset
    try:
        names = dependencies(read_gltf(target))
    except SceneError:
        return ()  # an unreadable asset fails at render time with its own error
    found = set()
    for name in names:
        dep = _inside(root, target.parent, name)
        if dep is not None:
            found.add(dep.relative_to(root).as_posix())
    return tuple(sorted(found))
