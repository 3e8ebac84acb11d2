"""The scene-set manifest (``<root>/manifest.json``) and the frozen-scene rule.

Format (all paths POSIX, relative to the scene-set root; every list sorted)::

    {"schema": "t3d-scene-set/1",
     "scenes": [{"path", "sha256", "id", "generator", "prompt_id"}, ...],   # sorted by path
     "assets": [{"path", "sha256"}, ...],        # every asset used or listed as a candidate,
                                                 # plus the .mtl/texture files OBJ assets name
     "generators": ["...", ...],
     "prompts": [{"prompt_id", "prompt"}, ...]}  # sorted by prompt_id

Written as pretty JSON (sorted keys, indent 1, UTF-8, trailing newline) so that the same scene
set gives the same bytes and diffs stay readable.

Frozen-scene rule (:func:`verify_manifest`): every listed scene and asset file exists with
the listed sha256, and no unlisted scene file sits next to the listed ones. "Next to" means:
every ``*.json`` file under the first path component of each listed scene (recursively; e.g.
``scenes/**.json`` for ``scenes/holodeck/p01.json``), or directly in the root for scenes stored
at the top level, except ``manifest.json`` and listed assets. Other files (README, unlisted
meshes) are ignored: they cannot change a scene without changing a listed hash.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from harness.core import bounded_input
from harness.core.errors import ManifestError, SceneError
from harness.core.fileio import json_text, write_bytes_atomic
from harness.core.hashing import sha256_bytes, sha256_file
from harness.scenes.assetdeps import asset_dependencies
from harness.scenes.load import check_asset_path, load_scene, parse_scene
from harness.scenes.model import Scene

MANIFEST_SCHEMA = "t3d-scene-set/1"
MANIFEST_NAME = "manifest.json"


def manifest_bytes(manifest: dict[str, object]) -> bytes:
    """The canonical pretty serialisation: sorted keys, indent 1, UTF-8, trailing newline."""
    return json_text(manifest, indent=1).encode("utf-8")


def _relative(root: Path, scene_path: Path | str) -> str:
    """POSIX path of ``scene_path`` relative to the (resolved) ``root``.

    Absolute paths must lie under ``root``. A relative path names a file relative to ``root``;
    if no such file exists but the path (relative to the working directory) names a file under
    ``root``, that file is meant (``build_manifest("sets/a", ["sets/a/x.json"])``).
    """
    p = Path(scene_path)
    if not p.is_absolute():
        if (root / p).is_file() or not p.is_file():
            return PurePosixPath(*p.parts).as_posix()
        p = Path.cwd() / p
    try:
        # Only the directory is resolved: a scene file that is itself a symlink stays named.
        p = p.parent.resolve() / p.name
        return p.relative_to(root).as_posix()
    except (ValueError, OSError):
        raise SceneError(
            f"scene file {scene_path} is outside the scene-set root {root}",
            path=scene_path,
            hint="scene files live under the root",
        ) from None


def build_manifest(root: Path | str, scene_paths: object) -> dict[str, object]:
    """Validate the scene files and describe them (and the assets they use) with sha256.

    ``scene_paths``: iterable of paths, absolute or relative to ``root``. Raises SceneError for
    an invalid scene, a duplicate scene id, two scenes for one (generator, prompt_id), or one
    prompt id with two different prompt texts.
    """
    root = Path(root).resolve()
    scenes: list[dict[str, object]] = []
    assets: set[str] = set()
    prompts: dict[str, str] = {}
    by_id: dict[str, str] = {}
    by_cell: dict[tuple[str, str], str] = {}
    checked: set[str] = set()
    deps: dict[str, tuple[str, ...]] = {}
    for raw in scene_paths:
        rel = _relative(root, raw)
        check_asset_path(rel, root, path=rel, kind="scene file")
        data = bounded_input.read_bytes(root / rel, what="scene file")
        scene = parse_scene(data, path=root / rel, root=root, checked_assets=checked)
        check_set_invariants(scene, rel, by_id, by_cell, prompts)
        scenes.append(
            {
                "path": rel,
                "sha256": sha256_bytes(data),
                "id": scene.id,
                "generator": scene.generator,
                "prompt_id": scene.prompt_id,
            }
        )
        assets.update(scene_asset_files(root, scene, deps))
    scenes.sort(key=lambda e: e["path"])
    if not scenes:
        raise SceneError("no scene files given", path=root, hint="a scene set has >= 1 scene")
    return {
        "schema": MANIFEST_SCHEMA,
        "scenes": scenes,
        "assets": [{"path": a, "sha256": sha256_file(root / a)} for a in sorted(assets)],
        "generators": sorted({e["generator"] for e in scenes}),
        "prompts": [{"prompt_id": k, "prompt": prompts[k]} for k in sorted(prompts)],
    }


def scene_asset_paths(scene: Scene) -> set[str]:
    """Asset paths a scene uses or lists as retrieval candidates."""
    out = {o.asset for o in scene.objects}
    for obj in scene.objects:
        out.update(c.asset for c in obj.candidates or ())
    return out


def scene_asset_files(
    root: Path, scene: Scene, memo: dict[str, tuple[str, ...]] | None = None
) -> set[str]:
    """:func:`scene_asset_paths` plus the material/texture files those assets pull in.

    ``memo`` (asset -> dependencies) may be shared across the scenes of one pass.
    """
    memo = {} if memo is None else memo
    out = scene_asset_paths(scene)
    for asset in list(out):
        if asset not in memo:
            memo[asset] = asset_dependencies(root, asset)
        out.update(memo[asset])
    return out


def check_set_invariants(
    scene: Scene,
    where: str,
    by_id: dict[str, str],
    by_cell: dict[tuple[str, str], str],
    prompts: dict[str, str],
) -> None:
    """Shared scene-set invariants; updates the three maps in place."""
    if scene.id in by_id:
        raise SceneError(
            f"duplicate scene id {scene.id!r} (also in {by_id[scene.id]})",
            path=where,
            pointer="/id",
            hint="scene ids are unique within a scene set",
        )
    by_id[scene.id] = where
    cell = (scene.generator, scene.prompt_id)
    if cell in by_cell:
        raise SceneError(
            f"second scene for generator {cell[0]!r} and prompt {cell[1]!r} "
            f"(also in {by_cell[cell]})",
            path=where,
            pointer="/prompt_id",
            hint="a scene set holds one scene per (generator, prompt)",
        )
    by_cell[cell] = where
    known = prompts.setdefault(scene.prompt_id, scene.prompt)
    if known != scene.prompt:
        raise SceneError(
            f"prompt id {scene.prompt_id!r} has two different prompt texts",
            path=where,
            pointer="/prompt",
            hint="every scene of one prompt id must carry the same prompt",
        )


def write_manifest(root: Path | str, manifest: dict[str, object]) -> Path:
    """Write ``<root>/manifest.json`` atomically (temp file in the root, fsync, then rename)."""
    target = Path(root) / MANIFEST_NAME
    write_bytes_atomic(target, manifest_bytes(manifest))
    return target


def _fail(what: str, root: Path, pointer: str = "", hint: str | None = None) -> ManifestError:
    return ManifestError(what, path=root / MANIFEST_NAME, pointer=pointer, hint=hint)


def _need(cond: bool, what: str, root: Path, pointer: str) -> None:
    if not cond:
        raise _fail(what, root, pointer, hint="rebuild it with write_manifest(build_manifest(...))")


def read_manifest(root: Path | str) -> dict[str, object]:
    """Read and structurally check ``<root>/manifest.json`` (no file hashing)."""
    root = Path(root)
    target = root / MANIFEST_NAME
    try:
        raw = bounded_input.read_bytes(target, what="manifest")
    except OSError as exc:
        raise _fail(
            f"cannot read manifest: {exc.strerror or exc}",
            root,
            hint="a scene set needs manifest.json: import scenes into it with `t3d-audit import-scene FILE --out DIR`",
        ) from None
    try:
        doc = bounded_input.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise _fail(f"malformed manifest: {exc}", root) from None
    _need(isinstance(doc, dict), "manifest is not a JSON object", root, "")
    _need(
        doc.get("schema") == MANIFEST_SCHEMA, f"schema must be {MANIFEST_SCHEMA!r}", root, "/schema"
    )
    expected = {"schema", "scenes", "assets", "generators", "prompts"}
    _need(set(doc) == expected, f"fields must be exactly {sorted(expected)}", root, "")
    entry_fields = {
        "scenes": {"path", "sha256", "id", "generator", "prompt_id"},
        "assets": {"path", "sha256"},
        "prompts": {"prompt_id", "prompt"},
    }
    for key, fields in entry_fields.items():
        _need(isinstance(doc[key], list), f"{key} must be a list", root, f"/{key}")
        for i, entry in enumerate(doc[key]):
            ok = isinstance(entry, dict) and set(entry) == fields
            ok = ok and all(isinstance(v, str) and v for v in entry.values())
            _need(
                ok,
                f"{key} entries need exactly the string fields {sorted(fields)}",
                root,
                f"/{key}/{i}",
            )
    _need(len(doc["scenes"]) > 0, "manifest lists no scenes", root, "/scenes")
    _need(
        isinstance(doc["generators"], list) and all(isinstance(g, str) for g in doc["generators"]),
        "generators must be a list of strings",
        root,
        "/generators",
    )
    return doc


def verify_manifest(root: Path | str) -> dict[str, object]:
    """Check the frozen-scene rule; return the manifest dict.

    Raises ManifestError naming the first offending file: a listed scene/asset that is missing
    or whose sha256 changed, or an unlisted scene file (see the module docstring for where
    unlisted files are looked for). Files are checked in manifest order (scenes, then assets).
    """
    root = Path(root).resolve()
    doc = read_manifest(root)
    for key, kind in (("scenes", "scene file"), ("assets", "asset")):
        for i, entry in enumerate(doc[key]):
            rel = entry["path"]
            where = f"/{key}/{i}/path"
            try:
                resolved = check_asset_path(
                    rel,
                    root,
                    path=root / MANIFEST_NAME,
                    where=where,
                    error=ManifestError,
                    kind=kind,
                )
            except ManifestError as exc:
                if exc.what.startswith("missing"):
                    raise ManifestError(
                        f"{kind} {rel!r} listed in the manifest is missing",
                        path=root / rel,
                        hint="frozen scenes may not change; restore the file or rebuild the set",
                    ) from None
                raise
            actual = sha256_file(resolved)
            if actual != entry["sha256"]:
                raise ManifestError(
                    f"{kind} {rel!r} changed: sha256 {actual[:12]}… but the manifest lists "
                    f"{entry['sha256'][:12]}…",
                    path=root / rel,
                    hint="frozen scenes may not change; restore the file or rebuild the set "
                    "under a new name",
                )
    extra = _unlisted_scene_files(root, doc)
    if extra:
        raise ManifestError(
            f"unlisted scene file {extra[0]!r} in the scene set",
            path=root / extra[0],
            hint="remove it, or rebuild the manifest to include it",
        )
    return doc


def _unlisted_scene_files(root: Path, doc: dict[str, object]) -> list[str]:
    listed = {e["path"] for e in doc["scenes"]} | {e["path"] for e in doc["assets"]}
    listed.add(MANIFEST_NAME)
    tops = {PurePosixPath(e["path"]).parts[0] for e in doc["scenes"]}
    found: set[str] = set()
    for top in sorted(tops):
        base = root / top
        if base.is_dir():
            found.update(p.relative_to(root).as_posix() for p in base.rglob("*.json"))
        else:  # scenes stored directly in the root
            found.update(p.name for p in root.glob("*.json") if p.is_file())
    return sorted(found - listed)


def load_listed_scenes(root: Path, doc: dict[str, object]) -> list[tuple[str, Scene]]:
    """Load every scene the manifest lists and check it against its entry.

    Returns (relative path, scene) pairs in manifest order. Raises SceneError for an invalid
    scene and ManifestError when a scene's id/generator/prompt_id disagree with its entry, a
    scene uses an asset the manifest does not list, or a prompt differs from the listed text.
    """
    assets = {e["path"] for e in doc["assets"]}
    prompts = {e["prompt_id"]: e["prompt"] for e in doc["prompts"]}
    out = []
    checked: set[str] = set()
    deps: dict[str, tuple[str, ...]] = {}
    for i, entry in enumerate(doc["scenes"]):
        rel = entry["path"]
        scene = load_scene(root / rel, root, checked_assets=checked)
        for field in ("id", "generator", "prompt_id"):
            if getattr(scene, field) != entry[field]:
                raise ManifestError(
                    f"scene {rel!r} has {field} {getattr(scene, field)!r} but the manifest "
                    f"lists {entry[field]!r}",
                    path=root / MANIFEST_NAME,
                    pointer=f"/scenes/{i}/{field}",
                    hint="rebuild the manifest",
                )
        unlisted = sorted(scene_asset_files(root, scene, deps) - assets)
        if unlisted:
            raise ManifestError(
                f"scene {rel!r} uses asset file {unlisted[0]!r} that the manifest does not list",
                path=root / MANIFEST_NAME,
                pointer="/assets",
                hint="rebuild the manifest",
            )
        if prompts.get(scene.prompt_id) != scene.prompt:
            raise ManifestError(
                f"scene {rel!r}: prompt of {scene.prompt_id!r} differs from the manifest",
                path=root / MANIFEST_NAME,
                pointer="/prompts",
                hint="rebuild the manifest",
            )
        out.append((rel, scene))
    return out
