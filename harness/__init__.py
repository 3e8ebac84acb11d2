"""t3d-audit: audit text-to-3D evaluators for configuration fragility.

Heavy dependencies (bpy, torch, open_clip, transformers) are imported only inside the
adapters that need them, so importing this package, collecting tests and ``--help`` stay fast.
"""

__version__ = "0.1.0"
