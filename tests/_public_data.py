"""Where the public test data lies (the glTF samples and real generator outputs beside the
checkout); tests that read it skip when it is absent."""

from __future__ import annotations

from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
# the public test data folder beside the checkout (or beside the folder of a git worktree)
SAMPLES = next(
    (
        p
        for p in (
            _ROOT.parent / "shared/data/gltf-samples",
            _ROOT.parent.parent / "shared/data/gltf-samples",
        )
        if p.is_dir()
    ),
    _ROOT.parent / "shared/data/gltf-samples",
)
GENERATOR_OUTPUTS = SAMPLES.parent / "generator-outputs"
