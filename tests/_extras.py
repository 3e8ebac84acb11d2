"""The optional extras the tests need: a test that needs one skips, with a reason naming the
extra to install, where it is absent.

``T3D_AUDIT_REQUIRE_DISTRIBUTED=1`` (set by ``.ci/run``, whose tox environment installs every
extra) turns a missing ``distributed`` or ``slurm`` package into a failure instead
(``tests/_distributed.py``).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

#: top-level module → the pyproject extra that installs it
EXTRA_OF = {
    "bpy": "render",
    "torch": "models",
    "torchvision": "models",
    "open_clip": "models",
    "transformers": "models",
    "safetensors": "models",
    "httpx": "judge",
    "ray": "distributed",
    "fsspec": "distributed",
    "s3fs": "distributed",
    "submitit": "slurm",
    "moto": "dev",
    "playwright": "dev",
}
REQUIRE_DISTRIBUTED_ENV = "T3D_AUDIT_REQUIRE_DISTRIBUTED"
#: what the distributed tests need (moto, of the dev extra, runs their S3 server; submitit, of
#: the slurm extra, the Slurm backend's local and debug executors)
DISTRIBUTED = frozenset({"ray", "fsspec", "s3fs", "moto", "submitit"})


def reason(module: str) -> str:
    extra = EXTRA_OF[module.split(".")[0]]
    return f"{module} is not installed: it comes with the {extra} extra (pip install -e '.[{extra}]')"


def need(module: str) -> ModuleType:
    """Import ``module``; without it skip the test, naming its extra (a missing ``distributed``
    package fails instead under ``T3D_AUDIT_REQUIRE_DISTRIBUTED``)."""
    if module.split(".")[0] in DISTRIBUTED and os.environ.get(REQUIRE_DISTRIBUTED_ENV):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=reason(module))


def missing(module: str) -> bool:
    """Whether ``module`` is not installed (looked up, not imported)."""
    import importlib.util

    return importlib.util.find_spec(module) is None


def needs(module: str) -> pytest.MarkDecorator:
    """A skip mark for a test (or a parameter) that needs ``module``, naming its extra."""
    return pytest.mark.skipif(missing(module), reason=reason(module))
