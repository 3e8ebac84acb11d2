"""The pipeline's own Blender materials: plain diffuse colours (floor, walls, the grey default
and untextured surfaces), the material of a mesh that brings none, and the normal-pass
emission. Each is made once per process and kept (fake user) across scenes."""

from __future__ import annotations

from harness.render import bpyaccess, settings


class Materials:
    """This process's materials by name, made on first use."""

    def __init__(self) -> None:
        self._made: dict[str, object] = {}

    def plain(self, name: str, rgb: tuple[float, float, float]) -> object:
        """A diffuse material ``t3d:<name>`` of linear colour ``rgb`` (each 0..1), roughness 0.8."""
        if name not in self._made:
            bpy = bpyaccess.load()
            mat = bpy.data.materials.new(f"t3d:{name}")
            mat.use_fake_user = True
            mat.diffuse_color = (*rgb, 1.0)
            tree = mat.node_tree
            if tree is None:  # Blender < 5 needs use_nodes
                mat.use_nodes = True
                tree = mat.node_tree
            bsdf = next(n for n in tree.nodes if n.bl_idname == "ShaderNodeBsdfPrincipled")
            bsdf.inputs["Base Color"].default_value = (*rgb, 1.0)
            bsdf.inputs["Roughness"].default_value = 0.8
            self._made[name] = mat
        return self._made[name]

    def for_mesh(self, mesh: object) -> object:
        """The material of a mesh that brings none: its colour attribute when it has one
        (OBJ/PLY vertex colours, ``meshformats.colour_material``), else the grey default."""
        from harness.render import meshformats

        attrs = mesh.color_attributes
        if len(attrs):
            name = (attrs.active_color or attrs[0]).name
            return meshformats.colour_material(bpyaccess.load(), name)
        return self.plain("default_object", settings.DEFAULT_OBJECT_RGB)

    def normal(self, frame: str = "blender") -> object:
        """Emission of the world-space shading normal mapped to colour, ``0.5 * n + 0.5``, the
        normal written in the axes of source frame ``frame`` (``source_cameras.FRAMES``)."""
        from harness.protocol.source_cameras import FRAMES

        name = "normal" if frame == "blender" else f"normal:{frame}"
        if name not in self._made:
            bpy = bpyaccess.load()
            mat = bpy.data.materials.new(f"t3d:{name}")
            mat.use_fake_user = True
            if mat.node_tree is None:  # Blender < 5 needs use_nodes
                mat.use_nodes = True
            nodes, links = mat.node_tree.nodes, mat.node_tree.links
            nodes.clear()
            geometry = nodes.new("ShaderNodeNewGeometry")
            remap = nodes.new("ShaderNodeVectorMath")
            remap.operation = "MULTIPLY_ADD"
            remap.inputs[1].default_value = (0.5, 0.5, 0.5)
            remap.inputs[2].default_value = (0.5, 0.5, 0.5)
            emission = nodes.new("ShaderNodeEmission")
            out = nodes.new("ShaderNodeOutputMaterial")
            normal = geometry.outputs["Normal"]
            if frame != "blender":  # source axis i is column i of the frame rotation: n_i = column_i · n
                combine = nodes.new("ShaderNodeCombineXYZ")
                for axis, column in enumerate(FRAMES[frame].T):
                    dot = nodes.new("ShaderNodeVectorMath")
                    dot.operation = "DOT_PRODUCT"
                    dot.inputs[1].default_value = tuple(float(c) for c in column)
                    links.new(normal, dot.inputs[0])
                    links.new(dot.outputs["Value"], combine.inputs[axis])
                normal = combine.outputs["Vector"]
            links.new(normal, remap.inputs[0])
            links.new(remap.outputs["Vector"], emission.inputs["Color"])
            links.new(emission.outputs["Emission"], out.inputs["Surface"])
            self._made[name] = mat
        return self._made[name]
