"""Cached report pieces (``harness.report.pieces``): thumbnails content-addressed by their render
keys, the derived files (summary, tables, figures) and the HTML thumbnail sections, reused by a
warm report writer with byte-identical output and verified like every other cache entry."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core import cacheseal
from harness.measure import thumbs as measure_thumbs
from harness.report import pieces, writer
from harness.report.html import page as html_page
from harness.report.html import strips as html_strips
from harness.report.writer import write_report
from harness.run.outputs import run_result
from harness.testing import TinySpec
from tests._audit_project import tiny_session


def make_session(tmp_path: Path, **over):
    return tiny_session(tmp_path, [TinySpec("tiny-grid"), TinySpec("tiny-ctrl", needs_text=False)], **over)


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def without_manifest(files: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in files.items() if k != "manifest.json"}


@pytest.fixture
def cold(tmp_path):
    """A report written with empty piece caches: (session options' tmp root, its files)."""
    session = make_session(tmp_path)
    written = write_report(run_result(session, sorted(session.inputs.specs)), [])
    return tmp_path, files_of(written.directory)


def _forbid(monkeypatch, target, name):
    def fail(*_a, **_k):
        raise AssertionError(f"{name} ran on a warm report")

    monkeypatch.setattr(target, name, fail)


# ------------------------------------------------------------------------------ the writer


def test_a_warm_report_reuses_every_piece_and_is_byte_identical(cold, monkeypatch):
    tmp, before = cold
    cache = tmp / "cache"
    assert list((cache / pieces.THUMBS_DIR).rglob("*.jpg"))
    assert list((cache / pieces.PIECES_DIR / "derived").rglob("*.bin"))
    assert list((cache / pieces.PIECES_DIR / "html-sections").rglob("*.bin"))
    session = make_session(tmp)
    _forbid(monkeypatch, type(session.summary_cache), "panel_result")  # no statistics on the controller
    _forbid(monkeypatch, measure_thumbs, "encode_thumb")  # no thumbnail encoded
    _forbid(monkeypatch, writer, "write_derived")  # no table or figure drawn
    _forbid(monkeypatch, html_page, "build_html")  # the whole page came from its piece
    renders = []
    monkeypatch.setattr(type(session.inputs.renderer), "render", lambda *a: renders.append(a) or 1 / 0)
    again = write_report(run_result(session, sorted(session.inputs.specs)), [])
    assert renders == []  # thumbnails came from the thumbnail cache, not from the renders
    after = files_of(again.directory)
    assert without_manifest(after) == without_manifest(before)
    assert after["manifest.json"] == before["manifest.json"]


def test_a_changed_page_reuses_its_thumbnail_sections(cold, monkeypatch, tmp_path_factory):
    tmp, _ = cold
    result = {"test": "audit_tests/test_x.py::test_y[tiny-grid]", "evaluator": "tiny-grid",
              "outcome": "passed", "checks": []}
    session = make_session(tmp)
    _forbid(monkeypatch, html_strips, "_strips")  # results.json changed, the strips did not
    _forbid(monkeypatch, html_strips, "_probe_pairs")
    page = files_of(write_report(run_result(session, sorted(session.inputs.specs)), [result]).directory)
    monkeypatch.undo()
    other = tmp_path_factory.mktemp("other-cache")
    fresh = make_session(tmp, cache_dir=other / "cache", report_dir=other / "reports")
    assert files_of(write_report(run_result(fresh, sorted(fresh.inputs.specs)), [result]).directory) == page


def test_a_report_from_other_empty_caches_equals_the_cached_one(cold, tmp_path_factory):
    tmp, before = cold
    other = tmp_path_factory.mktemp("fresh-cache")
    session = make_session(tmp, cache_dir=other / "cache", report_dir=other / "reports")
    fresh = files_of(write_report(run_result(session, sorted(session.inputs.specs)), []).directory)
    assert fresh == before


def test_changed_records_miss_the_derived_piece(cold):
    tmp, _ = cold
    session = make_session(tmp)
    evaluators = sorted(session.inputs.specs)
    key = writer.derived_key(run_result(session, evaluators))
    assert key == writer.derived_key(run_result(make_session(tmp), evaluators))  # stable across sessions
    assert writer.derived_key(run_result(session, evaluators[:1])) != key
    assert writer.derived_key(run_result(make_session(tmp, bootstrap=21), evaluators)) != key
    changed = tmp / "changed.csv"
    changed.write_bytes(session.record_cache.file(evaluators[0]).read_bytes().replace(b"ok", b"ko", 1))
    session.record_cache.files[evaluators[0]] = changed  # the same evaluator measured differently
    assert writer.derived_key(run_result(session, evaluators)) != key


def test_a_corrupt_thumbnail_is_discarded_recomputed_and_counted(cold):
    tmp, before = cold
    entry = sorted((tmp / "cache" / pieces.THUMBS_DIR).rglob("*.jpg"))[0]
    sealed = entry.read_bytes()
    entry.write_bytes(sealed[:-1] + bytes([sealed[-1] ^ 1]))
    counted = cacheseal.discarded_counts().get("thumbs", 0)
    session = make_session(tmp)
    with pytest.warns(cacheseal.CacheCorruptionWarning, match="thumbs cache entry"):
        again = write_report(run_result(session, sorted(session.inputs.specs)), [])
    assert cacheseal.discarded_counts()["thumbs"] == counted + 1
    assert entry.read_bytes() == sealed  # published again, equal bytes
    assert without_manifest(files_of(again.directory)) == without_manifest(before)


def test_a_corrupt_derived_piece_is_discarded_and_recomputed(cold):
    tmp, before = cold
    entry = next((tmp / "cache" / pieces.PIECES_DIR / "derived").rglob("*.bin"))
    entry.write_bytes(entry.read_bytes().replace(b'"files"', b'"filez"', 1))
    session = make_session(tmp)
    with pytest.warns(cacheseal.CacheCorruptionWarning, match="report pieces"):
        again = write_report(run_result(session, sorted(session.inputs.specs)), [])
    assert without_manifest(files_of(again.directory)) == without_manifest(before)


def test_thumb_key_names_the_renders_background_and_size(tmp_path):
    session = make_session(tmp_path)
    plan, renderer = session.inputs.plan, session.inputs.renderer
    images = [r.image for r in plan.rows if r.image is not None]
    fixed = measure_thumbs.fixed_key_inputs()
    keys = {measure_thumbs.thumb_key(plan, renderer, i, fixed=fixed) for i in images}
    assert len(keys) == len(set(images))  # one key per distinct image
    image = images[0]
    key = measure_thumbs.thumb_key(plan, renderer, image, fixed=fixed)
    assert measure_thumbs.thumb_key(plan, renderer, image, max_px=128, fixed=fixed) != key
    assert measure_thumbs.thumb_key(plan, renderer, image, quality=90, fixed=fixed) != key
    assert measure_thumbs.thumb_key(plan, renderer, image, fixed={**fixed, "packages": {"pillow": "0"}}) != key
    assert measure_thumbs.thumb_key(plan, renderer, image) == key


# ------------------------------------------------------------------------------ the entries


def test_sealed_entries_round_trip_and_reject_a_moved_entry(tmp_path):
    entries = pieces.piece_entries(tmp_path, "derived")
    key, other = "ab" * 32, "cd" * 32
    assert entries.get(key) is None
    entries.put(key, b"payload")
    assert entries.get(key) == b"payload"
    assert entries.path(key) == tmp_path / "report_pieces" / "derived" / "ab" / f"{key}.bin"
    entries.path(other).parent.mkdir(parents=True)
    entries.path(key).rename(entries.path(other))  # an entry under another key's name
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert entries.get(other) is None
    assert any("written for key" in str(w.message) for w in caught)
    assert not entries.path(other).exists()
    with pytest.raises(ValueError, match="malformed"):
        entries.path("../x")


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z]{1,8}(/[a-z0-9_]{1,8}(\.[a-z]{1,3})?){0,2}", fullmatch=True), st.binary(max_size=64)))
def test_file_bundles_round_trip(files):
    assert pieces.unpack_files(pieces.pack_files(files)) == files


def test_a_bundle_cannot_write_outside_its_directory():
    payload = pieces.pack_files({"../evil": b"x"})
    with pytest.raises(ValueError, match="leaves its directory"):
        pieces.unpack_files(payload)


# ------------------------------------------------------------------------------ render host


def test_the_blender_probe_runs_once_per_install_and_machine(tmp_path, monkeypatch):
    import importlib.util

    from harness.render import host

    if importlib.util.find_spec("bpy") is None:
        pytest.skip("bpy is not installed (the render extra): nothing to probe")
    calls = []
    facts = {"version": "5.0.1", "build_hash": "abc", "cycles_cpu_kernel": "AVX2"}
    monkeypatch.setattr(host, "blender_build", lambda python: calls.append(python) or dict(facts))
    assert host.blender_build_cached(tmp_path) == facts
    assert host.blender_build_cached(tmp_path) == facts
    assert len(calls) == 1
    (entry,) = tmp_path.glob("*.json")
    entry.write_bytes(entry.read_bytes().replace(b"AVX2", b"AVX9"))
    with pytest.warns(cacheseal.CacheCorruptionWarning, match="render host"):
        assert host.blender_build_cached(tmp_path) == facts
    assert len(calls) == 2
    assert host.render_host("cpu", tmp_path)["blender"] == facts and len(calls) == 2


def test_a_failed_blender_probe_is_not_cached(tmp_path, monkeypatch):
    from harness.render import host

    calls = []
    monkeypatch.setattr(host, "blender_build", lambda python: calls.append(python) or {"error": "no bpy"})
    assert host.blender_build_cached(tmp_path) == {"error": "no bpy"}
    assert host.blender_build_cached(tmp_path) == {"error": "no bpy"}
    assert len(calls) == 2 and not list(tmp_path.rglob("*.json"))
