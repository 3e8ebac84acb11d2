"""The world that lights a scene: one of Blender's bundled studio-light HDRIs as the environment
at a fixed strength, and the search's light settings on it (strength, rotation about z, blackbody
colour temperature).

At the defaults (strength 1, rotation 0, 6500 K) the environment colour goes straight into the
background at the study's strength; the rotation and tint nodes are linked in only while a
setting is off its default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from harness.protocol.configurations import NEUTRAL_TEMPERATURE_K, RenderConfig
from harness.render import bpyaccess, settings
from harness.render.bpyaccess import assign
from harness.render.failures import RenderFailed
from harness.scenes.model import Scene
from harness.vocab.factors import LIGHTING_MAPS


@dataclass
class WorldNodes:
    """The world's node tree and the nodes the search's light settings use: linked
    into the tree only while a setting is off its default, so a default render's world is the
    study's (environment colour straight into the background)."""

    tree: object
    env: object
    background: object
    mapping: object  # environment rotation about z: texture coordinate -> mapping -> env vector
    coords: object
    blackbody: object  # colour temperature tint: env colour x blackbody colour
    tint: object


class StudioLights:
    """The lighting maps as Blender images, each loaded once per process."""

    def __init__(self) -> None:
        self._images: dict[str, object] = {}

    def image(self, level: str, scene: Scene, cfg: RenderConfig) -> object:
        """The image of lighting level ``level`` (``settings.LIGHTING_FILES``); a failure
        names ``scene`` and ``cfg``."""
        if level not in settings.LIGHTING_FILES:
            raise RenderFailed(
                f"unknown lighting level {level!r}",
                scene_id=scene.id,
                cfg=cfg,
                hint=f"use one of {', '.join(LIGHTING_MAPS)}",
            )
        if level not in self._images:
            bpy = bpyaccess.load()
            path = (
                Path(bpy.utils.system_resource("DATAFILES"))
                / "studiolights"
                / "world"
                / settings.LIGHTING_FILES[level]
            )
            if not path.is_file():
                raise RenderFailed(
                    f"Blender's studio light {path} is missing", scene_id=scene.id, cfg=cfg
                )
            self._images[level] = bpy.data.images.load(str(path), check_existing=True)
        return self._images[level]


def make_world(bscene: object, name: str) -> WorldNodes:
    """A new world ``<name>:world`` for ``bscene``: environment texture into the background at
    ``settings.WORLD_STRENGTH``, the light-setting nodes made but not linked, a manual
    importance map of ``settings.WORLD_MAP_RESOLUTION``."""
    bpy = bpyaccess.load()
    world = bpy.data.worlds.new(f"{name}:world")
    tree = world.node_tree
    if tree is None:
        world.use_nodes = True
        tree = world.node_tree
    tree.nodes.clear()
    env = tree.nodes.new("ShaderNodeTexEnvironment")
    bg = tree.nodes.new("ShaderNodeBackground")
    out = tree.nodes.new("ShaderNodeOutputWorld")
    bg.inputs["Strength"].default_value = settings.WORLD_STRENGTH
    tree.links.new(env.outputs["Color"], bg.inputs["Color"])
    tree.links.new(bg.outputs["Background"], out.inputs["Surface"])
    coords = tree.nodes.new("ShaderNodeTexCoord")
    mapping = tree.nodes.new("ShaderNodeMapping")
    blackbody = tree.nodes.new("ShaderNodeBlackbody")
    tint = tree.nodes.new("ShaderNodeMix")
    tint.data_type = "RGBA"
    tint.blend_type = "MULTIPLY"
    _socket(tint.inputs, "Factor", "VALUE").default_value = 1.0
    world.cycles.sampling_method = "MANUAL"  # the automatic map costs seconds per change
    world.cycles.sample_map_resolution = settings.WORLD_MAP_RESOLUTION
    bscene.world = world
    return WorldNodes(tree, env, bg, mapping, coords, blackbody, tint)


def light(world: WorldNodes, cfg: RenderConfig) -> None:
    """The search's light settings on the world: strength, rotation about z, blackbody tint."""
    tree, env, bg = world.tree, world.env, world.background
    assign(bg.inputs["Strength"], "default_value", settings.WORLD_STRENGTH * float(cfg.light_strength))
    turn = float(cfg.light_rotation_deg) % 360.0
    if turn:
        _link(tree, world.coords.outputs["Generated"], world.mapping.inputs["Vector"])
        _link(tree, world.mapping.outputs["Vector"], env.inputs["Vector"])
        rotation = world.mapping.inputs["Rotation"]
        wanted = (0.0, 0.0, math.radians(turn))
        if tuple(rotation.default_value) != wanted:
            rotation.default_value = wanted
    elif env.inputs["Vector"].links:
        _unlink(tree, env.inputs["Vector"])
    colour_in = bg.inputs["Color"]
    if float(cfg.colour_temperature_k) != NEUTRAL_TEMPERATURE_K:
        assign(world.blackbody.inputs["Temperature"], "default_value", float(cfg.colour_temperature_k))
        _link(tree, env.outputs["Color"], _socket(world.tint.inputs, "A", "RGBA"))
        _link(tree, world.blackbody.outputs["Color"], _socket(world.tint.inputs, "B", "RGBA"))
        _link(tree, _socket(world.tint.outputs, "Result", "RGBA"), colour_in)
    else:
        _link(tree, env.outputs["Color"], colour_in)


def _socket(sockets: object, name: str, kind: str) -> object:
    """The socket ``name`` of type ``kind`` (a Mix node has A/B sockets of every data type)."""
    return next(s for s in sockets if s.name == name and s.type == kind)


def _link(tree: object, from_socket: object, to_socket: object) -> None:
    """Link ``from_socket`` into ``to_socket`` unless already (a relink re-syncs Cycles)."""
    if not any(link.from_socket == from_socket for link in to_socket.links):
        tree.links.new(from_socket, to_socket)


def _unlink(tree: object, to_socket: object) -> None:
    for link in list(to_socket.links):
        tree.links.remove(link)
