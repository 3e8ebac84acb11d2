"""Evaluator ids are checked against one documented charset wherever they enter (a spec, the
registry, the ``pytest_audit_evaluators`` hook, a records file), and a records file's
``served_model`` cells against the served-model pattern."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.errors import EvaluatorError, RecordsError
from harness.core.ids import EVALUATOR_ID, EVALUATOR_ID_TEXT, SERVED_MODEL_ID, check_evaluator_id
from harness.core.paths import REPO_ROOT
from harness.evaluators import registry
from harness.protocol.records import (
    read_records,
    records_from_rows,
    validate_records,
    write_records,
)
from harness.run.evaluator_selection import select_evaluators
from harness.testing import TinySpec

pytest_plugins = ["pytester"]

HOSTILE_IDS = [
    "<img src=x onerror=alert(document.domain)>",
    "a'b",
    'a"b',
    "a/b",
    "..",
    ".hidden",
    "-rf",
    "a b",
    "é",
    "a\x00b",
    "x" * 101,
    "",
]
SHA = "ab" * 32


def _row(**over) -> dict:
    row = {"evaluator": "clip-b32", "generator": "g", "prompt_id": "p", "scene_sha256": SHA,
           "factor": "baseline", "level": "c0", "caption": "c", "score": 1.0, "status": "ok",
           "error": ""}  # fmt: skip
    return {**row, **over}


def test_the_documented_charset_is_the_code():
    docs = (REPO_ROOT / "docs" / "formats.md").read_text()
    section = docs.split("## Evaluator ids")[1].split("\n## ")[0]
    assert f"`{EVALUATOR_ID.pattern}`" in section
    assert " ".join(section.replace("`", "").split()).startswith(f"An evaluator id is {EVALUATOR_ID_TEXT}")


def test_every_catalogue_id_is_valid():
    for spec in registry.all_specs():
        assert EVALUATOR_ID.fullmatch(spec.id), spec.id


@pytest.mark.parametrize("bad", HOSTILE_IDS)
def test_a_spec_refuses_an_id_outside_the_charset(bad):
    base = registry.get("clip-vit-b32")
    with pytest.raises(EvaluatorError) as info:
        base.with_changes(id=bad)
    text = str(info.value)
    assert "A-Z a-z 0-9 . _ -" in text and "docs/formats.md" in text
    assert repr(bad[:120]) in text or bad == ""


@pytest.mark.parametrize("bad", HOSTILE_IDS[:4])
def test_a_duck_typed_hook_spec_with_a_bad_id_is_refused_at_selection(bad):
    with pytest.raises(EvaluatorError, match="pytest_audit_evaluators: evaluator id"):
        select_evaluators([], [TinySpec("tiny-ok"), TinySpec(bad)])


@given(st.from_regex(EVALUATOR_ID, fullmatch=True))
def test_every_id_of_the_charset_is_accepted(good):
    assert check_evaluator_id(good) == good


@given(st.text(min_size=1, max_size=30).filter(lambda s: re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", s) is None))
def test_every_id_outside_the_charset_is_refused(bad):
    with pytest.raises(EvaluatorError):
        check_evaluator_id(bad)


def test_a_hook_returning_a_bad_id_is_a_usage_error(pytester):
    from harness.testing import write_tiny_scene_set

    write_tiny_scene_set(pytester.path / "scenes")
    pytester.makeconftest(
        "from harness.testing import BoxRasterizer, TinySpec\n\n"
        "def pytest_audit_renderer(config, cache_dir):\n    return BoxRasterizer()\n\n"
        "def pytest_audit_evaluators(config):\n"
        "    return [TinySpec('tiny-grid'), TinySpec('<img src=x onerror=alert(1)>')]\n"
    )
    pytester.makepyfile(test_audit="def test_rho(audit_evaluator, audit_factor):\n    pass\n")
    (pytester.path / "pyproject.toml").write_text('[tool.t3d-audit]\nscenes = "scenes"\nprofile = "smoke"\n')
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pytest_audit_evaluators: evaluator id '<img src=x onerror=alert(1)>' is not*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("bad", [b for b in HOSTILE_IDS if b.strip() and "\x00" not in b])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_records_file_with_a_bad_id_is_refused_naming_row_and_id(tmp_path, bad, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    frame = records_from_rows([_row(), _row(evaluator=bad, caption="d")])
    path = write_records(frame, tmp_path / f"r{suffix}", validate=False)
    with pytest.raises(RecordsError) as info:
        read_records(path)
    text = str(info.value)
    assert f"row 2, column 'evaluator': id {bad[:120]!r} is not {EVALUATOR_ID_TEXT}" in text
    assert "row 1" not in text


@pytest.mark.parametrize("bad", ["gpt-4o (sk-live-abc)", "a b", "<script>", "x" * 101, "m\n"])
def test_a_served_model_outside_the_pattern_is_refused_without_quoting_it(bad):
    frame = records_from_rows([_row(), _row(caption="d")])
    frame["served_model"] = ["gpt-4o-2024-11-20", bad]
    with pytest.raises(RecordsError) as info:
        validate_records(frame)
    text = str(info.value)
    assert "row 2, column 'served_model': not a model id" in text and bad not in text
    frame["served_model"] = ["unrecognised model id", ""]
    validate_records(frame)


@given(st.from_regex(SERVED_MODEL_ID, fullmatch=True))
def test_served_model_ids_of_the_pattern_pass(model):
    frame = records_from_rows([_row()])
    frame["served_model"] = pd.Series([model], dtype=object)
    validate_records(frame)
