"""The report's provenance manifest: source revision, package versions, inputs and outputs by sha256.

``manifest.json`` binds a report to what produced it. It holds no timestamps, host names,
absolute paths or environment values, so equal inputs give an equal manifest and nothing
secret can leak through it. ``verify_manifest`` re-hashes every output.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.errors import CardError
from harness.hashing import sha256_file
from harness.paths import REPO_ROOT

MANIFEST_SCHEMA = "t3d-audit-manifest/1"
MANIFEST_NAME = "manifest.json"
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


def source_revision(repo: Path = REPO_ROOT) -> dict[str, Any]:
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
    options: Mapping[str, Any],
    inputs: list[dict[str, str]],
    report_dir: Path,
    source: Mapping[str, Any] | None = None,
    packages: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The manifest of a finished report directory (outputs hashed as they are on disk)."""
    return {
        "schema": MANIFEST_SCHEMA,
        "run_id": run_id,
        "source": dict(source if source is not None else source_revision()),
        "packages": dict(packages if packages is not None else package_versions()),
        "options": dict(options),
        "inputs": sorted(inputs, key=lambda e: (e["role"], e["path"])),
        "outputs": output_entries(report_dir),
    }


def write_manifest(manifest: Mapping[str, Any], report_dir: Path) -> Path:
    path = Path(report_dir) / MANIFEST_NAME
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_manifest(report_dir: Path) -> dict[str, Any]:
    path = Path(report_dir) / MANIFEST_NAME
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CardError("no manifest.json", where=report_dir, hint="is this a report directory?") from exc
    except ValueError as exc:
        raise CardError(f"manifest.json is not JSON: {exc}", where=path) from exc
    if not isinstance(doc, dict) or doc.get("schema") != MANIFEST_SCHEMA:
        raise CardError(
            f"manifest schema is {doc.get('schema') if isinstance(doc, dict) else None!r}",
            where=f"{path}#/schema",
            hint=f"expected {MANIFEST_SCHEMA}",
        )
    return doc


def verify_outputs(report_dir: Path, manifest: Mapping[str, Any]) -> list[str]:
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
