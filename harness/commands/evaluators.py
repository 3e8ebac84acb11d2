"""``t3d-audit evaluators [PATTERN ...] [--json]``: list registered evaluators.

Also lists the evaluators the project in the working folder offers through the
``pytest_audit_evaluators`` hook of its ``conftest.py`` (:mod:`harness.run.project_evaluators`).

Works offline and fast: no torch import; weight availability is a file-presence check in the
Hugging Face cache, ``$T3D_AUDIT_WEIGHTS_DIR`` and local paths (the judge: its API key
variable is set).

Text output: one line per evaluator, tab-separated: ``id, family, model name, checkpoint,
weights (yes/no), needs_text (text/no-text), install`` where ``install`` is ``install:ok`` or
``install:missing`` followed by what this install lacks to run it (the modules and the pip extra,
checked without importing them).
``--json``: a list of objects with every identity field (``id, family, adapter, model_name,
checkpoint, checkpoint_sha256, preprocessing, score_scale, instruction, decoding, needs_text,
max_text_tokens, options``) plus ``identity_hash``, ``weights_available``, ``description`` and
``install_problem`` (``null`` when this install can run it).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from harness.core.jsonout import print_json
from harness.evaluators.families import install_problem

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec

HELP = "list registered evaluators"
T = TypeVar("T")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("patterns", nargs="*", help="evaluator ids or globs (default: all)")
    parser.add_argument("--json", action="store_true", help="print every identity field as JSON")


def run(args: argparse.Namespace) -> int:
    from harness.evaluators import registry
    from harness.run.evaluator_selection import select_evaluators
    from harness.run.project_evaluators import project_specs

    offered = project_specs()  # registers the Scorers among them
    registered = registry.all_specs()
    known = {s.id for s in registered}
    specs: list[object] = registered + [s for s in offered if s.id not in known]
    if args.patterns:
        chosen = {s.id for s in select_evaluators(args.patterns, offered)}
        specs = [s for s in specs if s.id in chosen]
    if args.json:
        print_json([_listed(spec, _json_row) for spec in specs])
        return 0
    rows = [_listed(spec, _text_row) for spec in specs]  # every row first: an error prints no half list
    for fields in rows:
        print("\t".join(fields))
    return 0


def _json_row(spec: EvaluatorSpec) -> dict[str, object]:
    import json

    from harness.core.jsonout import strict

    row = {
        **spec.identity(),
        "identity_hash": spec.identity_hash,
        "weights_available": _weights_available(spec),
        "description": getattr(spec, "description", ""),
        "install_problem": install_problem(spec),
    }
    json.dumps(strict(row), allow_nan=False)  # a value JSON cannot hold: TypeError, here
    return row


def _text_row(spec: EvaluatorSpec) -> tuple[str, ...]:
    return (
        spec.id,
        str(getattr(spec, "family", "") or "pytest_audit_evaluators"),
        str(getattr(spec, "model_name", "")),
        str(getattr(spec, "checkpoint", "")),
        "weights:yes" if _weights_available(spec) else "weights:no",
        "text" if spec.needs_text else "no-text",
        _install_column(spec),
    )


def _install_column(spec: EvaluatorSpec) -> str:
    problem = install_problem(spec)
    return "install:ok" if problem is None else f"install:missing ({problem})"


def _listed(spec: EvaluatorSpec, row: Callable[[object], T]) -> T:
    """``row(spec)``; a spec a project's hook offered that lacks a field or raises in one (a
    duck-typed spec needs ``id``, ``needs_text``, ``identity()``, ``identity_hash``) is an
    :class:`EvaluatorError` naming it, not a traceback."""
    from harness.core.errors import EvaluatorError

    try:
        return row(spec)
    except Exception as exc:
        raise EvaluatorError(
            f"evaluator {getattr(spec, 'id', '?')!r} cannot be listed: {type(exc).__name__}: {str(exc)[:200]}",
            hint="a spec a pytest_audit_evaluators hook offers needs id, needs_text, identity() and "
            "identity_hash (docs/evaluators.md)",
        ) from None


def _weights_available(spec: EvaluatorSpec) -> bool:
    """A hook's duck-typed spec without ``weights_available`` needs no weights."""
    check = getattr(spec, "weights_available", None)
    try:
        return bool(check()) if callable(check) else True
    except OSError:  # a weights folder the file system refuses (a name too long): none there
        return False
