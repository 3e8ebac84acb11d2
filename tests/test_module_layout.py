"""Module layout rules: one job per module name, imports that flow one way, heavy imports
contained. Every import counts, lazy ones inside functions and ``TYPE_CHECKING`` ones too."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "harness"


def _module(path: Path) -> str:
    parts = path.relative_to(HARNESS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache  # every rule reads the same files: parse each once
def _imports(path: Path) -> frozenset[str]:
    """Every module ``path`` imports anywhere in its body (``from a import b`` gives a and a.b)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(found)


MODULES = {_module(p): p for p in sorted(HARNESS.rglob("*.py"))}


def _importers_of(target: str) -> list[str]:
    return sorted(m for m, p in MODULES.items() if any(
        i == target or i.startswith(target + ".") for i in _imports(p)))


#: The modules users import or run by name; everything else lives in a package of its stage.
PUBLIC_DOORS = {"harness", "harness.__main__", "harness.api", "harness.audit_api", "harness.cli",
                "harness.testing"}

#: The stages in data-flow order: a package imports only packages before it (or itself).
STAGES = ("harness", "core", "store", "captions", "vocab", "protocol", "scenes", "render", "evaluators",
          "stats", "training", "measure", "checks", "human", "search", "cards", "report", "run",
          "release", "peers", "claims", "plugin", "backends", "api", "audit_api", "commands", "cli", "testing",
          "__main__")

#: Imports against the flow, each with its reason; an allowance no longer used fails too.
BACK_EDGES = {
    # an importer measures a glTF's bounds and reads its scene graph in a Blender child process
    ("harness.scenes.importers.gltf", "harness.render.gltfmeasure"),
    ("harness.scenes.importers.meshobject", "harness.render.gltfmeasure"),
    ("harness.scenes.importers.scenestate", "harness.render.gltfmeasure"),
    ("harness.scenes.importers.gltf_io", "harness.render.gltfscene"),
    # `t3d-audit audit` warms the cache through the CLI's own entry: the same exit codes
    ("harness.commands.audit", "harness.cli"),
    # the human-agreement estimator group reads the human statistics' draws
    ("harness.stats.estimators", "harness.human.protocol_dependence"),
}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "harness"


def test_the_top_level_holds_only_the_public_doors():
    top = {m for m, p in MODULES.items() if p.parent == HARNESS and p.name != "__init__.py"} | {"harness"}
    assert top == PUBLIC_DOORS


def _prefix_families(modules: list[Path]) -> dict[str, list[str]]:
    """``{"folder/word": [file names]}`` for 3+ module files in one folder whose names share the
    first ``_``-separated word (leading underscores ignored, ``__init__.py`` not counted)."""
    families: dict[str, list[str]] = {}
    for path in modules:
        if path.name != "__init__.py":
            word = path.stem.lstrip("_").split("_")[0]
            families.setdefault(f"{path.parent.name}/{word}", []).append(path.name)
    return {k: sorted(v) for k, v in families.items() if len(v) >= 3}


def test_no_prefix_family_of_three_modules_in_one_package():
    """``render_cache.py``, ``render_plan.py``, ``render_store.py`` in one folder is a package
    waiting to be named: make it a subpackage or give each module a name of its own."""
    found = {}
    for folder in {p.parent for p in MODULES.values()}:
        found.update(_prefix_families([p for p in MODULES.values() if p.parent == folder]))
    assert found == {}


def test_the_prefix_family_rule_finds_a_family():
    names = ["render_cache.py", "render_plan.py", "_render_store.py", "renderer.py", "__init__.py"]
    family = _prefix_families([HARNESS / "render" / n for n in names])
    assert family == {"render/render": ["_render_store.py", "render_cache.py", "render_plan.py"]}
    assert _prefix_families([HARNESS / "render" / n for n in names[:2] + names[3:]]) == {}


def test_every_package_is_a_stage():
    packages = {p.name for p in HARNESS.iterdir() if (p / "__init__.py").is_file()}
    assert packages <= set(STAGES), sorted(packages - set(STAGES))


def test_packages_import_along_the_data_flow():
    """The tree reads as the data flow: each package imports only the stages before it."""
    rank = {stage: i for i, stage in enumerate(STAGES)}
    against = {(a, b) for a, targets in _edges().items() for b in targets
               if rank[_stage(b)] > rank[_stage(a)]}
    assert against == BACK_EDGES


def test_cards_never_import_the_session():
    sessions = [m for m in MODULES if m.startswith("harness.run.")]
    assert "harness.run.session" in sessions
    assert [m for s in sessions for m in _importers_of(s) if m.startswith("harness.cards")] == []


def test_the_report_and_the_release_gate_never_import_the_session():
    """They take a typed run result (``harness.report.run_result.RunResult``,
    ``harness.run.outputs.GatedRun``), never the session; the session forwards nothing."""
    takers = [m for m in MODULES if m.startswith("harness.report") or m == "harness.release.gate"]
    assert [m for m in _importers_of("harness.run.session") if m in takers] == []
    from harness.run.session import AuditSession

    own = {n for n, v in vars(AuditSession).items() if not n.startswith("__")}
    assert own == {"gate_thresholds", "presents_probes", "run_id", "worker_facts"}, own


def _private_uses(path: Path) -> list[str]:
    """``obj._name`` on anything but ``self``/``cls``, and ``from harness.x import _name``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness"):
            found += [f"{path.name}:{node.lineno}: {a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return found


@pytest.mark.parametrize("prefix", ["harness.report", "harness.run", "harness.cards", "harness.release",
                                    "harness.plugin", "harness.commands.materialize"])
def test_no_module_uses_another_modules_private_members(prefix):
    hits = [h for m, p in MODULES.items() if m == prefix or m.startswith(prefix + ".") for h in _private_uses(p)]
    assert hits == []


#: The measurement side: what turns scenes into renders, images and scores.
MEASUREMENT = ("harness.measure.images", "harness.measure.plan", "harness.measure.thumbs", "harness.render",
               "harness.evaluators", "harness.scenes", "harness.scenes.probe_edits", "harness.run.rescore",
               "harness.run.inputs", "harness.run.record_cache", "harness.training", "harness.backends")


def test_the_report_only_formats():
    """``harness/report/`` gets what it writes (records, summaries, cards, thumbnail bytes)
    handed in; it never reaches back into the measurement side or the renderer."""
    found = {m: sorted(i for i in _imports(p) if i.startswith(MEASUREMENT))
             for m, p in MODULES.items() if m.startswith("harness.report")}
    assert {m: hits for m, hits in found.items() if hits} == {}


def test_the_release_comparison_stays_pure():
    """The release gate's statistics read and write nothing: they import only the protocol,
    errors, the number reader, the vocabulary and the pure statistics; its package
    ``__init__`` imports nothing."""
    allowed = {"harness.core.errors", "harness.protocol.configurations", "harness.core.numbers"}
    targets = _edges()["harness.release.comparison"]
    pure = ("harness.stats", "harness.vocab")
    assert {t for t in targets if t not in allowed and not t.startswith(pure)} == set()
    assert _imports(MODULES["harness.release"]) == set()


@pytest.mark.parametrize("module", ["harness.evaluators.reference.scene_measure", "harness.measure.plan",
                                    "harness.protocol.records"])
def test_measurement_parts_do_not_import_the_pipeline(module):
    assert module not in _importers_of("harness.measure.images")


def test_the_measure_package_forwards_nothing():
    """The pipeline is ``harness.measure.images.measure``; the package's ``__init__`` is a
    docstring, not a forwarder."""
    assert _imports(MODULES["harness.measure"]) == set()


def test_bpy_only_under_render():
    assert [m for m in _importers_of("bpy") if not m.startswith("harness.render")] == []


def test_no_pass_through_layer():
    assert "harness.components" not in MODULES
    assert _importers_of("harness.components") == []


def test_the_pipeline_chooses_the_measurement_by_adapter_kind():
    from harness.evaluators.reference.specs import companion_spec, planted_specs
    from harness.measure.images import measurement_kind
    from harness.testing import TinySpec

    assert measurement_kind(companion_spec()) == "scene"
    assert {measurement_kind(s) for s in planted_specs()} == {"scene"}
    assert measurement_kind(TinySpec("tiny")) == "image"


def _edges() -> dict[str, set[str]]:
    """Module → the harness modules it imports anywhere: at load, inside functions and under
    ``TYPE_CHECKING`` (a type-only import still ties the two modules together). ``from pkg
    import mod`` counts as an import of ``pkg.mod``."""
    edges: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets.update(
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                    for a in node.names
                )
        resolved = set()
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                resolved.add(target)
        edges[name] = resolved
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_planted_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_counting_lazy_imports():
    assert _cycles(_edges()) == []


def test_ray_only_under_backends_and_imported_lazily():
    """Ray is optional (the ``distributed`` extra): only ``harness/backends/`` imports it, and
    never at module level, so the default install imports every module without it."""
    assert [m for m in _importers_of("ray") if not m.startswith("harness.backends")] == []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {alias.name.split(".")[0] for node in tree.body if isinstance(node, ast.Import)
               for alias in node.names}  # fmt: skip
        top |= {node.module.split(".")[0] for node in tree.body
                if isinstance(node, ast.ImportFrom) and node.module}  # fmt: skip
        assert not top & {"ray", "fsspec", "s3fs"}, f"{name} imports an optional package at load"


def test_the_store_is_a_leaf_the_caches_build_on():
    """``harness.store`` needs only the small shared modules; the render and score caches and
    the backends import it, never the other way round."""
    allowed = {"harness.core.errors", "harness.core.hashing", "harness.core.fileio", "harness.core.bounded_input"}
    for name, targets in _edges().items():
        if name.startswith("harness.store"):
            outside = {t for t in targets if t != "harness.store" and not t.startswith("harness.store.")}
            assert outside <= allowed, (name, outside - allowed)
    assert {"harness.render.cache", "harness.render.store_cache", "harness.evaluators.cache",
            "harness.evaluators.score_store"} <= set(_importers_of("harness.store"))  # fmt: skip
    # the backends are chosen only by the user's doors: the CLI's commands and the Python API
    assert [m for m in _importers_of("harness.backends") if not m.startswith(
        ("harness.backends", "harness.commands", "harness.api"))] == []  # fmt: skip


def test_type_only_imports_count_as_edges():
    """``harness.run.inputs`` names ``AuditOptions`` only under ``TYPE_CHECKING``; the edge is
    still counted (and points down, into ``harness.run.options``)."""
    assert "harness.run.options" in _edges()["harness.run.inputs"]
    assert "harness.run.session" not in _edges()["harness.run.options"]


def test_the_python_api_never_imports_the_commands():
    """``harness.api`` and ``harness.audit_api`` call the stage packages; the commands call
    them, never the reverse."""
    doors = ("harness.api", "harness.audit_api")
    assert [(d, t) for d in doors for t in _edges()[d] if t.startswith("harness.commands")] == []
    from harness.api import agreement, search  # noqa: F401  (importable without the CLI)


def test_the_peers_measure_through_the_one_pipeline():
    """``harness.peers.measure`` renders and scores nothing itself: it plans rows for
    ``harness.measure.images``."""
    assert "harness.measure.images" in _edges()["harness.peers.measure"]
    assert [m for m in _importers_of("harness.render.composite") if m.startswith("harness.peers")] == []


#: The longest a module under ``harness/`` may be, in lines: one job per module.
MAX_MODULE_LINES = 700


def test_no_module_is_over_the_line_limit():
    lengths = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in MODULES.items()}
    assert {m: n for m, n in lengths.items() if n > MAX_MODULE_LINES} == {}


def test_the_plugin_is_a_package_of_feature_plugins():
    """``harness.plugin`` registers one pytest plugin module per feature and holds no hook itself."""
    import harness.plugin

    listed = [name for name in harness.plugin.pytest_plugins if name.startswith("harness.plugin.")]
    assert set(listed) == {m for m in MODULES if m.startswith("harness.plugin.")} - {"harness.plugin.warm"}
    assert not [n for n in vars(harness.plugin) if n.startswith("pytest_") and n != "pytest_plugins"]
    # a module is listed after every plugin module it imports (else its asserts go unrewritten)
    for i, name in enumerate(listed):
        assert {t for t in _edges()[name] if t in listed} <= set(listed[:i]), name
