"""Build the bundled frozen scene set: assets, 6 generators × 50 prompts, manifest, prompt files.

Layout of a built scene-set root (``fixtures/scenes`` for the bundled set)::

    <root>/manifest.json                     sha256 manifest (harness.scenes.set_manifest)
    <root>/assets/<slug>/<a|b|c>.obj|.mtl    procedural meshes + assets/catalogue.json
    <root>/<generator>/<prompt_id>.json      one scene file per (generator, prompt)

and, in the prompts directory (``fixtures/prompts``), ``prompts.json`` (the sampled specs with
seed and pool hash) and ``paraphrases.json``. Every byte is a function of the pool file and
the code, so rebuilding reproduces the committed manifest exactly (``build-scenes --check``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.fileio import json_text
from harness.scenes.assets import write_assets
from harness.scenes.generators import GENERATORS, generate
from harness.scenes.layout import faithful_layout
from harness.scenes.model import Scene
from harness.scenes.prompts import (
    POOL_PATH,
    SAMPLE_SEED,
    SAMPLE_SIZE,
    load_pool,
    prompts_document,
    sample,
)
from harness.scenes.rewrites import paraphrase_document
from harness.scenes.set_manifest import MANIFEST_NAME, build_manifest, write_manifest

PROMPTS_FILE = "prompts.json"
PARAPHRASES_FILE = "paraphrases.json"
GENERATOR_SEED = 0


@dataclass(frozen=True)
class BuildResult:
    """Paths written by :func:`build_scene_set`."""

    root: Path
    manifest: Path
    scene_files: tuple[Path, ...]
    prompts_file: Path
    paraphrases_file: Path


def scene_bytes(scene: Scene) -> bytes:
    """A scene file's bytes: JSON in model key order, indent 1, UTF-8, trailing newline."""
    return json_text(scene.to_dict(), indent=1, sort_keys=False).encode("utf-8")


def _pretty(doc: object) -> bytes:
    return json_text(doc, indent=1, sort_keys=False).encode("utf-8")


def build_scene_set(
    root: str | Path,
    prompts_dir: str | Path,
    *,
    pool: str | Path = POOL_PATH,
    n: int = SAMPLE_SIZE,
    seed: int = SAMPLE_SEED,
    generator_seed: int = GENERATOR_SEED,
) -> BuildResult:
    """Write the scene set under ``root`` and the prompt files under ``prompts_dir``.

    Existing ``*.json`` files in ``<root>/<generator>/`` folders are removed first so that no
    stale scene outlives a rebuild (the manifest's frozen-scene rule would reject it).
    """
    root, prompts_dir = Path(root), Path(prompts_dir)
    root.mkdir(parents=True, exist_ok=True)
    prompts_dir.mkdir(parents=True, exist_ok=True)
    specs = sample(load_pool(pool), n, seed)
    write_assets(root)
    for gen in GENERATORS:
        folder = root / gen
        if folder.is_dir():
            for old in folder.glob("*.json"):
                old.unlink()
        folder.mkdir(exist_ok=True)
    written = []
    for spec in specs:
        layout = faithful_layout(spec)
        for gen in GENERATORS:
            scene = generate(spec, gen, generator_seed, layout=layout)
            path = root / gen / f"{spec.id}.json"
            path.write_bytes(scene_bytes(scene))
            written.append(path)
    manifest = write_manifest(root, build_manifest(root, written))
    prompts_file = prompts_dir / PROMPTS_FILE
    prompts_file.write_bytes(_pretty(prompts_document(pool, n, seed)))
    paraphrases_file = prompts_dir / PARAPHRASES_FILE
    paraphrases_file.write_bytes(_pretty(paraphrase_document(specs)))
    return BuildResult(root, manifest, tuple(written), prompts_file, paraphrases_file)


def compare_builds(built: BuildResult, root: str | Path, prompts_dir: str | Path) -> list[str]:
    """Names of the reference files (manifest, prompts, paraphrases) whose bytes differ from
    the fresh build (missing files count as different)."""
    pairs = [
        (built.manifest, Path(root) / MANIFEST_NAME),
        (built.prompts_file, Path(prompts_dir) / PROMPTS_FILE),
        (built.paraphrases_file, Path(prompts_dir) / PARAPHRASES_FILE),
    ]
    diffs = []
    for fresh, committed in pairs:
        if not committed.is_file() or committed.read_bytes() != fresh.read_bytes():
            diffs.append(str(committed))
    return diffs

