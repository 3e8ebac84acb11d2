"""Batch import of generator outputs: one folder per generator, one file per prompt.

Layout read by :func:`import_batch`::

    GENERATORS_DIR/<generator>/<prompt_id>.<any supported format>

Every file is recognised by its content (``harness.scenes.fileformats.detect_format``, the
same function ``import-scene`` uses) and imported by ``dispatch.import_file``:

* glTF/GLB (``gltf.import_gltf``: an object, or a room when it has floor/wall nodes); its
  ``.bin`` and image files may sit next to it;
* OBJ (+MTL), PLY (mesh, point cloud, 3D Gaussian splats), STL, USD/USDA/USDC/USDZ: a single
  generated object (``meshobject.import_object_file``) in the generator's conventions
  (:func:`read_conventions`: up, front, unit or scale per generator, with per-file entries;
  defaults per format);
* sceneState JSON (``scenestate.import_scenestate``); assets resolve under ``asset_root``
  (default: the generator's folder) and ``asset_map``.

Files that are not scenes are skipped and listed with the reason (:attr:`BatchResult.skipped`):
companion files (``.bin``, images, ``.mtl``) and files of no supported format. Names starting
with ``.`` are ignored. A generator folder that yields no scene is an error unless
``allow_missing``.
The file stem is the prompt id; the prompts file (:func:`read_prompts`) gives each id its text
and, optionally, labels. Every file is tried; all problems (a stem not in the prompts file, a
file that cannot be imported) are raised together as one :class:`ImportError_` naming each
file. Scenes go to ``<out>/scenes/<generator>/<prompt_id>.json``, assets to
``<out>/assets/<generator>__<prompt_id>/`` (glTF, OBJ) or ``<out>/assets/<source>/`` (sceneState).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.core import bounded_input
from harness.core.errors import AuditError, ImportError_
from harness.scenes.fileformats import SCENE_SUFFIXES

__all__ = ["SCENE_SUFFIXES", "import_batch", "read_prompts", "scan_generators"]
PROMPT_KEYS = ("prompt", "text")


@dataclass(frozen=True)
class PromptEntry:
    """One prompt of the prompts file: its text and the labels to give its objects.

    ``label``: the object's label in an object scene (``None``: the spec's single object
    category, else the prompt). ``labels``: node name (glTF room) or ``modelId`` (sceneState)
    -> label. ``prompt_source``: the scene's prompt-source tag (``None``: the importer's).
    """

    id: str
    prompt: str
    label: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    prompt_source: str | None = None


def _entry(pid: str, value: object, path: Path, pointer: str) -> PromptEntry:
    if isinstance(value, str):
        value = {"prompt": value}
    if not isinstance(value, dict):
        raise ImportError_(
            "a prompt must be a string or an object", path=path, pointer=pointer,
            hint='e.g. {"p01": "a red chair"} or {"p01": {"prompt": "a red chair", "label": "chair"}}',
        )
    text = next((value[k] for k in PROMPT_KEYS if k in value), None)
    if not isinstance(text, str) or not text.strip():
        raise ImportError_("prompt text missing or empty", path=path, pointer=pointer,
                           hint="give 'prompt' (or 'text') as a non-empty string")
    label = value.get("label")
    objects = value.get("objects")
    if label is None and isinstance(objects, dict) and len(objects) == 1:
        label = next(iter(objects))  # a prompt spec naming one object category
    labels = value.get("labels") or {}
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise ImportError_("label must be a non-empty string", path=path, pointer=f"{pointer}/label")
    if not isinstance(labels, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in labels.items()
    ):
        raise ImportError_("labels must map names to non-empty strings", path=path,
                           pointer=f"{pointer}/labels")
    source = value.get("prompt_source")
    if source is not None and not isinstance(source, str):
        raise ImportError_("prompt_source must be a string", path=path, pointer=f"{pointer}/prompt_source")
    return PromptEntry(pid, text.strip(), label, dict(labels), source)


def _refuse_duplicate_keys(raw: str, path: Path) -> None:
    """Raise :class:`ImportError_` naming both places when the top-level JSON object of ``raw``
    has a key twice (``json`` keeps the last silently)."""
    seen: dict[str, int] = {}
    top: list[tuple[str, object]] = []

    def outer(items: list[tuple[str, object]]) -> dict[str, object]:
        top[:] = items  # the last object closed is the top-level one
        return dict(items)

    decoder = json.JSONDecoder(object_pairs_hook=outer)
    decoder.decode(raw.strip())
    for n, (key, _) in enumerate(top, start=1):
        if key in seen:
            lines = _key_lines(raw, key)
            where = f"entries {seen[key]} and {n} of the object"
            if len(lines) >= 2 and lines[0] != lines[1]:
                where += f", lines {lines[0]} and {lines[1]}"
            raise ImportError_(f"duplicate prompt id {key!r} at {where}", path=path, pointer=f"/{key}",
                               hint="give every prompt its own id (JSON would keep only the last)")  # fmt: skip
        seen[key] = n


def _key_lines(raw: str, key: str) -> list[int]:
    """1-based lines where ``"key":`` is written in ``raw`` (in any JSON escaping of ``key``
    only as ``json.dumps`` writes it)."""
    import re

    token = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    return [raw.count("\n", 0, m.start()) + 1 for m in token.finditer(raw)]


def read_prompts(path: Path | str) -> dict[str, PromptEntry]:
    """Read a prompts file: prompt id -> :class:`PromptEntry`.

    JSON: an object ``{id: text}`` or ``{id: {"prompt"|"text": ..., "label"?, "labels"?,
    "objects"?, "prompt_source"?}}``, or a list of such objects with an ``"id"`` (the prompt
    pool's spec format). CSV (``.csv``): a header with ``id`` and ``prompt`` (or ``text``)
    columns, optional ``label`` and ``prompt_source``. Duplicate ids are an error.
    """
    path = Path(path)
    try:
        raw = bounded_input.read_text(path, encoding="utf-8-sig", what="prompts file")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportError_(f"cannot read the prompts file: {exc}", path=path) from None
    items: list[tuple[str, object, str]] = []
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(raw))
        fields = reader.fieldnames or []
        if "id" not in fields or not any(k in fields for k in PROMPT_KEYS):
            raise ImportError_("prompts CSV needs 'id' and 'prompt' columns", path=path,
                               hint=f"header found: {', '.join(fields) or '(none)'}")
        for n, row in enumerate(reader, start=2):
            value = {k: v for k, v in row.items() if k and v not in (None, "") and k != "id"}
            items.append(((row.get("id") or "").strip(), value, f"line {n}"))
    else:
        try:
            doc = bounded_input.loads(raw)
        except ValueError as exc:
            raise ImportError_(f"prompts file is not valid JSON: {exc}", path=path) from None
        if isinstance(doc, dict):  # "@..." keys are settings (e.g. "@conventions"), not prompts
            _refuse_duplicate_keys(raw, path)  # json keeps the last of a key given twice
            items = [(k, v, f"/{k}") for k, v in doc.items() if not k.startswith("@")]
        elif isinstance(doc, list):
            for i, v in enumerate(doc):
                pid = v.get("id") if isinstance(v, dict) else None
                items.append((pid if isinstance(pid, str) else "", v, f"/{i}"))
        else:
            raise ImportError_("prompts file must be a JSON object or list", path=path)
    out: dict[str, PromptEntry] = {}
    first: dict[str, str] = {}
    for pid, value, pointer in items:
        if not pid:
            raise ImportError_("prompt without an id", path=path, pointer=pointer)
        if pid in out:
            raise ImportError_(f"duplicate prompt id {pid!r} (first at {first[pid]})", path=path,
                               pointer=pointer, hint="give every prompt its own id")  # fmt: skip
        first[pid] = pointer
        out[pid] = _entry(pid, value, path, pointer)
    if not out:
        raise ImportError_("prompts file lists no prompts", path=path)
    return out


COMPANION_SUFFIXES = (".bin", ".png", ".jpg", ".jpeg", ".webp", ".ktx2", ".mtl", ".tga", ".bmp")


def scan_generators(root: Path | str) -> tuple[list[tuple[str, Path]], list[tuple[Path, str]]]:
    """(generator, scene file) for every importable file one level below ``root``, sorted, and
    (file, reason) for every file skipped. Raises ImportError_ when ``root`` is no folder."""
    from harness.scenes.fileformats import detect_format

    root = Path(root)
    if not root.is_dir():
        raise ImportError_("generators folder not found", path=root,
                           hint="GENERATORS_DIR holds one folder per generator")
    found: list[tuple[str, Path]] = []
    skipped: list[tuple[Path, str]] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for file in sorted(folder.iterdir()):
            if file.name.startswith("."):
                continue
            if not file.is_file():
                skipped.append((file, "not a file"))
                continue
            if file.suffix.lower() in COMPANION_SUFFIXES:
                skipped.append((file, "a companion file (buffers, images, materials)"))
                continue
            if file.suffix.lower() not in SCENE_SUFFIXES:  # a scene extension is imported, or fails
                try:
                    detect_format(file)
                except ImportError_ as exc:
                    skipped.append((file, exc.what))
                    continue
            found.append((folder.name, file))
    return found, skipped


FILES_KEY = "files"


@dataclass(frozen=True)
class GeneratorConventions:
    """One generator's conventions: ``default`` for all its files, and per-file entries
    (``files``: prompt id or file name -> ``Conventions``, the generator's entry with the
    file's keys laid over it)."""

    default: object
    files: Mapping[str, object] = field(default_factory=dict)

    def for_file(self, file: Path) -> object:
        """The conventions of ``file`` (its name wins over its stem, the prompt id)."""
        return self.files.get(file.name, self.files.get(file.stem, self.default))

    def unused(self, files: list[Path]) -> list[str]:
        """The per-file keys that name none of ``files``."""
        names = {f.name for f in files} | {f.stem for f in files}
        return sorted(set(self.files) - names)


def _layered(base: dict, top: dict) -> dict:
    """``top`` over ``base``; a unit in ``top`` replaces a scale in ``base`` and vice versa."""
    out = {k: v for k, v in base.items() if k != FILES_KEY}
    if "unit" in top or "scale" in top:
        out.pop("unit", None)
        out.pop("scale", None)
    out.update(top)
    return out


def read_conventions(path: Path | str | None, prompts_path: Path | str | None = None) -> dict:
    """Conventions per generator: ``{generator: {"up", "front", "unit", "scale", "files":
    {prompt_id or file name: {"up", ...}}}}`` from the JSON file ``path`` and/or the
    ``"@conventions"`` object of a JSON prompts file (the conventions file wins, per
    generator). A ``files`` entry is laid over its generator's keys. Returns generator ->
    :class:`GeneratorConventions`."""
    from harness.scenes.importers.conventions import Conventions

    out: dict[str, GeneratorConventions] = {}
    for source, key in ((prompts_path, "@conventions"), (path, None)):
        if source is None or (key and Path(source).suffix.lower() == ".csv"):
            continue
        try:
            doc = bounded_input.read_json(source, encoding="utf-8-sig", what="conventions file")
        except (OSError, ValueError) as exc:
            raise ImportError_(f"cannot read the conventions: {exc}", path=source) from None
        table = doc.get(key) if key and isinstance(doc, dict) else (doc if not key else None)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise ImportError_("conventions must map generator names to objects", path=source,
                               pointer=f"/{key}" if key else "",
                               hint='e.g. {"triposr": {"up": "z"}, "sf3d": {"front": "-z"}}')
        for gen, raw in table.items():
            where = f"/{key}/{gen}" if key else f"/{gen}"
            files = raw.get(FILES_KEY, {}) if isinstance(raw, dict) else {}
            if not isinstance(files, dict):
                raise ImportError_("conventions 'files' must map prompt ids or file names to "
                                   "objects", path=source, pointer=f"{where}/{FILES_KEY}",
                                   hint='e.g. {"files": {"p3": {"up": "-x"}}}')
            base = {k: v for k, v in raw.items() if k != FILES_KEY} if isinstance(raw, dict) else raw
            default = Conventions.from_mapping(base, path=source, pointer=where)
            per_file = {}
            for name, entry in files.items():
                fwhere = f"{where}/{FILES_KEY}/{name}"
                if not isinstance(entry, dict):
                    Conventions.from_mapping(entry, path=source, pointer=fwhere)  # raises
                per_file[str(name)] = Conventions.from_mapping(
                    _layered(base or {}, entry), path=source, pointer=fwhere)
            out[gen] = GeneratorConventions(default, per_file)
    return out


def _conventions_of(entry: object, file: Path) -> object:
    """A generator's conventions for ``file``: a :class:`GeneratorConventions` picks the file's
    entry; a plain ``Conventions`` (or None) applies to every file."""
    return entry.for_file(file) if isinstance(entry, GeneratorConventions) else entry


@dataclass
class BatchResult:
    """What :func:`import_batch` wrote: scene files (absolute, under the stage); per
    generator, the prompt ids of the prompts file it has no file for; every skipped file with
    the reason; the generators whose folder yielded no scene (allowed with ``allow_missing``)."""

    scene_files: list[Path]
    missing: dict[str, list[str]]
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)


def import_batch(
    generators_dir: Path | str,
    prompts: Mapping[str, PromptEntry],
    out_root: Path | str,
    *,
    asset_root: Path | str | None = None,
    asset_map: Mapping[str, object] | None = None,
    conventions: Mapping[str, object] | None = None,
    allow_missing: bool = False,
) -> BatchResult:
    """Import every scene file under ``generators_dir`` into ``out_root`` (a staging folder:
    on error it holds partial output). ``conventions``: generator -> ``Conventions`` or
    :class:`GeneratorConventions` (per-file entries) for its object files. Raises one ImportError_ listing every bad file, and every generator folder
    that yields no scene unless ``allow_missing``."""
    from harness.scenes.importers import write_scene_file
    from harness.scenes.importers.dispatch import import_file

    out_root = Path(out_root)
    generators_dir = Path(generators_dir)
    files, skipped = scan_generators(generators_dir)
    folders = sorted(p.name for p in generators_dir.iterdir()
                     if p.is_dir() and not p.name.startswith("."))
    problems: list[str] = []
    seen: dict[tuple[str, str], Path] = {}
    for generator, file in files:
        if file.stem not in prompts:
            problems.append(f"{file}: prompt id {file.stem!r} is not in the prompts file")
        elif (generator, file.stem) in seen:
            problems.append(f"{file}: a second file for prompt {file.stem!r} "
                            f"(also {seen[(generator, file.stem)].name})")
        seen.setdefault((generator, file.stem), file)
    written: list[Path] = []
    for generator, file in files:
        entry = prompts.get(file.stem)
        if entry is None or seen.get((generator, file.stem)) != file:
            continue
        meta = {"generator": generator, "prompt_id": entry.id, "prompt": entry.prompt,
                "prompt_source": entry.prompt_source, "scene_id": None}
        try:
            root = Path(asset_root) if asset_root is not None else file.parent
            scene = import_file(file, out_root=out_root, asset_root=root, asset_map=asset_map,
                                asset_dir=f"{generator}__{entry.id}",
                                label=entry.label or entry.prompt, labels=entry.labels,
                                conventions=_conventions_of((conventions or {}).get(generator), file),
                                **meta)
            written.append(write_scene_file(scene, out_root))
        except AuditError as exc:  # the message names the file (or an asset of it) already
            text = str(exc)
            problems.append(text if text.startswith(str(file)) else f"{file}: {text}")
        except OSError as exc:
            problems.append(f"{file}: cannot read: {exc.strerror or exc}")
    gens_with_files = {g for g, _ in files}
    empty = [g for g in folders if g not in gens_with_files]
    unknown = sorted(set(conventions or {}) - set(folders))
    if unknown:
        problems.append(f"conventions name generator folder(s) that do not exist: "
                        f"{', '.join(unknown)}")
    for gen, entry in sorted((conventions or {}).items()):
        if isinstance(entry, GeneratorConventions) and gen in folders:
            stale = entry.unused([f for g, f in files if g == gen])
            if stale:
                problems.append(f"conventions for {gen} name file(s) it does not have: "
                                f"{', '.join(stale)}")
    if empty and not allow_missing:
        for g in empty:
            why = "; ".join(f"{f.name}: {r}" for f, r in skipped if f.parent.name == g)
            problems.append(f"{generators_dir / g}: the generator folder yields no scene"
                            + (f" ({why})" if why else " (it is empty)"))
    if problems:
        listed = "\n  ".join(problems)
        raise ImportError_(
            f"{len(problems)} file(s) cannot be imported; nothing was written:\n  {listed}",
            path=generators_dir,
            hint="fix or remove these files (the file stem must be a prompt id of --prompts); "
            "--allow-missing accepts generator folders that yield no scene",
        )
    if not written and not problems:
        raise ImportError_("no scene files found", path=generators_dir,
                           hint="expected <generator>/<prompt_id>.<glb|gltf|obj|ply|stl|usd*|json>")
    missing = {
        g: [p for p in sorted(prompts) if (g, p) not in seen] for g in sorted(gens_with_files)
    }
    return BatchResult(written, {g: m for g, m in missing.items() if m}, skipped, empty)
