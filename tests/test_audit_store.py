"""``--audit-store``: pytest only reads a store a cluster filled; what is missing is reported
together with the command that fills it, and computed here only with
``--audit-store-fill=local``."""

from __future__ import annotations

import pytest

from harness.core.errors import AuditError
from harness.store import open_store
from harness.store.stores import StoreIncomplete
from harness.testing import TinySpec
from tests._audit_project import comparable_files, make_project, report_dir, run_audit, tiny_session
from tests._distributed import moto_s3

pytest_plugins = ["pytester"]


def _session(tmp_path, tag, store, fill="none"):
    return tiny_session(tmp_path, [TinySpec("tiny-grid"), TinySpec("tiny-pairs", grid=False)],
                        store=store, store_fill=fill, cache_dir=tmp_path / f"cache-{tag}")  # fmt: skip


def test_a_read_only_store_reports_what_is_missing_and_how_to_fill_it(tmp_path):
    url = (tmp_path / "store").as_uri()
    session = _session(tmp_path, "a", url)
    with pytest.raises(StoreIncomplete) as err:
        session.record_cache.records("tiny-grid")
    text = err.value.render()
    assert "score pairs that evaluator tiny-grid needs" in text
    assert f"t3d-audit materialize --profile smoke --store {url}" in text
    assert "--audit-store-fill=local" in text
    assert open_store(url).list("scores") == []  # nothing written
    assert not list((tmp_path / "cache-a").rglob("*.csv"))  # no records from a partial store


def test_fill_local_publishes_then_a_fresh_reader_gets_identical_records(tmp_path):
    url = (tmp_path / "store").as_uri()
    filler = _session(tmp_path, "fill", url, fill="local")
    filled = {e: filler.record_cache.records(e) for e in ("tiny-grid", "tiny-pairs")}
    assert filler.record_cache.measure_stats["tiny-grid"].scored_pairs > 0
    assert open_store(url).list("scores")
    reader = _session(tmp_path, "read", url)
    for evaluator, frame in filled.items():
        assert reader.record_cache.records(evaluator).equals(frame)
        stats = reader.record_cache.measure_stats[evaluator]
        assert stats.scored_pairs == 0 and not stats.model_loaded
        assert stats.cached_pairs == filler.record_cache.measure_stats[evaluator].scored_pairs


def test_store_options_are_validated_at_configure_time(pytester):
    make_project(pytester)
    bad_fill = pytester.runpytest("audit_tests", "--audit-store=store",
                                             "--audit-store-fill=maybe")  # fmt: skip
    assert bad_fill.ret == 4
    bad_fill.stderr.fnmatch_lines(["*--audit-store-fill must be one of none, local*"])
    orphan = pytester.runpytest("audit_tests", "--audit-store-fill=local")
    assert orphan.ret == 4
    orphan.stderr.fnmatch_lines(["*--audit-store-fill needs --audit-store*"])
    scheme = pytester.runpytest("audit_tests", "--audit-store=nosuch://x/y")
    assert scheme.ret == 4
    scheme.stderr.fnmatch_lines(["*unknown scheme 'nosuch'*"])


@pytest.mark.slow
def test_pytest_reads_an_s3_store_filled_elsewhere(pytester):
    """The README's flow on a moto S3 server: a read-only run fails naming the fill command;
    a filling run publishes; a fresh run (-n 2, empty local cache) only reads, same report."""
    root = make_project(pytester)
    with moto_s3() as base:
        url = f"{base}/audit"
        missing = run_audit(pytester, "missing", "-n", "0", f"--audit-store={url}")
        assert missing.ret != 0  # 4: no audit check could reach an assertion
        out = missing.stdout.str()
        assert "the store lacks" in out and "score pairs that evaluator tiny-grid needs" in out
        assert f"t3d-audit materialize --profile smoke --store {url}" in out
        filled = run_audit(pytester, "fill", "-n", "0", f"--audit-store={url}", "--audit-store-fill=local")
        assert filled.ret == 0, filled.stdout.str()[-3000:]
        read = run_audit(pytester, "read", "-n", "2", f"--audit-store={url}")
        assert read.ret == 0, read.stdout.str()[-3000:]
    a, b = comparable_files(report_dir(root, "fill")), comparable_files(report_dir(root, "read"))
    assert a == b


def test_a_store_url_needs_its_library(monkeypatch):
    from harness.store.stores import FsspecStore, StoreError

    with pytest.raises((StoreError, AuditError), match=r"cannot open store|needs"):
        FsspecStore("nosuchscheme://bucket/x")
