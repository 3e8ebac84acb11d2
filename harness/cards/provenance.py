"""The report's provenance manifest: source revision, package versions, inputs and outputs by sha256.

``manifest.json`` binds a report to what produced it. It holds no timestamps, host names,
absolute paths or environment values, so nothing secret can leak through it. One key
describes the machine: ``render_host`` (CPU model, Blender build, Cycles device and kernel,
see :func:`harness.render.host.render_host`), because Cycles output differs slightly across
CPUs and so can the numbers. Everything else is equal for equal inputs; ``render_host`` is
never hashed, never part of a run id, and ``t3d-audit validate`` ignores it.
:func:`verify_outputs` re-hashes every output; ``fixtures/schemas/report-manifest-v1.json``
is the schema and docs/formats.md describes every field.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import NoReturn

from harness.core.bounded_input import read_json
from harness.core.errors import CardError
from harness.core.fileio import write_json_atomic
from harness.core.hashing import sha256_file
from harness.core.paths import REPO_ROOT, SCHEMAS

MANIFEST_SCHEMA = "t3d-audit-manifest/1"
MANIFEST_NAME = "manifest.json"
SCHEMA_FILE = SCHEMAS / "report-manifest-v1.json"
MAX_SHAPE_PROBLEMS = 8
PACKAGES = (
    "t3d-audit",
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "jsonschema",
    "matplotlib",
    "pillow",
    "pytest",
    "pytest-xdist",
    "bpy",
    "torch",
    "torchvision",
    "open_clip_torch",
    "transformers",
    "safetensors",
)


def source_revision(repo: Path = REPO_ROOT) -> dict[str, object]:
    """``{"revision": <commit> | "dirty" | "unknown", "commit": <commit> | None}``.

    "dirty" means tracked files differ from the commit: the code that ran is not any commit.
    """
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=repo, capture_output=True, text=True, timeout=20, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"revision": "unknown", "commit": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    dirty = status is None or bool(status)
    return {"revision": "dirty" if dirty else commit, "commit": commit}


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str]:
    """Installed version of each distribution, ``"not installed"`` when absent."""
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return dict(sorted(out.items()))


def file_entry(path: Path, *, label: str, role: str) -> dict[str, str]:
    """One manifest entry: a portable ``label`` (never an absolute path), role and sha256."""
    return {"path": label, "role": role, "sha256": sha256_file(path)}


def portable_label(path: Path, bases: Mapping[str, Path]) -> str:
    """``<base name>:<relative path>`` for the first base containing ``path``, else the file name."""
    resolved = Path(path).resolve()
    for name, base in bases.items():
        try:
            return f"{name}:{resolved.relative_to(Path(base).resolve()).as_posix()}"
        except ValueError:
            continue
    return f"external:{resolved.name}"


def output_entries(report_dir: Path, *, exclude: Iterable[str] = (MANIFEST_NAME,)) -> list[dict[str, str]]:
    """Every file under ``report_dir`` (sorted POSIX relative paths) with its sha256."""
    skip = set(exclude)
    out = []
    for path in sorted(p for p in Path(report_dir).rglob("*") if p.is_file()):
        rel = path.relative_to(report_dir).as_posix()
        if rel not in skip:
            out.append({"path": rel, "sha256": sha256_file(path)})
    return out


def build_manifest(
    *,
    run_id: str,
    options: Mapping[str, object],
    inputs: list[dict[str, str]],
    report_dir: Path,
    source: Mapping[str, object] | None = None,
    packages: Mapping[str, str] | None = None,
    render_host: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The manifest of a finished report directory (outputs hashed as they are on disk).

    ``render_host``: facts about the machine that rendered (``None`` for a renderer that has
    none to give, e.g. a test rasteriser); stored as is, excluded from every comparison.
    """
    return {
        "schema": MANIFEST_SCHEMA,
        "run_id": run_id,
        "source": dict(source if source is not None else source_revision()),
        "packages": dict(packages if packages is not None else package_versions()),
        "options": dict(options),
        "inputs": sorted(inputs, key=lambda e: (e["role"], e["path"])),
        "outputs": output_entries(report_dir),
        "render_host": dict(render_host) if render_host is not None else None,
    }


def write_manifest(manifest: Mapping[str, object], report_dir: Path) -> Path:
    return write_json_atomic(Path(report_dir) / MANIFEST_NAME, manifest)


def _shape_errors(doc: object) -> list[tuple[str, str]]:
    """``(JSON pointer, message)`` for every shape problem of a parsed manifest."""
    import jsonschema

    if not isinstance(doc, dict):
        return [("/", f"a manifest is a JSON object, got {type(doc).__name__}")]
    if doc.get("schema") != MANIFEST_SCHEMA:  # another schema's fields mean nothing here
        return [("/schema", f"manifest schema is {doc.get('schema')!r}, expected {MANIFEST_SCHEMA}")]
    schema = read_json(SCHEMA_FILE)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(doc), key=lambda e: ([str(p) for p in e.absolute_path], e.message))
    return [("/" + "/".join(str(p) for p in e.absolute_path), e.message) for e in errors]


def manifest_problems(doc: object) -> list[str]:
    """Shape problems of a parsed manifest, one line each (``manifest.json#<pointer>: ...``),
    checked against ``fixtures/schemas/report-manifest-v1.json``; at most
    :data:`MAX_SHAPE_PROBLEMS` lines plus a count of the rest."""
    errors = _shape_errors(doc)
    lines = [f"{MANIFEST_NAME}#{pointer}: {message}" for pointer, message in errors[:MAX_SHAPE_PROBLEMS]]
    if len(errors) > MAX_SHAPE_PROBLEMS:
        lines.append(f"{MANIFEST_NAME}: {len(errors) - MAX_SHAPE_PROBLEMS} more shape problems")
    return lines


def load_manifest(report_dir: Path) -> dict[str, object]:
    """The parsed ``manifest.json`` of ``report_dir``, shape unchecked (see :func:`read_manifest`)."""
    path = Path(report_dir) / MANIFEST_NAME

    def no_constant(name: str) -> NoReturn:
        raise ValueError(f"{name} is not a JSON number")

    try:
        return read_json(path, parse_constant=no_constant)
    except FileNotFoundError as exc:
        raise CardError("no manifest.json", where=report_dir, hint="is this a report directory?") from exc
    except (OSError, ValueError) as exc:
        raise CardError(f"manifest.json is not JSON: {exc}", where=path) from exc


def read_manifest(report_dir: Path) -> dict[str, object]:
    """The parsed, shape-checked manifest; raises :class:`CardError` naming the first bad field."""
    doc = load_manifest(report_dir)
    errors = _shape_errors(doc)
    if errors:
        pointer, message = errors[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        raise CardError(
            message + more,
            where=f"{Path(report_dir) / MANIFEST_NAME}#{pointer}",
            hint="manifest.json is written by the audit run; rerun the audit to rewrite it",
        )
    return doc


def verify_outputs(report_dir: Path, manifest: Mapping[str, object]) -> list[str]:
    """Problems with the outputs: missing, changed or unlisted files (empty when all match)."""
    problems = []
    listed = {e["path"]: e["sha256"] for e in manifest.get("outputs", [])}
    on_disk = {e["path"]: e["sha256"] for e in output_entries(report_dir)}
    for rel, digest in sorted(listed.items()):
        if rel not in on_disk:
            problems.append(f"{rel}: listed in manifest.json but missing")
        elif on_disk[rel] != digest:
            problems.append(f"{rel}: sha256 {on_disk[rel][:12]}… differs from manifest {digest[:12]}…")
    for rel in sorted(set(on_disk) - set(listed)):
        problems.append(f"{rel}: not listed in manifest.json")
    return problems


def refuse_edited_outputs(report_dir: Path, manifest: Mapping[str, object], *, keep: Iterable[str]) -> None:
    """A :class:`CardError` when a file the manifest lists (those of ``keep``, the files about
    to be rewritten or listed, aside) is missing or differs from its recorded sha256: an
    edited report is never re-blessed by rewriting the manifest. Files it does not list are
    left to ``t3d-audit validate``, which reports them."""
    outputs = manifest.get("outputs")
    if not isinstance(outputs, list) or not all(
        isinstance(e, dict) and isinstance(e.get("path"), str) and isinstance(e.get("sha256"), str) for e in outputs
    ):
        raise CardError("manifest.json has no valid outputs list, so the report cannot be verified",
                        where=report_dir, hint="run `t3d-audit validate` on it")  # fmt: skip
    kept = tuple(f"{name}:" for name in keep)
    problems = [p for p in verify_outputs(report_dir, manifest)
                if not p.startswith(kept) and not p.endswith("not listed in manifest.json")]  # fmt: skip
    if problems:
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise CardError(f"the report was changed after it was written ({problems[0]}{more}), so it "
                        "is not rebuilt or re-listed", where=report_dir,
                        hint="rerun the audit, or see every change with `t3d-audit validate`")  # fmt: skip
