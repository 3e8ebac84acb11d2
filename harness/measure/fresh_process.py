"""Scoring a sample in a fresh process: the third pass of the repeatability check.

The parent writes a request (which modules to import, then the pickled spec and inputs) into a
private temporary folder and runs ``python -m harness.measure.fresh_process DIR`` with its own
``sys.path``; the child imports those modules (so a Scorer or family registered by a
``conftest.py`` or a plugin module is registered there too), builds the evaluator anew from
the spec, scores the inputs in one call of ``batch`` rows and writes ``result.json``:
``{"scores": [float | null], "errors": [str]}`` (one each per input; ``null`` and the reason
where a row failed) or ``{"error": str}`` when nothing could be scored. The score cache is
never read or written.

What the child imports (:func:`rebuild_imports`): the module of the spec's class when it is
not an :class:`~harness.evaluators.base.EvaluatorSpec` (a duck-typed spec), the module of the
family's ``build`` (a callable's module, or the module a ``"module:function"`` names), and for a user Scorer (families ``python`` and
``python_scene``) the module defining its class, whose recipe the child registers afresh. A
module is imported by name, or from its file when its name does not find that file (a
``conftest.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec

REQUEST_IMPORTS = "imports.json"
REQUEST_PICKLE = "request.pkl"
RESULT = "result.json"


def _module_of(obj: object) -> dict[str, str] | None:
    """``{"module", "file"}`` of the module defining ``obj`` (``None`` for a built-in one)."""
    name = getattr(obj, "__module__", None)
    if not name or name.startswith("harness.") or name in ("builtins", "__main__"):
        return None
    module = sys.modules.get(name)
    return {"module": name, "file": str(getattr(module, "__file__", "") or "")}


def rebuild_imports(spec: EvaluatorSpec) -> list[dict[str, str]]:
    """The modules a fresh process imports before it can build ``spec`` (see the module
    docstring), each ``{"module", "file"[, "scorer"]}``."""
    from harness.evaluators.families import get_family

    out: list[dict[str, str]] = []
    found = _module_of(type(spec))
    if found:
        out.append(found)
    adapter = getattr(spec, "adapter", None)
    if adapter:
        build = get_family(adapter).build
        path = getattr(build, "path", build if isinstance(build, str) else None)
        if isinstance(path, str):  # "module:function": a plugin's family module registers itself
            module = path.partition(":")[0]
            found = None if module.startswith("harness.") else {"module": module, "file": ""}
        else:
            found = _module_of(build)
        if found:
            out.append(found)
        if adapter in ("python", "python_scene"):
            from harness.evaluators.scorer import RECIPES

            recipe = RECIPES.find(spec.id)
            cls = getattr(recipe, "cls", None)
            if cls is not None:
                entry = _module_of(cls) or {"module": cls.__module__, "file": ""}
                out.append({**entry, "scorer": cls.__qualname__})
    return out


def score_in_fresh_process(spec: EvaluatorSpec, inputs: list[object], captions: list[str], *, device: str,
                           batch: int, build_batch_size: int, timeout_s: float) -> tuple[list[float | None], list[str]]:
    """Scores and reasons of ``inputs`` (images or scene items) from a fresh process, ``batch``
    rows per call, the evaluator built as the run builds it (``spec.build(device,
    build_batch_size)``); raises :class:`RuntimeError` with the reason when the child could not
    score at all."""
    request = {"spec": spec, "inputs": inputs, "captions": captions, "device": device, "batch": batch,
               "build_batch_size": build_batch_size}
    with tempfile.TemporaryDirectory(prefix="t3d-repeat-") as tmp:
        folder = Path(tmp)
        (folder / REQUEST_IMPORTS).write_text(json.dumps(rebuild_imports(spec)))
        (folder / REQUEST_PICKLE).write_bytes(pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            done = subprocess.run([sys.executable, "-m", "harness.measure.fresh_process", str(folder)],
                                  capture_output=True, text=True, timeout=timeout_s, env=env, check=False)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the fresh process did not finish within {timeout_s:g} s") from None
        result_path = folder / RESULT
        if not result_path.is_file():
            tail = (done.stderr or "").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            raise RuntimeError(f"the fresh process wrote no result ({tail[0][:200]})")
        result = json.loads(result_path.read_text())
    if result.get("error"):
        raise RuntimeError(f"the fresh process could not score: {result['error']}")
    return list(result["scores"]), list(result["errors"])


def _import(entry: dict[str, str]) -> object:
    """The module ``entry`` names: by name when that name finds its file (checked before any
    module runs), else from the file under that name (a ``conftest.py``)."""
    name, file = entry["module"], entry.get("file", "")
    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        found = None
    origin = getattr(found, "origin", None) or ""
    if found is not None and (not file or os.path.realpath(origin) == os.path.realpath(file)):
        return importlib.import_module(name)
    if not file:
        raise ImportError(f"no module named {name!r}")
    by_file = importlib.util.spec_from_file_location(name, file)
    if by_file is None or by_file.loader is None:
        raise ImportError(f"cannot import {name} from {file}")
    module = importlib.util.module_from_spec(by_file)
    sys.modules[name] = module
    by_file.loader.exec_module(module)
    return module


def score_batches(evaluator: object, inputs: list[object], captions: list[str], batch: int,
                  scene: bool) -> tuple[list[float | None], list[str]]:
    """``inputs`` scored ``batch`` rows per call: per row the score (``None`` when it failed)
    and the reason (``""`` when scored)."""
    import math

    scores: list[float | None] = []
    errors: list[str] = []
    for start in range(0, len(inputs), batch):
        part, texts = inputs[start:start + batch], captions[start:start + batch]
        try:
            results = evaluator.score_items(part) if scene else evaluator.score(part, texts)
            results = list(results)
            if len(results) != len(part):
                raise ValueError(f"{len(results)} results for {len(part)} inputs")
        except Exception as exc:  # a scoring error fails the rows, with the reason
            scores.extend([None] * len(part))
            errors.extend([f"{type(exc).__name__}: {exc}"] * len(part))
            continue
        for res in results:
            ok = getattr(res, "status", "failed") == "ok" and math.isfinite(float(res.score))
            scores.append(float(res.score) if ok else None)
            errors.append("" if ok else str(getattr(res, "error", "") or "unknown failure"))
    return scores, errors


def _child(folder: Path) -> dict[str, object]:
    from harness.evaluators.scorer import add_scorer

    for entry in json.loads((folder / REQUEST_IMPORTS).read_text()):
        module = _import(entry)
        if entry.get("scorer"):
            obj: object = module
            for part in entry["scorer"].split("."):
                obj = getattr(obj, part)
            add_scorer(obj)  # a fresh recipe: the class, built anew here
    request = pickle.loads((folder / REQUEST_PICKLE).read_bytes())
    spec = request["spec"]
    from harness.evaluators.families import adapter_input

    scene = adapter_input(spec) == "scene"
    evaluator = spec.build(device=request["device"], batch_size=request["build_batch_size"])
    try:
        scores, errors = score_batches(evaluator, request["inputs"], request["captions"], request["batch"], scene)
    finally:
        close = getattr(evaluator, "close", None)
        if close is not None:
            close()
    return {"scores": scores, "errors": errors}


def main(argv: list[str]) -> int:
    folder = Path(argv[0])
    try:
        result = _child(folder)
    except Exception as exc:  # reported to the parent as the pass's failure
        result = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    (folder / RESULT).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
