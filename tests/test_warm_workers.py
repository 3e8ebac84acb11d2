"""``-n auto`` (the ``t3d-audit audit`` default) starts xdist workers only when something is to
be measured: a warm run, every selected evaluator's records already cached, runs in the one
process (workers would each load the scenes, plan and records again for cached statistics) and
writes the same report (pytester subprocesses on the tiny audit project)."""

from __future__ import annotations

import re

import pytest

from tests._audit_project import comparable_files, make_project, report_dir, run_audit

pytest_plugins = ["pytester"]

WORKERS = re.compile(r"created: \d+/\d+ workers?")


def outcomes(result: pytest.RunResult) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k in ("passed", "failed", "skipped")}


@pytest.mark.slow
def test_auto_starts_workers_only_while_records_are_missing(pytester, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    root = make_project(pytester)
    cold = run_audit(pytester, "a", "-n", "auto", "--dist", "loadgroup")
    assert WORKERS.search(cold.stdout.str()), cold.stdout.str()[-2000:]
    cold_files = comparable_files(report_dir(root, "a"))
    warm = run_audit(pytester, "a", "-n", "auto", "--dist", "loadgroup")
    assert not WORKERS.search(warm.stdout.str()), "a warm run started workers"
    warm.stdout.fnmatch_lines(["*t3d-audit summary*", "*report: *reports-a*"])
    assert outcomes(warm) == outcomes(cold)
    assert comparable_files(report_dir(root, "a")) == cold_files
    # an explicit count, and xdist's own override of auto, still start workers
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "2")
    assert WORKERS.search(run_audit(pytester, "a", "-n", "auto", "--dist", "loadgroup").stdout.str())
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS")
    assert WORKERS.search(run_audit(pytester, "a", "-n", "2", "--dist", "loadgroup").stdout.str())


def test_records_cached_measures_nothing(tmp_path, monkeypatch):
    from harness.testing import TinySpec
    from tests._audit_project import tiny_session

    session = tiny_session(tmp_path, [TinySpec("tiny-grid")])
    import harness.measure as measure

    assert session.records_cached("tiny-grid") is False
    session.records_file("tiny-grid")  # measured once
    fresh = tiny_session(tmp_path, [TinySpec("tiny-grid")])
    monkeypatch.setattr(measure, "measure", lambda *a, **k: pytest.fail("records_cached measured"))
    assert fresh.records_cached("tiny-grid") is True
    path = next((tmp_path / "cache" / "records").glob("*.csv"))
    path.write_bytes(path.read_bytes() + b"\n")  # fails its seal: not cached
    assert tiny_session(tmp_path, [TinySpec("tiny-grid")]).records_cached("tiny-grid") is False


def test_a_probe_edit_is_computed_once_per_scene_content(monkeypatch):
    from dataclasses import replace

    from harness import probe_edits
    from harness.paths import FIXTURES
    from harness.scenes.sceneset import SceneSet

    scene = SceneSet.load(FIXTURES / "scenes").scenes[0]
    monkeypatch.setattr(probe_edits, "_APPLIED", {})
    first = probe_edits.apply(scene, "scrambled", seed=3)
    calls = []
    monkeypatch.setattr(probe_edits, "_scrambled", lambda *a: calls.append(a) or pytest.fail("recomputed"))
    again = probe_edits.apply(replace(scene), "scrambled", seed=3)  # an equal scene, loaded again
    assert again == first and calls == []
    moved = replace(scene, objects=(replace(scene.objects[0], yaw_deg=scene.objects[0].yaw_deg + 1.0),
                                    *scene.objects[1:]))
    with pytest.raises(pytest.fail.Exception, match="recomputed"):
        probe_edits.apply(moved, "scrambled", seed=3)  # other content: not the memo's
    with pytest.raises(pytest.fail.Exception, match="recomputed"):
        probe_edits.apply(scene, "scrambled", seed=4)
