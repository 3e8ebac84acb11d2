"""harness.core.fileio: atomic publication of bytes and text."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core import fileio


def test_creates_parents_and_replaces(tmp_path):
    target = tmp_path / "a" / "b" / "out.bin"
    fileio.write_bytes_atomic(target, b"one")
    assert target.read_bytes() == b"one"
    fileio.write_bytes_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.bin"]


def test_text_is_encoded_without_newline_translation(tmp_path):
    target = tmp_path / "t.txt"
    fileio.write_text_atomic(target, "é\r\nx\n")
    assert target.read_bytes() == "é\r\nx\n".encode()
    fileio.write_text_atomic(target, "é", encoding="latin-1")
    assert target.read_bytes() == b"\xe9"


def test_failure_keeps_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "keep.txt"
    target.write_bytes(b"old")

    def broken_replace(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk gone"):
        fileio.write_bytes_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_encoding_error_writes_nothing(tmp_path):
    target = tmp_path / "ascii.txt"
    with pytest.raises(UnicodeEncodeError):
        fileio.write_text_atomic(target, "é", encoding="ascii")
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=25, deadline=None)
@given(data=st.binary(max_size=2048))
def test_round_trip(tmp_path_factory, data):
    target = tmp_path_factory.mktemp("rt") / "f.bin"
    fileio.write_bytes_atomic(target, data)
    assert target.read_bytes() == data


def test_json_writer_keeps_each_format_and_a_trailing_newline(tmp_path):
    value = {"b": [1, 2.5], "a": "é"}
    path = fileio.write_json_atomic(tmp_path / "x.json", value)
    assert path.read_bytes() == '{\n  "a": "é",\n  "b": [\n    1,\n    2.5\n  ]\n}\n'.encode()
    fileio.write_json_atomic(path, value, indent=1, sort_keys=False, ensure_ascii=True)
    assert path.read_bytes() == b'{\n "b": [\n  1,\n  2.5\n ],\n "a": "\\u00e9"\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_every_json_output_refuses_nan_and_keeps_the_old_file(tmp_path, bad):
    """One allow_nan policy: cards and manifests used to be written with ``NaN`` tokens."""
    from harness.cards.card_format import write_card
    from harness.cards.provenance import write_manifest

    card, manifest = tmp_path / "card.json", tmp_path / "manifest.json"
    card.write_text("old\n")
    manifest.write_text("old\n")
    with pytest.raises(ValueError):
        write_card({"x": bad}, card)
    with pytest.raises(ValueError):
        write_manifest({"x": bad}, tmp_path)
    assert card.read_text() == manifest.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card.json", "manifest.json"]


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_published_files_get_the_mode_open_would_give_them(tmp_path, mask):
    # regression: mkstemp's temp files are 0600 and os.replace kept that mode, so a
    # report held 0600 and 0644 files side by side depending on which writer made each
    old = os.umask(mask)
    try:
        assert fileio.current_umask() == mask
        fileio.write_bytes_atomic(tmp_path / "atomic.json", b"{}")
        fileio.write_json_atomic(tmp_path / "sub" / "value.json", {"a": 1})
        (tmp_path / "plain.txt").write_text("x")
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.rglob("*") if p.is_file()}
    assert modes == dict.fromkeys(["atomic.json", "value.json", "plain.txt"], 0o666 & ~mask)


def test_a_local_store_object_gets_the_plain_file_mode(tmp_path):
    from harness.store import LocalStore

    store = LocalStore(tmp_path / "store")
    old = os.umask(0o022)
    try:
        assert store.write("renders/ab/abcd.png", b"png")
    finally:
        os.umask(old)
    assert store.path("renders/ab/abcd.png").stat().st_mode & 0o777 == 0o644
