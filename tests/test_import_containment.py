"""Heavy libraries stay in one package each, and evaluators never reach the renderer.

Static analysis of every module under ``harness/`` (imports inside functions count):

* ``bpy`` is imported only under ``harness/render/``;
* ``torch``, ``transformers`` and ``open_clip`` only under ``harness/evaluators/``;
* nothing under ``harness/evaluators/`` imports ``harness.render`` or ``harness.training``
  (training renders its data and calls into the evaluators, never the other way).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.core.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "harness"
TORCH_FAMILY = ("torch", "transformers", "open_clip")


def imported_modules(path: Path, package: str) -> set[str]:
    """Absolute dotted names a module imports anywhere in its body (``from a import b`` gives
    ``a`` and ``a.b``; relative imports resolved against ``package``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def scan(root: Path) -> dict[str, set[str]]:
    """Repository-relative path → imported names, for every ``.py`` file under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        package = ".".join(rel.with_suffix("").parts)
        if path.name != "__init__.py":
            package = package.rpartition(".")[0]
        out[rel.as_posix()] = imported_modules(path, package)
    return out


def imports_any(names: set[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == r or n.startswith(r + ".") for r in roots))


def violations(modules: dict[str, set[str]]) -> dict[str, list[str]]:
    """Rule name → ``"path: imported names"`` for each module breaking it."""
    found: dict[str, list[str]] = {"bpy": [], "torch": [], "evaluators": []}
    for path, names in modules.items():
        if not path.startswith("harness/render/") and (hits := imports_any(names, ("bpy",))):
            found["bpy"].append(f"{path}: {', '.join(hits)}")
        if not path.startswith("harness/evaluators/") and (
            hits := imports_any(names, TORCH_FAMILY)
        ):
            found["torch"].append(f"{path}: {', '.join(hits)}")
        if path.startswith("harness/evaluators/") and (
            hits := imports_any(names, ("harness.render", "harness.training"))
        ):
            found["evaluators"].append(f"{path}: {', '.join(hits)}")
    return found


@pytest.fixture(scope="module")
def harness_imports() -> dict[str, set[str]]:
    return scan(PACKAGE)


def test_bpy_only_under_render(harness_imports):
    assert violations(harness_imports)["bpy"] == []


def test_torch_family_only_under_evaluators(harness_imports):
    assert violations(harness_imports)["torch"] == []


def test_evaluators_never_import_the_renderer_or_training(harness_imports):
    assert violations(harness_imports)["evaluators"] == []


def test_the_scan_sees_every_form_of_import(tmp_path):
    """Each rule fires on a planted module: lazy, dotted, ``from`` and relative imports."""
    root = tmp_path / "harness"
    files = {
        "commands/bad.py": "def f():\n    import bpy.ops\n",
        "report/tables.py": "from open_clip.loss import ClipLoss\n",
        "training/fit.py": "import torch as t\n",
        "render/blender.py": "import bpy\nimport torch\n",
        "evaluators/ok.py": "import torch\nfrom transformers import CLIPModel\n",
        "evaluators/a.py": "def g():\n    from harness import render\n",
        "evaluators/reference/b.py": "from ...render.composite import composite\n",
        "evaluators/c.py": "from harness.training.data import TrainingSet\n",
        "evaluators/d.py": "from harness.rendering_notes import x\n",  # not harness.render
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    found = violations(scan(root))
    assert found["bpy"] == ["harness/commands/bad.py: bpy.ops"]
    assert found["torch"] == [
        "harness/render/blender.py: torch",
        "harness/report/tables.py: open_clip.loss, open_clip.loss.ClipLoss",
        "harness/training/fit.py: torch",
    ]
    assert found["evaluators"] == [
        "harness/evaluators/a.py: harness.render",
        "harness/evaluators/c.py: harness.training.data, harness.training.data.TrainingSet",
        "harness/evaluators/reference/b.py: harness.render.composite, "
        "harness.render.composite.composite",
    ]
