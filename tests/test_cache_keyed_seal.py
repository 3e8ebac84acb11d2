"""Keyed seals (HMAC-SHA256 under the user's ``T3D_AUDIT_CACHE_KEY``): a forger who knows the
plain seal scheme cannot make an entry pass, and an entry sealed with one key fails without it
or with another (docs/cache.md, threat model)."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core import cacheseal
from harness.core.cacheseal import CacheCorruptionWarning, CacheKeyError, CorruptEntry
from harness.core.hashing import canonical_json, sha256_bytes
from harness.protocol.configurations import RenderConfig
from harness.protocol.records import read_records, write_records
from harness.render.cache import RenderCache
from harness.testing import TinySpec
from tests._audit_project import tiny_session

pytest_plugins = ["pytester"]

KEY_A = "a-secret-of-at-least-16-bytes"
KEY_B = "another-secret-of-16+-bytes"
ENTRY = "scores/id/" + "ab" * 32


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv(cacheseal.KEY_ENV, raising=False)
    monkeypatch.delenv(cacheseal.KEY_FILE_ENV, raising=False)


def forge(key: str, payload: bytes) -> bytes:
    """What a writer who knows the plain scheme (and not the secret) writes."""
    return canonical_json({"format": cacheseal.FORMAT, "key": key, "sha256": sha256_bytes(payload),
                           "size": len(payload)}) + b"\n" + payload  # fmt: skip


def test_keyed_seal_is_the_hmac_of_the_plain_seal(monkeypatch):
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_A)
    head = json.loads(cacheseal.seal("k", b"payload"))
    plain = {k: v for k, v in head.items() if k != "hmac"}
    want = hmac.new(KEY_A.encode(), canonical_json(plain), hashlib.sha256).hexdigest()
    assert head["hmac"] == want
    assert cacheseal.unseal(cacheseal.sealed("k", b"payload"), "k") == b"payload"


def test_plain_seals_still_work_without_a_key():
    data = cacheseal.sealed(ENTRY, b"x")
    assert b"hmac" not in data
    assert cacheseal.unseal(data, ENTRY) == b"x"
    assert cacheseal.unseal(forge(ENTRY, b"y"), ENTRY) == b"y"  # what a plain seal cannot stop


def test_forged_plain_seal_fails_with_a_key(monkeypatch):
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_A)
    with pytest.raises(CorruptEntry, match="no keyed seal"):
        cacheseal.unseal(forge(ENTRY, b'{"cap":0.99}'), ENTRY)


def test_keyed_entry_fails_without_the_key_or_with_another(monkeypatch):
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_A)
    data = cacheseal.sealed(ENTRY, b"x")
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_B)
    with pytest.raises(CorruptEntry, match="does not verify"):
        cacheseal.unseal(data, ENTRY)
    monkeypatch.delenv(cacheseal.KEY_ENV)
    with pytest.raises(CorruptEntry, match="sealed with a key"):
        cacheseal.unseal(data, ENTRY)


def test_forged_hmac_field_fails(monkeypatch):
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_A)
    head = json.loads(cacheseal.seal(ENTRY, b"x"))
    head["hmac"] = "0" * 64
    with pytest.raises(CorruptEntry, match="does not verify"):
        cacheseal.unseal(canonical_json(head) + b"\nx", ENTRY)


@settings(max_examples=150, deadline=None)
@given(payload=st.binary(max_size=64), where=st.floats(0, 1, exclude_max=True), flip=st.integers(1, 255),
       other=st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
                     min_size=16, max_size=40))  # fmt: skip
def test_keyed_seal_detects_any_byte_change_and_any_other_key(payload, where, flip, other):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(cacheseal.KEY_ENV, KEY_A)
        data = bytearray(cacheseal.sealed(ENTRY, payload))
        data[int(where * len(data))] ^= flip
        with pytest.raises(CorruptEntry):
            cacheseal.unseal(bytes(data), ENTRY)
        good = cacheseal.sealed(ENTRY, payload)
        if other != KEY_A:
            mp.setenv(cacheseal.KEY_ENV, other)
            with pytest.raises(CorruptEntry):
                cacheseal.unseal(good, ENTRY)


def test_key_file(monkeypatch, tmp_path):
    path = tmp_path / "key"
    path.write_text(KEY_A + "\n")
    monkeypatch.setenv(cacheseal.KEY_FILE_ENV, str(path))
    data = cacheseal.sealed(ENTRY, b"x")
    monkeypatch.delenv(cacheseal.KEY_FILE_ENV)
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_A)  # the same secret given the other way
    assert cacheseal.unseal(data, ENTRY) == b"x"


def test_unusable_keys_are_typed_errors(monkeypatch, tmp_path):
    monkeypatch.setenv(cacheseal.KEY_ENV, "short")
    with pytest.raises(CacheKeyError, match="fewer than 16"):
        cacheseal.seal(ENTRY, b"x")
    monkeypatch.delenv(cacheseal.KEY_ENV)
    monkeypatch.setenv(cacheseal.KEY_FILE_ENV, str(tmp_path / "absent"))
    with pytest.raises(CacheKeyError, match="cannot read the cache key file"):
        cacheseal.seal(ENTRY, b"x")


def test_render_meta_is_keyed(monkeypatch, tmp_path):
    cache = RenderCache(tmp_path)
    cfg = RenderConfig(resolution_px=32, samples=2)
    key = cache.key("a" * 64, cfg)
    image = np.random.default_rng(1).integers(0, 256, (8, 8, 4), dtype=np.uint8)
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_A)
    cache.put(key, image)
    np.testing.assert_array_equal(cache.get(key), image)
    meta = cache.entry_dir(key) / "meta.json"
    doc = json.loads(meta.read_bytes())
    assert "meta_hmac" in doc
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_B)
    with pytest.warns(CacheCorruptionWarning, match="does not verify"):
        assert cache.get(key) is None
    # a forger rewrites meta.json for another PNG with a recomputed meta_sha256 and no hmac
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_A)
    cache.put(key, image)
    from harness.core.hashing import sha256_json

    doc = json.loads(meta.read_bytes())
    del doc["meta_hmac"]
    doc.pop("meta_sha256")
    doc["meta_sha256"] = sha256_json(doc)
    meta.write_bytes(canonical_json(doc))
    with pytest.warns(CacheCorruptionWarning, match="no keyed seal"):
        assert cache.get(key) is None


def _forge_records(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    """Edit one score of the cached records and recompute its plain sidecar seal."""
    [path] = (tmp_path / "cache" / "records").glob("*.csv")
    original = read_records(path)
    edited = original.copy()
    edited.loc[0, "score"] = float(edited.loc[0, "score"]) + 3.0
    write_records(edited, path)
    head = json.loads(cacheseal.sidecar(path).read_bytes())
    data = path.read_bytes()
    forged = {"format": head["format"], "key": head["key"], "sha256": sha256_bytes(data), "size": len(data)}
    cacheseal.sidecar(path).write_bytes(canonical_json(forged))
    return path, original


def test_forged_records_entry_is_served_with_plain_seals(tmp_path):
    """A forged records entry: without a key the forgery passes (hence --rescore)."""
    session = tiny_session(tmp_path, [TinySpec("tiny-grid")])
    session.record_cache.records("tiny-grid")
    _forge_records(tmp_path)
    served = tiny_session(tmp_path, [TinySpec("tiny-grid")]).record_cache.records("tiny-grid")
    assert served.loc[0, "score"] == pytest.approx(read_records(next((tmp_path / "cache" / "records").glob("*.csv"))).loc[0, "score"])


def test_forged_records_entry_is_discarded_with_a_key(monkeypatch, tmp_path):
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_A)
    clean = tiny_session(tmp_path, [TinySpec("tiny-grid")]).record_cache.records("tiny-grid")
    _forge_records(tmp_path)
    session = tiny_session(tmp_path, [TinySpec("tiny-grid")])
    with pytest.warns(CacheCorruptionWarning, match="records cache entry .*no keyed seal"):
        pd.testing.assert_frame_equal(session.record_cache.records("tiny-grid"), clean)
    assert session.worker_facts()["cache_discarded"] == {"records": 1}


def test_cache_sealed_with_one_key_is_recomputed_under_another(monkeypatch, tmp_path):
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_A)
    clean = tiny_session(tmp_path, [TinySpec("tiny-grid")]).record_cache.records("tiny-grid")
    monkeypatch.setenv(cacheseal.KEY_ENV, KEY_B)
    session = tiny_session(tmp_path, [TinySpec("tiny-grid")])
    with pytest.warns(CacheCorruptionWarning):
        pd.testing.assert_frame_equal(session.record_cache.records("tiny-grid"), clean)
    assert session.worker_facts()["cache_discarded"].get("records") == 1


def test_an_unusable_key_is_a_usage_error_before_any_work(pytester, monkeypatch):
    from tests._audit_project import make_project, run_audit

    make_project(pytester)
    monkeypatch.setenv(cacheseal.KEY_FILE_ENV, str(pytester.path / "no-such-key"))
    result = run_audit(pytester, "badkey")
    assert result.ret == 4
    err = result.stderr.str()
    assert "cannot read the cache key file" in err and "Traceback" not in err
    assert not (pytester.path / "cache-badkey" / "records").exists()  # nothing was measured


def test_ray_workers_get_the_key_settings(monkeypatch):
    from harness.backends.ray.cluster import forwarded_env

    monkeypatch.setenv(cacheseal.KEY_FILE_ENV, "/keys/cache.key")
    assert forwarded_env()[cacheseal.KEY_FILE_ENV] == "/keys/cache.key"
