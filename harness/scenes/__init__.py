"""Frozen scenes: the model, validated loading, the scene-set manifest and importers."""

from harness.scenes.model import (
    SCENE_SCHEMA,
    AssetCandidate,
    Room,
    Scene,
    SceneObject,
    scene_identity,
)

__all__ = ["SCENE_SCHEMA", "AssetCandidate", "Room", "Scene", "SceneObject", "scene_identity"]
