"""harness.fileio: atomic publication of bytes and text."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import fileio


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
