"""Scene inputs of the render commands: scene files, scene-set roots, profile selections, probes."""

from __future__ import annotations

from pathlib import Path

from harness.core.errors import SceneError
from harness.core.paths import BUNDLED_SCENES
from harness.protocol.profiles import Profile
from harness.scenes.model import Scene

PROBE_SEED = 0  # the seed the audit session applies probes with


def find_root(scene_file: Path) -> Path:
    """The scene-set root of ``scene_file``: the nearest ancestor holding ``manifest.json``,
    else the file's own directory."""
    scene_file = Path(scene_file).resolve()
    for parent in scene_file.parents:
        if (parent / "manifest.json").is_file():
            return parent
    return scene_file.parent


def load_scene_file(scene_file: Path, root: Path | None = None) -> tuple[Scene, Path]:
    """Load and validate one scene file; returns (scene, scene-set root)."""
    from harness.scenes.load import load_scene

    root = Path(root).resolve() if root is not None else find_root(scene_file)
    return load_scene(scene_file, root), root


def load_profile_scenes(profile: Profile, root: Path | None = None) -> object:
    """The scene set under ``root`` (default: the bundled set) selected for ``profile``."""
    from harness.scenes.sceneset import SceneSet

    sset = SceneSet.load(Path(root) if root is not None else BUNDLED_SCENES)
    return sset.select_for_profile(profile.prompts, profile.generators)


def apply_probe(scene: Scene, probe: str) -> Scene:
    """The probe-edited scene, as the audit session builds it (seed ``PROBE_SEED``)."""
    try:
        from harness.scenes import probe_edits
    except ImportError as exc:
        raise SceneError(
            f"content probes are not available: {exc}",
            hint="harness.scenes.probe_edits is needed to render probe scenes",
        ) from exc
    return probe_edits.apply(scene, probe, seed=PROBE_SEED)
