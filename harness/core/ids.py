"""The charsets of identifiers that reach file names, HTML pages and cards.

Evaluator ids name files (``scores/<id>.csv``, ``cards/<id>.json``), pytest test ids and every
row of a records file, and they are written into ``report.html``. They are checked against
:data:`EVALUATOR_ID` wherever they enter: when a spec is made (registry, entry points, the
``pytest_audit_evaluators`` hook) and when a records file is read (docs/formats.md,
"Evaluator ids").

A hosted judge's endpoint reports which model served a request; that text comes from the
server, so it is kept only when it matches :data:`SERVED_MODEL_ID` (and does not echo the API
key, checked by the judge client); otherwise the record says :data:`UNRECOGNISED_MODEL`.
A leaf module: it imports only :mod:`harness.core.errors`.
"""

from __future__ import annotations

import re

from harness.core.errors import EvaluatorError

EVALUATOR_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
EVALUATOR_ID_TEXT = (
    "1 to 100 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit"
)
SERVED_MODEL_ID = re.compile(r"[A-Za-z0-9._:/-]{1,100}")
UNRECOGNISED_MODEL = "unrecognised model id"


def evaluator_id_problem(value: object) -> str | None:
    """Why ``value`` is not a valid evaluator id (``None`` when it is one)."""
    if not isinstance(value, str):
        return f"an evaluator id must be a string, got {type(value).__name__}"
    if EVALUATOR_ID.fullmatch(value) is None:
        return f"evaluator id {value[:120]!r} is not {EVALUATOR_ID_TEXT}"
    return None


def check_evaluator_id(value: object, *, where: str | None = None) -> str:
    """``value`` when it is a valid evaluator id, else :class:`EvaluatorError` naming it."""
    problem = evaluator_id_problem(value)
    if problem is not None:
        raise EvaluatorError(problem, where=where,
                             hint="rename the evaluator (docs/formats.md, 'Evaluator ids')")
    return value  # type: ignore[return-value]


def is_served_model_id(value: str) -> bool:
    """Whether ``value`` is a model id as a record may store it (the pattern or the marker)."""
    return value == UNRECOGNISED_MODEL or SERVED_MODEL_ID.fullmatch(value) is not None


def stored_model_id(value: object) -> str:
    """What a record keeps of a served model id an evaluator reported: ``''`` for none,
    the id when it matches :data:`SERVED_MODEL_ID`, else :data:`UNRECOGNISED_MODEL` (any
    evaluator's metadata, fresh or from a cache, passes through here before a record)."""
    if not isinstance(value, str) or not value:
        return ""
    return value if is_served_model_id(value) else UNRECOGNISED_MODEL
