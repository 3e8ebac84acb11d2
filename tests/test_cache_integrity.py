"""Every cache read is verified: edited, truncated, swapped or unsealed entries are never served.

Covers the four caches of an audit run (render, score, records, summaries) plus the
text-embedding cache: a bad entry is discarded, recomputed to the value a clean cache gives,
warned about (``CacheCorruptionWarning``) and counted in the session's worker facts; a
Hypothesis property flips any one byte of any entry file and expects the read to notice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core import cacheseal
from harness.core.cacheseal import CacheCorruptionWarning, CorruptEntry
from harness.evaluators.cache import CachedEvaluator, EmbeddingCache, ScoreCache
from harness.protocol.configurations import RenderConfig
from harness.protocol.records import read_records, write_records
from harness.render.cache import RenderCache
from harness.run.record_cache import _records_ok
from harness.run.session import AuditSession
from harness.run.summary_cache import _read_summary
from harness.testing import TinySpec
from tests._audit_project import tiny_session

CFG = RenderConfig(resolution_px=32, samples=2)


def _image(seed: int, size: int = 8) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (size, size, 4), dtype=np.uint8)


# ------------------------------------------------------------------------------ seals


def test_seal_round_trip_and_key_binding():
    data = cacheseal.sealed("k1", b'{"a":1}')
    assert cacheseal.unseal(data, "k1") == b'{"a":1}'
    with pytest.raises(CorruptEntry, match="written for key 'k1'"):
        cacheseal.unseal(data, "k2")
    with pytest.raises(CorruptEntry, match="no seal line"):
        cacheseal.unseal(b'{"a":1}', "k1")  # an entry from before seals existed
    with pytest.raises(CorruptEntry, match="sha256"):
        cacheseal.unseal(data[:-2] + b"2}", "k1")


@settings(max_examples=200, deadline=None)
@given(
    payload=st.binary(max_size=64),
    where=st.floats(0, 1, exclude_max=True),
    flip=st.integers(1, 255),
)
def test_any_single_byte_change_of_a_sealed_file_is_detected(payload, where, flip):
    data = bytearray(cacheseal.sealed("scores/id/" + "ab" * 32, payload))
    i = int(where * len(data))
    data[i] ^= flip
    with pytest.raises(CorruptEntry):
        cacheseal.unseal(bytes(data), "scores/id/" + "ab" * 32)


def test_discarded_warns_and_counts():
    before = cacheseal.discarded_counts().get("test-kind", 0)
    with pytest.warns(CacheCorruptionWarning, match="test-kind cache entry x failed verification"):
        cacheseal.discarded("test-kind", "x", "because")
    assert cacheseal.discarded_counts()["test-kind"] == before + 1


# ------------------------------------------------------------------------------ score cache


def test_edited_score_segment_is_discarded_and_rescored(tmp_path):
    from tests._counting_evaluator import CountingEvaluator, img

    inner = CountingEvaluator()
    wrapped = CachedEvaluator(inner, ScoreCache(tmp_path))
    images, captions = [img(10)], ["a red chair"]
    clean = wrapped.score(images, captions)[0].score
    [segment] = (tmp_path / "scores").rglob("*.json")
    text = segment.read_text()
    segment.write_text(text.replace(repr(clean), repr(clean + 5.0)))  # a plausible forgery
    assert segment.read_text() != text
    with pytest.warns(CacheCorruptionWarning, match="score cache entry"):
        again = wrapped.score(images, captions)[0]
    assert again.score == clean and again.metadata.get("cached") != "true"
    assert inner.pairs == 2  # scored by the model again, not served from the cache
    assert wrapped.score(images, captions)[0].metadata.get("cached") == "true"  # re-published


def test_segment_moved_to_another_image_is_not_served(tmp_path):
    cache = ScoreCache(tmp_path)
    path = cache.put("id", "ab" * 32, {"x": 1.0})
    other = tmp_path / "scores" / "id" / "cd" / ("cd" * 32) / path.name
    other.parent.mkdir(parents=True)
    other.write_bytes(path.read_bytes())
    with pytest.warns(CacheCorruptionWarning, match="written for key"):
        assert cache.get("id", "cd" * 32, ["x"]) == {}
    assert not other.exists() and cache.get("id", "ab" * 32, ["x"]) == {"x": 1.0}


def test_corrupt_text_embedding_is_discarded(tmp_path):
    EmbeddingCache("idh", tmp_path).put_many({"a room": np.arange(4, dtype=np.float32)})
    [path] = (tmp_path / "text_emb").rglob("*.npy")
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.warns(CacheCorruptionWarning, match="text-embedding cache entry"):
        assert EmbeddingCache("idh", tmp_path).get_many(["a room"]) == {}
    assert not path.exists()


# ------------------------------------------------------------------------------ render cache


def test_swapped_render_directories_are_detected_and_rerendered(tmp_path):
    cache = RenderCache(tmp_path)
    ka, kb = cache.key("a" * 64, CFG), cache.key("b" * 64, CFG)
    cache.get_or_render(ka, lambda: _image(1))
    cache.get_or_render(kb, lambda: _image(2))
    da, db = cache.entry_dir(ka), cache.entry_dir(kb)
    spare = tmp_path / "spare"
    os.rename(da, spare)
    os.rename(db, da)
    os.rename(spare, db)
    with pytest.warns(CacheCorruptionWarning, match="render cache entry .* written for key"):
        assert cache.get(ka) is None
    calls = []
    with pytest.warns(CacheCorruptionWarning):
        out = cache.get_or_render(kb, lambda: calls.append(1) or _image(2))
    np.testing.assert_array_equal(out, _image(2))
    assert calls == [1]  # kb's directory held ka's render: discarded, rendered again


def test_render_meta_edit_and_unsealed_meta_are_detected(tmp_path):
    cache = RenderCache(tmp_path)
    key = cache.key("a" * 64, CFG)
    cache.put(key, _image(1), {"scene_id": "s"})
    meta = cache.entry_dir(key) / "meta.json"
    meta.write_bytes(meta.read_bytes().replace(b'"scene_id":"s"', b'"scene_id":"t"'))
    with pytest.warns(CacheCorruptionWarning, match="meta_sha256"):
        assert cache.get(key) is None
    cache.put(key, _image(1), {"scene_id": "s"})
    doc = json.loads(meta.read_text())
    del doc["meta_sha256"]  # an entry written before meta.json carried its own digest
    meta.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")))
    with pytest.warns(CacheCorruptionWarning, match="no meta_sha256"):
        assert cache.get(key) is None


def test_put_over_a_corrupt_entry_replaces_it(tmp_path):
    """``put`` holds the key's lock while it checks: a bad entry must not make it wait forever."""
    cache = RenderCache(tmp_path)
    key = cache.key("a" * 64, CFG)
    cache.put(key, _image(1))
    (cache.entry_dir(key) / "image.png").write_bytes(b"not a png")
    with pytest.warns(CacheCorruptionWarning):
        cache.put(key, _image(1))
    np.testing.assert_array_equal(cache.get(key), _image(1))


# ------------------------------------------------------------------------------ property: any cache


def _flip(path: Path, where: float, flip: int) -> bytes:
    original = path.read_bytes()
    data = bytearray(original)
    data[int(where * len(data))] ^= flip
    path.write_bytes(bytes(data))
    return original


def _records_entry(root: Path) -> tuple[Path, str]:
    frame = pd.DataFrame(
        {
            "evaluator": ["e", "e"], "generator": ["g", "g"], "prompt_id": ["p", "p"],
            "scene_sha256": ["0" * 64, "0" * 64], "factor": ["camera", "camera"],
            "level": ["a", "b"], "caption": ["x", "y"], "score": [0.25, 6.5],
            "status": ["ok", "ok"], "error": ["", ""],
        }
    )
    path = write_records(frame, root / "records" / "k.csv", validate=False)
    cacheseal.sidecar(path).write_bytes(cacheseal.seal("rk", path.read_bytes()))
    return path, "rk"


@pytest.mark.parametrize(
    "kind", ["render-png", "render-meta", "score", "records-csv", "records-seal", "summary"]
)
def test_any_single_byte_corruption_of_a_cached_entry_is_detected(tmp_path_factory, kind):
    root = tmp_path_factory.mktemp(kind)
    if kind.startswith("render"):
        cache = RenderCache(root)
        key = cache.key("a" * 64, CFG)
        name = "image.png" if kind == "render-png" else "meta.json"
        target = cache.entry_dir(key) / name

        def setup() -> None:
            cache.put(key, _image(3), {"scene_id": "s", "inputs": {"x": 1.5}})

        def detected() -> bool:
            return cache.get(key) is None
    elif kind == "score":
        scores = ScoreCache(root)
        target = scores.put("id", "ab" * 32, {"a chair": 0.3125, "a bed": -1.5})

        def setup() -> None:
            scores.put("id", "ab" * 32, {"a chair": 0.3125, "a bed": -1.5})

        def detected() -> bool:
            return scores.get("id", "ab" * 32, ["a chair", "a bed"]) == {}
    elif kind.startswith("records"):
        csv_path, rkey = _records_entry(root)
        target = csv_path if kind == "records-csv" else cacheseal.sidecar(csv_path)

        def setup() -> None:
            _records_entry(root)

        def detected() -> bool:
            return not _records_ok(csv_path, rkey, discard=True)
    else:
        target = root / "summaries" / "k.json"
        payload = json.dumps({"evaluators": {"e": {"peak_rho": 6.64, "w": float("nan")}}}).encode()

        def setup() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(cacheseal.sealed("sk", payload))

        def detected() -> bool:
            return _read_summary(target, "sk", discard=True) is None

    @settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(where=st.floats(0, 1, exclude_max=True), flip=st.integers(1, 255))
    def check(where: float, flip: int) -> None:
        setup()
        assert not detected()  # the intact entry is served
        _flip(target, where, flip)
        with pytest.warns(CacheCorruptionWarning):
            assert detected()
        assert not target.exists()  # discarded

    check()


# ------------------------------------------------------------------------------ records and summaries


def make_session(tmp_path: Path) -> AuditSession:
    return tiny_session(tmp_path, [TinySpec("tiny-grid")])


@pytest.fixture()
def clean(tmp_path):
    """A session whose records and summary are cached, and what it computed."""
    session = make_session(tmp_path)
    return tmp_path, session.record_cache.records("tiny-grid"), session.summary_cache.summary("tiny-grid")


def test_edited_records_file_is_discarded_and_remeasured(clean):
    tmp_path, records, summary = clean
    [path] = (tmp_path / "cache" / "records").glob("*.csv")
    edited = read_records(path)
    edited.loc[0, "score"] += 3.0  # one edited score, still a valid records file
    write_records(edited, path)
    session = make_session(tmp_path)
    with pytest.warns(CacheCorruptionWarning, match="records cache entry"):
        pd.testing.assert_frame_equal(session.record_cache.records("tiny-grid"), records)
    assert session.summary_cache.summary("tiny-grid") == summary
    assert session.worker_facts()["cache_discarded"] == {"records": 1}
    assert session.record_cache.measure_stats["tiny-grid"].images > 0  # measured again


@pytest.mark.parametrize("damage", ["edit", "truncate"])
def test_bad_summaries_file_is_discarded_and_recomputed(clean, damage):
    tmp_path, _, summary = clean
    [path] = (tmp_path / "cache" / "summaries").glob("*.json")
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    else:  # change one digit of a number in the evaluator's entry
        at = data.index(b'"evaluators"')
        i = next(j for j in range(at, len(data)) if data[j : j + 1].isdigit())
        path.write_bytes(data[:i] + (b"7" if data[i : i + 1] != b"7" else b"3") + data[i + 1 :])
    session = make_session(tmp_path)
    with pytest.warns(CacheCorruptionWarning, match="summaries cache entry"):
        assert session.summary_cache.summary("tiny-grid") == summary
    assert session.worker_facts()["cache_discarded"] == {"summaries": 1}
    assert make_session(tmp_path).summary_cache.summary("tiny-grid") == summary  # re-published, sound


def test_clean_cache_reports_no_discards(clean):
    tmp_path, records, summary = clean
    session = make_session(tmp_path)
    pd.testing.assert_frame_equal(session.record_cache.records("tiny-grid"), records)
    assert session.summary_cache.summary("tiny-grid") == summary
    assert session.worker_facts()["cache_discarded"] == {}
    assert "tiny-grid" not in session.record_cache.measure_stats  # nothing measured: all from the cache


def test_the_summary_key_follows_the_human_statistics_the_engine_reads(monkeypatch):
    """The metric engine reads human agreement draws from ``human/protocol_dependence.py``: a
    change there makes cached summaries anew, as a change under ``stats/`` does."""
    from harness.run import summary_cache

    real = summary_cache.sha256_file
    before = summary_cache._stats_code_hash()
    monkeypatch.setattr(summary_cache, "sha256_file", lambda p: "changed" if Path(p).name == "protocol_dependence.py"
                        else real(p))
    assert summary_cache._stats_code_hash() != before


def test_the_report_piece_key_covers_every_report_module_in_subpackages():
    """The page is built in ``report/html/``: its modules are part of the code a piece is keyed
    on, as are the modules directly under ``report/``."""
    from harness.report.pieces import report_sources

    names = {p.relative_to(Path(__file__).parents[1] / "harness" / "report").as_posix()
             for p in report_sources() if "report" in p.parts}  # fmt: skip
    assert {"html/page.py", "html/strips.py", "html/data.py", "html/overview.py", "writer.py"} <= names
