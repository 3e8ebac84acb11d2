"""A prompt id given twice in a prompts file is refused naming both places, in every form of
the file: JSON's object form would otherwise keep the last silently."""

from __future__ import annotations

import json

import pytest

from harness.core.errors import ImportError_, SceneError
from harness.scenes.importers.batch import read_prompts


@pytest.mark.parametrize("text, places", [
    ('{\n  "p01": "a red chair",\n  "p02": "a table",\n  "p01": "a blue sofa"\n}\n', "lines 2 and 4"),
    ('{"p01": "a", "p01": {"prompt": "b"}}', "entries 1 and 2"),  # one line: the entries
    ('{"p\\u00301": "a", "p01": "b"}', "entries 1 and 2"),  # the same id, escaped once
])  # fmt: skip
def test_a_duplicate_id_in_a_json_object_is_refused_naming_both_places(tmp_path, text, places):
    path = tmp_path / "prompts.json"
    path.write_text(text)
    with pytest.raises(ImportError_, match="duplicate prompt id 'p01'") as info:
        read_prompts(path)
    assert places in str(info.value) and "prompts.json" in str(info.value)


def test_a_duplicate_id_in_a_json_list_or_csv_names_both_places(tmp_path):
    listed = tmp_path / "prompts.json"
    listed.write_text(json.dumps([{"id": "p01", "prompt": "a"}, {"id": "p02", "prompt": "b"},
                                  {"id": "p01", "prompt": "c"}]))  # fmt: skip
    with pytest.raises(ImportError_, match=r"duplicate prompt id 'p01' \(first at /0\)"):
        read_prompts(listed)
    table = tmp_path / "prompts.csv"
    table.write_text("id,prompt\np01,a\np01,b\n")
    with pytest.raises(ImportError_, match=r"first at line 2"):
        read_prompts(table)


def test_nested_keys_and_settings_are_not_prompt_ids(tmp_path):
    path = tmp_path / "prompts.json"
    path.write_text(json.dumps({"@conventions": {}, "p01": {"prompt": "a", "labels": {"x": "y"}},
                                "p02": {"prompt": "b", "labels": {"x": "z"}}}))  # fmt: skip
    assert sorted(read_prompts(path)) == ["p01", "p02"]


def test_a_sampled_prompts_document_with_an_id_twice_is_refused(tmp_path):
    from harness.scenes.prompts import PROMPTS_PATH, load_prompts

    doc = json.loads(PROMPTS_PATH.read_text())
    doc["prompts"].append(doc["prompts"][0])
    path = tmp_path / "prompts.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SceneError, match=r"duplicate prompt id .* \(first at /prompts/0\)"):
        load_prompts(path)
