"""Files an asset pulls in when it is rendered, and the rule that keeps them in the scene set.

An OBJ's ``mtllib`` files and their texture maps, a glTF's buffer and image files
(``harness.scenes.importers.gltf_io.dependencies``), a USD layer's sublayers, references,
payloads and textures, followed to the end (a referenced layer's own references too); the
references are read by ``harness.scenes.assetrefs``.

They are part of the asset: the manifest lists them (so the frozen-scene rule covers a changed
material or layer) and ``scene_identity`` hashes them (so render-cache keys change with them).

Every reference must name a regular file inside the base folder (the scene-set root when a
scene set is read; the source file's own folder when a file is imported, which then copies
them beside the asset: :func:`copy_dependencies`). Anything else is refused with one line
naming the asset and the reference (:func:`check_reference`): absolute POSIX or Windows
paths, ``file:``/``http:`` and other URIs, percent-encoded names, USD package paths
(``a.usdz[b.usda]``) and ``<UDIM>`` patterns, ``..`` or symlinks that leave the base, and
devices, FIFOs or folders. A USDZ package's layers may only name entries of that package.

A missing material or texture of an OBJ is not an error (the renderer falls back to a default
material), but a file of the same name beside the referring file counts (Blender looks there
too); a missing USD layer or texture is an error.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections import deque
from functools import lru_cache
from pathlib import Path

from harness.core.errors import SceneError
from harness.scenes import assetrefs  # the parsers; this module decides and follows
from harness.scenes.meshbytes import mesh_bytes, mesh_size

MAX_FILES = 4096  # files one asset may pull in, in all
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_USD_LAYER = (".usd", ".usda", ".usdc")
_HINT = "every file an asset uses must sit beside it, at a relative path inside the scene set"


def asset_dependencies(root: Path | str, asset: str) -> tuple[str, ...]:
    """Sorted POSIX paths (relative to ``root``) of the files ``asset`` pulls in.

    ``asset`` is a scene asset path relative to ``root``. Raises :class:`SceneError` when a
    reference leaves the scene set (see the module docstring); a missing or unreadable asset
    has none here (it fails where it is loaded).
    """
    root = _resolved(str(root))
    target = root / asset
    try:
        target.stat()
    except OSError:
        return ()
    if asset.lower().endswith((".gltf", ".glb")):
        return _gltf_dependencies(root, asset)
    return tuple(
        sorted(p.relative_to(root).as_posix() for p in dependency_files(root, target.resolve()))
    )


@lru_cache(maxsize=256)
def _resolved(root: str) -> Path:
    # resolve() costs a syscall per path component; a scene-set root does not move mid-run
    return Path(root).resolve()


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


_MEMO: dict[tuple[str, str], tuple[tuple[tuple[str, tuple[int, int] | None], ...], tuple[Path, ...]]] = {}


def dependency_files(
    base: Path, asset_file: Path, *, error: type[SceneError] = SceneError
) -> tuple[Path, ...]:
    """Every file ``asset_file`` pulls in, resolved, each a regular file inside ``base``
    (resolved); raises ``error`` naming the first reference that is not. Cached on the
    modification times and sizes of every file read, so an edited material is re-read."""
    key = (str(base), str(asset_file))
    memo = _MEMO.get(key)
    if memo is not None and all(_stamp(Path(p)) == s for p, s in memo[0]):
        return memo[1]
    read: list[Path] = [asset_file]
    probed: list[Path] = []
    found: list[Path] = []
    seen = {asset_file}
    queue = deque([(asset_file, _kind(asset_file))])
    while queue:
        current, kind = queue.popleft()
        for name, missing_ok in _references(current, error, kind):
            dep = check_reference(base, current, name, error=error, missing_ok=missing_ok)
            if dep is None:
                # Blender looks for a missing map by its file name beside the material too;
                # that file then counts, and the missing paths are watched for appearing
                probed.append(current.parent / name)
                short = name.rsplit("/", 1)[-1]
                if short != name:
                    probed.append(current.parent / short)
                    dep = check_reference(base, current, short, error=error, missing_ok=True)
            if dep is None or dep in seen:
                continue
            seen.add(dep)
            mesh_size(dep, "file the asset pulls in", error=error)  # within the input bound
            found.append(dep)
            if len(found) > MAX_FILES:
                raise error(f"asset pulls in over {MAX_FILES} files", path=asset_file)
            # an OBJ's mtllib is read as a material library whatever its name ends with
            # (Blender opens the file it names); other files by their suffix
            dep_kind = ".mtl" if kind == ".obj" else _kind(dep)
            if dep_kind:
                read.append(dep)
                queue.append((dep, dep_kind))
    result = tuple(found)
    if len(_MEMO) > 4096:
        _MEMO.clear()
    _MEMO[key] = (tuple((str(p), _stamp(p)) for p in (*read, *probed)), result)
    return result


def _kind(path: Path) -> str:
    """The suffix of a file that can reference others (``""`` for one that cannot)."""
    suffix = path.suffix.lower()
    return suffix if suffix in (".obj", ".mtl", ".usdz", *_USD_LAYER) else ""


def _references(path: Path, error: type[SceneError], kind: str | None = None) -> list[tuple[str, bool]]:
    """(reference, missing allowed) pairs written in ``path``, read as a file of ``kind`` (a
    suffix; default: its own)."""
    suffix = _kind(path) if kind is None else kind
    if not suffix:
        return []
    if suffix == ".usdz":
        _check_usdz(path, error)
        return []
    data = _read(path, error)
    if suffix == ".obj":
        return [(n, True) for n in assetrefs.obj_references(data)]
    if suffix == ".mtl":
        return [(n, True) for n in assetrefs.mtl_references(data)]
    crate = data.startswith(b"PXR-USDC")
    try:
        # a crate's tokens include strings (docs, comments): one with a space that names no
        # file is text, not a reference; the rest must exist
        return [(n, crate and any(c.isspace() for c in n))
                for n in assetrefs.usd_references(data, path)]
    except SceneError as exc:
        raise error(exc.what, path=path, hint=exc.hint) from None


def _read(path: Path, error: type[SceneError]) -> bytes:
    return mesh_bytes(path, "asset file", error=error)  # within the input bound


def _check_usdz(path: Path, error: type[SceneError]) -> None:
    """A USDZ package's layers may only reference entries of the same package."""
    try:
        layers = assetrefs.usdz_layers(path)
    except SceneError as exc:
        raise error(exc.what, path=path, hint=exc.hint) from None
    entries = assetrefs.usdz_entries(path)
    for entry, data in layers.items():
        try:
            names = assetrefs.usd_references(data, f"{path}[{entry}]")
        except SceneError as exc:
            raise error(exc.what, path=path, hint=exc.hint) from None
        for name in names:
            _refuse_form(name, f"{path}[{entry}]", error)
            inner = posixpath.normpath(posixpath.join(posixpath.dirname(entry), name))
            if inner not in entries:
                raise error(
                    f"USDZ layer {entry!r} references {name!r}, which is not in the package",
                    path=path,
                    hint="a USDZ package must hold every file it uses",
                )


def _refuse_form(name: str, referrer: Path | str, error: type[SceneError]) -> None:
    """Raise ``error`` when ``name`` is not a plain relative path (see the module docstring)."""
    why = None
    if not name or any(ord(ch) < 32 for ch in name):
        why = "is empty or has a control character"
    elif "\\" in name:
        why = "is a Windows path (backslash)"
    elif name.startswith(("/", "~")) or os.path.isabs(name):
        why = "is an absolute path"
    elif _SCHEME.match(name):
        why = "is a URI or a drive path"
    elif _PERCENT.search(name):
        why = "is percent-encoded"
    elif "[" in name or "<" in name:
        why = "is a package path or a pattern"
    if why is not None:
        raise error(f"reference {name!r} {why}", path=referrer, hint=_HINT)


def check_reference(
    base: Path,
    referrer: Path,
    name: str,
    *,
    error: type[SceneError] = SceneError,
    missing_ok: bool = False,
) -> Path | None:
    """The resolved file ``name`` (written in ``referrer``) names, which must be a regular file
    inside ``base``; None when it is missing and ``missing_ok``. Raises ``error`` otherwise."""
    _refuse_form(name, referrer, error)
    try:
        target = (referrer.parent / name).resolve()
    except (OSError, RuntimeError) as exc:
        raise error(f"reference {name!r} cannot be resolved: {exc}", path=referrer) from None
    if not target.is_relative_to(base):
        raise error(f"reference {name!r} leaves {base}", path=referrer, hint=_HINT)
    try:
        mode = target.stat().st_mode
    except OSError:
        if missing_ok:
            return None
        raise error(f"reference {name!r} names a missing file", path=referrer,
                    hint="copy the file beside the asset") from None
    if not stat.S_ISREG(mode):
        raise error(f"reference {name!r} is not a regular file", path=referrer, hint=_HINT)
    return target


def copy_dependencies(src: Path, dest_dir: Path, write) -> list[str]:
    """Copy every file ``src`` pulls in into ``dest_dir``, keeping their paths relative to
    ``src``'s folder; ``write(target, data)`` writes one file (temp + rename). Returns those
    relative POSIX paths. Raises ImportError_ naming a reference outside ``src``'s folder."""
    from harness.core.errors import ImportError_
    from harness.scenes.meshbytes import mesh_bytes

    base = src.parent.resolve()
    out = []
    for dep in dependency_files(base, src.resolve(), error=ImportError_):
        rel = dep.relative_to(base)
        write(dest_dir / rel, mesh_bytes(dep, "file the asset pulls in"))
        out.append(rel.as_posix())
    return out


def _gltf_dependencies(root: Path, asset: str) -> tuple[str, ...]:
    from harness.scenes.importers.gltf_io import dependencies, read_gltf

    target = root / asset
    try:
        gltf = read_gltf(target)
    except SceneError:
        return ()  # an unreadable asset fails at render time with its own error
    found = set()
    for name in dependencies(gltf):  # raises for a URI that leaves the glTF's folder
        dep = (target.parent / name).resolve()
        if not dep.is_relative_to(root):
            raise SceneError(f"reference {name!r} leaves {root}", path=target, hint=_HINT)
        found.add(dep.relative_to(root).as_posix())
    return tuple(sorted(found))
