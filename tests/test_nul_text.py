"""NUL and other C0 control characters in records and scenes.

docs/formats.md forbids NUL in every records cell; pandas' CSV reader cut a cell at its first
NUL, so ``caption\\0x`` was read back as ``caption`` and accepted. Scene prompts, prompt sources
and labels may not hold NUL or other C0 controls (tab and line breaks allowed).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import RecordsError, SceneError
from harness.protocol.records import read_records, records_from_rows, write_records
from harness.scenes.load import parse_scene, validate_scene
from harness.scenes.model import Scene
from tests._scene_helpers import scene_doc, write_assets

SHA = "a" * 64


def _row(**over) -> dict:
    row = {
        "evaluator": "clip-b32",
        "generator": "holodeck",
        "prompt_id": "bedroom-01",
        "scene_sha256": SHA,
        "factor": "baseline",
        "level": "c0",
        "caption": "A top-down view of a bedroom",
        "score": 0.25,
        "status": "ok",
        "error": "",
    }
    row.update(over)
    return row


def _csv_with(tmp_path: Path, rows: list[dict]) -> Path:
    """A records CSV holding ``rows`` as written, bypassing validation (as a hostile writer)."""
    path = tmp_path / "r.csv"
    write_records(records_from_rows(rows), path, validate=False)
    return path


@pytest.mark.parametrize(
    "column", ["caption", "generator", "evaluator", "prompt_id", "level", "error"]
)
@pytest.mark.parametrize("validate", [True, False])
def test_a_nul_in_a_csv_cell_is_refused_naming_row_and_column(
    tmp_path: Path, column: str, validate: bool
) -> None:
    rows = [_row(), _row(prompt_id="bedroom-02")]
    rows[1][column] = rows[1][column] + "\0tail" if rows[1][column] else "x\0"
    if column == "error":
        rows[1].update(status="failed", score=math.nan)
    path = _csv_with(tmp_path, rows)
    assert b"\0" in path.read_bytes()
    with pytest.raises(RecordsError) as info:
        read_records(path, validate=validate)
    assert f"row 2, column '{column}': contains a NUL character" in info.value.what
    assert info.value.where == str(path)


def test_a_nul_in_a_quoted_multiline_cell_counts_data_rows(tmp_path: Path) -> None:
    rows = [_row(caption="two\r\nlines"), _row(prompt_id="b", caption="nul\0here")]
    path = _csv_with(tmp_path, rows)
    with pytest.raises(RecordsError, match=r"row 2, column 'caption': contains a NUL"):
        read_records(path)


def test_parquet_keeps_the_nul_and_validation_refuses_it(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "r.parquet"
    write_records(records_from_rows([_row(caption="a\0b")]), path, validate=False)
    with pytest.raises(RecordsError, match=r"row 1, column 'caption': contains a NUL"):
        read_records(path)


@settings(max_examples=30, deadline=None)
@given(caption=st.text(st.characters(blacklist_categories=("Cs",)), max_size=12))
def test_csv_round_trip_never_changes_a_caption_silently(tmp_path_factory, caption: str) -> None:
    """Whatever the caption, reading gives it back exactly or refuses with a RecordsError."""
    path = tmp_path_factory.mktemp("r") / "r.csv"
    write_records(records_from_rows([_row(caption=caption)]), path, validate=False)
    try:
        back = read_records(path)
    except RecordsError:
        assert "\0" in caption
    else:
        assert back["caption"].iloc[0] == caption


# -- scenes -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "pointer"),
    [
        (lambda d: d.update(prompt="a bed\0room"), "/prompt"),
        (lambda d: d.update(prompt_source="hand\x07written"), "/prompt_source"),
        (lambda d: d["objects"][1].update(label="ta\x1bble"), "/objects/1/label"),
        (lambda d: d.update(prompt="\x00"), "/prompt"),
    ],
)
def test_control_characters_in_scene_text_are_refused(tmp_path: Path, edit, pointer: str) -> None:
    write_assets(tmp_path)
    doc = scene_doc()
    edit(doc)
    with pytest.raises(SceneError) as info:
        parse_scene(json.dumps(doc).encode(), path="s.json", root=tmp_path)
    assert info.value.pointer == pointer and "control character U+00" in info.value.what
    assert "\0" not in str(info.value)  # the message never carries the character itself


def test_tabs_and_line_breaks_stay_allowed(tmp_path: Path) -> None:
    write_assets(tmp_path)
    doc = scene_doc()
    doc["prompt"] = "a bedroom\twith\na bed\r\n"
    assert (
        parse_scene(json.dumps(doc).encode(), path="s.json", root=tmp_path).prompt == doc["prompt"]
    )


def test_imported_scenes_go_through_the_same_check(tmp_path: Path) -> None:
    write_assets(tmp_path)
    scene = Scene.from_dict({**scene_doc(), "prompt": "nul\0prompt"})
    with pytest.raises(SceneError) as info:
        validate_scene(scene, tmp_path, path="import.glb")
    assert (info.value.path, info.value.pointer) == ("import.glb", "/prompt")
