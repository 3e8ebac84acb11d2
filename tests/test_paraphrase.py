"""Paraphrase file: loading with typed errors, the collapse rule, level numbering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.captions import DEFAULT_TEMPLATE_ID
from harness.captions.paraphrase import (
    BUNDLED_PARAPHRASES,
    MAX_REWRITES,
    SCHEMA,
    ParaphraseEntry,
    ParaphraseError,
    Rewrite,
    distinct_captions,
    distinct_levels,
    load_paraphrases,
    normalise,
    parse_paraphrases,
)
from harness.core.errors import ProtocolError


def _write(tmp_path: Path, data, name: str = "paraphrases.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _file(prompts: dict) -> dict:
    return {"schema": SCHEMA, "prompts": prompts}


def _entry(original: str, *rewrites: str) -> ParaphraseEntry:
    return ParaphraseEntry("p", original, tuple(Rewrite(r) for r in rewrites))


def test_normalise_examples():
    assert normalise("  A  Bedroom\twith a BED.  ") == "a bedroom with a bed"
    assert normalise("A bedroom...") == "a bedroom"
    assert normalise("Straße") == normalise("STRASSE")  # casefold, not lower
    assert normalise("cafe\u0301") == normalise("caf\u00e9")  # NFC
    assert normalise("a. b") == "a. b"  # only trailing periods go


def test_collapse_keeps_first_occurrence_and_leaves_gaps():
    entry = _entry(
        "A bedroom with a bed.",
        "A room for sleeping.",
        "a bedroom with a bed",  # duplicate of the original → collapsed
        "A room  for sleeping",  # duplicate of rewrite 1 → collapsed
        "A sleeping room.",
    )
    assert distinct_captions(entry) == [
        ("p0", "A bedroom with a bed."),
        ("p1", "A room for sleeping."),
        ("p4", "A sleeping room."),
    ]
    assert distinct_levels(entry) == ("p0", "p1", "p4")
    assert entry.text("p2") == "a bedroom with a bed"  # raw level text stays addressable


def test_distinct_captions_wrapped_by_template():
    entry = _entry("a den", "a small den", "A den.")
    assert distinct_captions(entry, DEFAULT_TEMPLATE_ID) == [
        ("p0", "A top-down view of a den"),
        ("p1", "A top-down view of a small den"),
    ]
    with pytest.raises(ProtocolError):
        distinct_captions(entry, "no-such-template")


def test_entry_text_levels():
    entry = _entry("orig", "one", "two")
    assert entry.text("p0") == "orig" and entry.text("p2") == "two"
    for bad in ("p3", "p11", "p01", "q1", "p", "", "p-1"):
        with pytest.raises(ParaphraseError):
            entry.text(bad)


texts = st.text(alphabet=st.sampled_from("aAbB .\t\u00e9e\u0301"), min_size=1, max_size=8).filter(
    lambda s: s.strip()
)


@given(texts, st.lists(texts, max_size=MAX_REWRITES))
def test_collapse_properties(original: str, rewrites: list[str]):
    entry = _entry(original, *rewrites)
    out = distinct_captions(entry)
    levels = [int(level[1:]) for level, _ in out]
    assert out[0] == ("p0", original)
    assert levels == sorted(set(levels))
    assert 1 <= len(out) <= len(rewrites) + 1
    norms = [normalise(c) for _, c in out]
    assert len(norms) == len(set(norms))
    everything = [original, *rewrites]
    assert set(norms) == {normalise(t) for t in everything}
    for level, caption in out:  # each survivor is the first occurrence of its normal form
        i = int(level[1:])
        assert caption == everything[i]
        assert all(normalise(t) != normalise(caption) for t in everything[:i])


def test_load_valid_file(tmp_path):
    path = _write(
        tmp_path,
        _file(
            {
                "bedroom-01": {
                    "original": "a bedroom",
                    "rewrites": [
                        {"text": "a sleeping room", "meaning_preserved": True},
                        {"text": "a kitchen", "meaning_preserved": False},
                        {"text": "a room with a bed", "meaning_preserved": None},
                        {"text": "a bed room"},
                    ],
                },
                "den-02": {"original": "a den", "rewrites": []},
            }
        ),
    )
    entries = load_paraphrases(path)
    assert list(entries) == ["bedroom-01", "den-02"]
    bed = entries["bedroom-01"]
    assert [r.meaning_preserved for r in bed.rewrites] == [True, False, None, None]
    assert distinct_levels(entries["den-02"]) == ("p0",)


GOOD = {"original": "a bedroom", "rewrites": [{"text": "a sleeping room"}]}


@pytest.mark.parametrize(
    ("data", "pointer"),
    [
        ([], "#/"),
        ({"schema": "t3d-paraphrases/0", "prompts": {}}, "#/schema"),
        ({"schema": SCHEMA, "prompts": []}, "#/prompts"),
        ({"schema": SCHEMA, "prompts": {}, "extra": 1}, "#/"),
        (_file({"x": "a bedroom"}), "#/prompts/x"),
        (_file({"x": {"original": "a bedroom"}}), "#/prompts/x"),
        (_file({"x": {**GOOD, "notes": ""}}), "#/prompts/x"),
        (_file({"x": {**GOOD, "original": "  "}}), "#/prompts/x/original"),
        (_file({"x": {**GOOD, "original": 5}}), "#/prompts/x/original"),
        (_file({"x": {**GOOD, "rewrites": "a room"}}), "#/prompts/x/rewrites"),
        (
            _file({"x": {**GOOD, "rewrites": [{"text": f"r{i}"} for i in range(11)]}}),
            "#/prompts/x/rewrites",
        ),
        (_file({"x": {**GOOD, "rewrites": ["a room"]}}), "#/prompts/x/rewrites/0"),
        (_file({"x": {**GOOD, "rewrites": [{"text": ""}]}}), "#/prompts/x/rewrites/0/text"),
        (_file({"x": {**GOOD, "rewrites": [{"txt": "a"}]}}), "#/prompts/x/rewrites/0"),
        (
            _file({"x": {**GOOD, "rewrites": [{"text": "a", "meaning_preserved": "yes"}]}}),
            "#/prompts/x/rewrites/0/meaning_preserved",
        ),
        (_file({" ": GOOD}), "#/prompts"),
    ],
)
def test_malformed_files_are_typed_errors(tmp_path, data, pointer):
    path = _write(tmp_path, data)
    with pytest.raises(ParaphraseError) as info:
        load_paraphrases(path)
    assert info.value.where == f"{path}{pointer}"
    assert isinstance(info.value, ProtocolError)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"schema": ', "malformed JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"schema": NaN}', "NaN"),
    ],
)
def test_unreadable_files(tmp_path, raw, message):
    path = tmp_path / "p.json"
    path.write_bytes(raw)
    with pytest.raises(ParaphraseError, match=message):
        load_paraphrases(path)


def test_missing_file(tmp_path):
    with pytest.raises(ParaphraseError, match="cannot read"):
        load_paraphrases(tmp_path / "absent.json")


def test_parse_accepts_exactly_ten_rewrites():
    data = _file({"x": {"original": "o", "rewrites": [{"text": f"r{i}"} for i in range(10)]}})
    entry = parse_paraphrases(data)["x"]
    assert distinct_levels(entry)[-1] == "p10"


def test_bundled_paraphrases_have_8_to_11_distinct_captions():
    assert BUNDLED_PARAPHRASES.is_file(), f"committed file missing: {BUNDLED_PARAPHRASES}"
    entries = load_paraphrases()
    assert len(entries) >= 1
    for prompt_id, entry in entries.items():
        n = len(distinct_captions(entry))
        assert 8 <= n <= 11, f"{prompt_id}: {n} distinct captions"
        assert len(entry.rewrites) <= MAX_REWRITES
