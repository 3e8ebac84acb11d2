"""Audit runs over a damaged cache (pytester subprocesses, tiny numpy renderer and evaluators).

A truncated summaries file once crashed the run with INTERNALERROR and an edited records file
changed the verdicts. Now both are discarded and recomputed, with ``-n 0`` and ``-n 2``: the
run passes, its report equals a clean run's, and the terminal summary counts the entries.
"""

from __future__ import annotations

import shutil

from harness.protocol.records import read_records, write_records
from tests._audit_project import comparable_files, make_project, report_dir, run_audit

pytest_plugins = ["pytester"]


def damage(cache) -> int:
    """Truncate every summaries file and forge one score in one records file (still valid CSV).

    Returns how many summaries files there were: each is read again, so each is discarded.
    """
    summaries = sorted((cache / "summaries").glob("*.json"))
    for path in summaries:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    records = sorted((cache / "records").glob("*.csv"))[0]
    edited = read_records(records)
    edited.loc[0, "score"] += 50.0
    write_records(edited, records)
    return len(summaries)


def test_truncated_summary_and_edited_records_are_recomputed(pytester):
    root = make_project(pytester)
    clean = run_audit(pytester, "clean", "-n", "0")
    assert clean.ret == 0, clean.stdout.str()[-2000:]
    assert "corrupt entries" not in clean.stdout.str()
    expected = comparable_files(report_dir(root, "clean"))
    for tag, xdist in (("n0", ["-n", "0"]), ("n2", ["-n", "2", "--dist", "loadgroup"])):
        shutil.copytree(root / "cache-clean", root / f"cache-{tag}")
        n = damage(root / f"cache-{tag}")
        result = run_audit(pytester, tag, *xdist)
        out = result.stdout.str()
        assert "INTERNALERROR" not in out + result.stderr.str(), tag
        assert result.ret == 0, out[-3000:]
        result.stdout.fnmatch_lines(
            [f"*cache: {n + 1} corrupt entries discarded and recomputed (records 1, summaries {n})*"]
        )
        assert "CacheCorruptionWarning" in out  # pytest's warnings summary names them too
        assert comparable_files(report_dir(root, tag)) == expected, tag
