"""Frozen scenes: the model, validated loading, the scene-set manifest and importers."""

from harness.scenes.load import load_scene, parse_scene, validate_scene
from harness.scenes.model import (
    SCENE_SCHEMA,
    AssetCandidate,
    Room,
    Scene,
    SceneObject,
    scene_identity,
)
from harness.scenes.sceneset import SceneSet
from harness.scenes.set_manifest import (
    build_manifest,
    read_manifest,
    verify_manifest,
    write_manifest,
)

__all__ = [
    "SCENE_SCHEMA",
    "AssetCandidate",
    "Room",
    "Scene",
    "SceneObject",
    "SceneSet",
    "build_manifest",
    "load_scene",
    "parse_scene",
    "read_manifest",
    "scene_identity",
    "validate_scene",
    "verify_manifest",
    "write_manifest",
]
