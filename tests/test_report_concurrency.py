"""Two pytest runs writing one report directory at once, and a full disk
while the report is written (item 6).

The concurrent runs are two real pytest processes on the tiny audit project with the same
``--audit-report-dir`` and so the same derived run id. A conftest makes both enter
``write_report`` together (a file barrier) and slows the page write, so their writes overlap
every time instead of by luck.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.report.validation import validate_report
from tests._audit_project import comparable_files, make_project, report_dir, run_audit

pytest_plugins = ["pytester"]

RACE = """

import os
import time
from pathlib import Path

import harness.report.html.page as _page
import harness.report.writer as _writer

_write_report, _write_html = _writer.write_report, _page.write_html
_BARRIER = Path(os.environ["T3D_TEST_BARRIER"])


def _together(*args, **kwargs):
    _BARRIER.mkdir(exist_ok=True)
    (_BARRIER / str(os.getpid())).touch()
    deadline = time.monotonic() + 60
    while len(list(_BARRIER.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    return _write_report(*args, **kwargs)


def _slow_html(*args, **kwargs):
    time.sleep(1.0)
    return _write_html(*args, **kwargs)


_writer.write_report = _together
_page.write_html = _slow_html
"""


def _popen(root: Path, tag: str, env: dict[str, str], *workers: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "pytest", "audit_tests", "-p", "no:cacheprovider", *workers,
           "--audit-cache-dir", str(root / "cache"), "--audit-report-dir", str(root / "reports-shared"),
           f"--junitxml={root / f'{tag}.xml'}"]  # fmt: skip
    return subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow
def test_two_runs_writing_one_report_directory(pytester: pytest.Pytester):
    root = make_project(pytester)
    run_audit(pytester, "alone")  # the report one run writes on its own, for comparison
    alone = report_dir(root, "alone")
    with (root / "conftest.py").open("a") as handle:
        handle.write(RACE)
    env = {**os.environ, "T3D_TEST_BARRIER": str(root / "barrier"), "PYTHONPATH": os.pathsep.join(sys.path)}
    # one lone process and one xdist run (its controller writes the report)
    procs = [_popen(root, "a", env, "-n", "0"), _popen(root, "b", env, "-n", "2", "--dist", "loadgroup")]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    for proc, out in zip(procs, outputs, strict=True):
        assert "Traceback" not in out and "INTERNALERROR" not in out, out[-3000:]
        assert proc.returncode == 0, out[-3000:]
    assert len(list((root / "barrier").iterdir())) == 2  # both really wrote at once
    shared = root / "reports-shared"
    assert sorted(p.name for p in shared.iterdir() if not p.name.startswith(".")) == [alone.name]
    assert [p.name for p in shared.iterdir() if p.name.startswith(".")] == [f".{alone.name}.lock"]
    report = shared / alone.name
    assert validate_report(report) == []
    assert comparable_files(report) == comparable_files(alone)


def test_full_disk_while_writing_the_report_is_one_clear_error(pytester: pytest.Pytester):
    """ENOSPC from a write inside the report directory: one message naming the directory, exit
    1, no traceback, and no report (nor temp directory) left behind."""
    root = make_project(pytester)
    with (root / "conftest.py").open("a") as handle:
        handle.write("""

import errno
import harness.report.writer as _writer

_card = _writer.write_card


def _full(card, path):
    raise OSError(errno.ENOSPC, "No space left on device", str(path))


_writer.write_card = _full
""")
    result = run_audit(pytester, "full")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 1, out[-3000:]
    assert "Traceback" not in out and "INTERNALERROR" not in out, out[-3000:]
    reports = root / "reports-full"
    lines = [line for line in out.splitlines() if "report not written" in line]
    assert len(lines) == 1, out[-3000:]
    assert "No space left on device" in lines[0] and "ENOSPC" in lines[0]
    assert str(reports) in lines[0] and "cards" in lines[0]
    assert [p.name for p in reports.iterdir() if not p.name.endswith(".lock")] == []  # no temp dir either


def test_disk_error_message_names_the_directory(tmp_path):
    from harness.run.aggregate import disk_error

    exc = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "r" / ".tmp-x" / "summary.json"))
    text = disk_error(exc, tmp_path / "r")
    assert text.startswith(f"cannot write {tmp_path / 'r' / '.tmp-x'}: No space left on device (ENOSPC)")
    assert "nothing was published" in text
    assert str(tmp_path / "r") in disk_error(OSError(errno.EIO, "I/O error"), tmp_path / "r")


def test_full_disk_under_the_cache_fails_each_test_in_one_line(pytester: pytest.Pytester):
    """ENOSPC while the records cache is written: every audit test that needs the records
    fails with one line naming the cache directory, the report is not written (one line), and
    nothing is left half-written."""
    root = make_project(pytester)
    with (root / "conftest.py").open("a") as handle:
        handle.write("""

import errno
import harness.protocol.records as _records


def _full(frame, path, *args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device", str(path))


_records.write_records = _full
""")
    result = run_audit(pytester, "fullcache", "-x")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret in (1, 4), out[-3000:]  # 4: with -x no check ran, an empty gate
    assert "During handling" not in out and "Errno 28" not in out, out[-3000:]
    assert "Traceback" not in out and "INTERNALERROR" not in out, out[-3000:]
    cache = root / "cache-fullcache" / "records"
    assert f"t3d-audit: cannot write {cache}: No space left on device (ENOSPC)" in out
    assert list((root / "reports-fullcache").glob("smoke-*")) == []
