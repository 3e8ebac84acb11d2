"""Typed documents at the harness's boundaries: a ceiling on ``Any`` in ``harness/``, one
"non-finite → None" (``harness.core.numbers.finite_or_none``), one conversion of records into
JSON values (``harness.core.jsonout.strict``) and frozen records that hold no mutable dict."""

from __future__ import annotations

import ast
import io
import json
import math
import tokenize
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.jsonout import strict

HARNESS = Path(__file__).resolve().parent.parent / "harness"

#: Uses of ``Any`` in ``harness/`` (see :func:`any_uses`). Lower it when you type more; a new
#: ``Any`` wants a real type: ``object``, a Protocol, ``Mapping[str, float]``, ``JSONValue``.
ANY_CEILING = 7

#: The one home of "a finite float or None" (and the JSON conversion built on the same rule).
NON_FINITE_HOMES = {"core/numbers.py", "core/jsonout.py"}


def any_uses(source: str) -> int:
    """The word ``Any`` in code lines of ``source`` that are neither comments nor imports,
    trailing comments left out (docstrings count: prose that says ``Any`` is easy to reword)."""
    count = 0
    for line in source.splitlines():
        text = line.strip()
        if text.startswith(("#", "import ", "from ")):
            continue
        count += sum(1 for word in _words(text.split("#", 1)[0]) if word == "Any")
    return count


def _words(line: str) -> list[str]:
    word, words = "", []
    for ch in line + " ":
        if ch.isalnum() or ch == "_":
            word += ch
        else:
            if word:
                words.append(word)
            word = ""
    return words


def test_any_in_the_harness_stays_under_its_ceiling():
    per_file = {str(p.relative_to(HARNESS)): any_uses(p.read_text(encoding="utf-8")) for p in HARNESS.rglob("*.py")}
    total = sum(per_file.values())
    worst = sorted(((n, f) for f, n in per_file.items() if n), reverse=True)[:5]
    assert total <= ANY_CEILING, f"{total} uses of Any in harness/ (ceiling {ANY_CEILING}); most in {worst}"


def test_the_any_count_skips_comments_and_imports_only():
    source = "from typing import Any\nimport Any\n# Any here\nx: Any = 1  # Any\ndef f(a: AnyStr) -> Any: ...\n"
    assert any_uses(source) == 2


def _checks_finiteness(test: ast.expr) -> ast.expr | None:
    """The argument of ``isfinite(x)`` / ``math.isfinite(x)`` / ``np.isfinite(x)`` (also with
    ``x is not None and`` before it), else ``None``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        test = test.values[-1]
    if isinstance(test, ast.Call) and len(test.args) == 1:
        func = test.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "isfinite":
            return test.args[0]
    return None


def _same_value(node: ast.expr, checked: ast.expr) -> bool:
    """``node`` is ``checked`` itself or ``float(checked)``."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "float" and len(node.args) == 1:
        node = node.args[0]
    return ast.dump(node) == ast.dump(checked)


def local_non_finite_copies(source: str) -> list[int]:
    """Lines of ``source`` that restate "``x`` if finite, else ``None``" as an expression."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.IfExp):
            continue
        checked = _checks_finiteness(node.test)
        if checked is None:
            continue
        none_else = isinstance(node.orelse, ast.Constant) and node.orelse.value is None
        if none_else and _same_value(node.body, checked):
            lines.append(node.lineno)
    return lines


def test_no_module_keeps_its_own_non_finite_to_none():
    found = []
    for path in sorted(HARNESS.rglob("*.py")):
        rel = str(path.relative_to(HARNESS))
        if rel in NON_FINITE_HOMES:
            continue
        found += [f"harness/{rel}:{line}" for line in local_non_finite_copies(path.read_text(encoding="utf-8"))]
    assert not found, "use harness.core.numbers.finite_or_none instead of a local copy:\n" + "\n".join(found)


@pytest.mark.parametrize("copy", [
    "f = lambda x: float(x) if math.isfinite(x) else None",
    "def g(v):\n    return float(v) if v is not None and np.isfinite(v) else None",
    "row = {'share': self.share if math.isfinite(self.share) else None}",
    "out = [x if isfinite(x) else None for x in xs]",
])
def test_the_scan_finds_each_form_of_a_local_copy(copy):
    assert local_non_finite_copies(copy) == [copy.count("\n") + 1]


def test_the_scan_leaves_other_finiteness_tests_alone():
    source = ("a = int(np.nanargmax(p)) if np.isfinite(p).any() else None\n"
              "b = None if math.isfinite(v) else f'non-finite {v!r}'\n"
              "c = 'n/a' if math.isnan(x) else f'{x:.2f}'\n")  # fmt: skip
    assert local_non_finite_copies(source) == []


@dataclass(frozen=True)
class _Inner:
    share: float
    levels: tuple[str, ...]


@dataclass(frozen=True)
class _Outer:
    name: str
    inner: _Inner
    draws: np.ndarray
    by_level: dict[str, float]


def test_strict_writes_a_dataclass_as_its_fields_in_declaration_order():
    record = _Outer("ev", _Inner(math.nan, ("a", "b")), np.array([0.5, np.inf]), {"z": 1.0, "a": -math.inf})
    value = strict(record)
    assert value == {"name": "ev", "inner": {"share": None, "levels": ["a", "b"]}, "draws": [0.5, None],
                     "by_level": {"z": 1.0, "a": None}}  # fmt: skip
    assert list(value) == [f.name for f in fields(_Outer)]
    assert list(value["by_level"]) == ["z", "a"]  # a mapping keeps the caller's key order
    assert json.dumps(value, allow_nan=False) == (
        '{"name": "ev", "inner": {"share": null, "levels": ["a", "b"]}, "draws": [0.5, null], '
        '"by_level": {"z": 1.0, "a": null}}')


def test_strict_leaves_a_dataclass_class_alone():
    assert strict(_Inner) is _Inner


_leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5))
_json_like = st.recursive(
    _leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=20,
)


@given(_json_like)
def test_strict_output_is_always_strict_json_and_keeps_finite_values(value):
    out = strict(value)
    text = json.dumps(out, allow_nan=False)  # never NaN/Infinity tokens
    assert strict(json.loads(text)) == out  # a fixed point: nothing left to convert


@given(st.floats())
def test_strict_and_finite_or_none_agree_on_every_float(x):
    from harness.core.numbers import finite_or_none

    assert strict(x) == finite_or_none(x)
    assert strict(np.float64(x)) == finite_or_none(x)


def test_the_gated_run_holds_no_mutable_dict():
    from harness.run.outputs import GatedRun

    annotations = {f.name: str(f.type) for f in fields(GatedRun)}
    assert not [n for n, t in annotations.items() if t.startswith(("dict[", "list[", "set["))], annotations
    cards: dict[str, str] = {}
    run = GatedRun(specs={}, bootstrap=10, seed=0, records=lambda ev: None, human_means=lambda: None,
                   note_baseline_cards=cards.update)  # fmt: skip
    run.note_baseline_cards({"ev": "ecc-v1-sha256:ab"})
    assert cards == {"ev": "ecc-v1-sha256:ab"}


def test_tokenize_agrees_with_the_line_count_on_the_harness():
    """The line rule of :func:`any_uses` and a token scan see the same ``Any`` in code: no
    ``Any`` hides in a string the line rule would count, and none in a multi-line import."""
    by_tokens = 0
    for path in HARNESS.rglob("*.py"):
        first = None
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                first = None if tok.type == tokenize.NEWLINE else first
                continue
            first = tok.string if first is None else first
            by_tokens += tok.type == tokenize.NAME and tok.string == "Any" and first not in ("import", "from")
    assert by_tokens <= ANY_CEILING
