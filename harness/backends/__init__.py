"""Where the work runs: ``local`` (this machine's process pool, the default) or ``ray`` (a Ray
cluster: one Blender state per render actor, one model per scoring actor).

Both backends publish into the same content-addressed caches (a local directory or a shared
store, :mod:`harness.store`), so results are identical whichever ran them. Ray is imported
only when the ``ray`` backend is used (``pip install 't3d-audit[distributed]'``).
"""

from __future__ import annotations

BACKENDS = ("local", "ray")
