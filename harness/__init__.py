"""t3d-audit: audit text-to-3D evaluators for configuration fragility.

Heavy dependencies (bpy, torch, open_clip, transformers) are imported only inside the
adapters that need them, so importing this package, collecting tests and ``--help`` stay fast.
"""

__version__ = "0.1.0"

_API = ("score", "audit", "compare", "agreement")


def __getattr__(name: str):  # the Python API (harness.api), imported on first use
    if name in _API:
        from harness import api

        return getattr(api, name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
