"""``t3d-audit audit`` (``--workers auto``) starts xdist workers only when something is to be
measured: a warm run, every selected evaluator's records already cached, runs in the one
process (workers would each load the scenes, plan and records again for cached statistics) and
writes the same report. Checked with pytester subprocesses on the tiny audit project, whose
conftest registers :class:`harness.plugin.warm.WarmInProcess` as the command does."""

from __future__ import annotations

import re

import pytest

from tests._audit_project import CONFTEST, comparable_files, make_project, report_dir, run_audit

pytest_plugins = ["pytester"]

WORKERS = re.compile(r"created: \d+/\d+ workers?")
WARM_CONFTEST = CONFTEST + """
import pytest

from harness.plugin.warm import WarmInProcess

_warm = WarmInProcess()


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config):
    return _warm.pytest_xdist_auto_num_workers(config)
"""


def outcomes(result: pytest.RunResult) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k in ("passed", "failed", "skipped")}


@pytest.mark.slow
def test_auto_starts_workers_only_while_records_are_missing(pytester, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    root = make_project(pytester)
    (root / "conftest.py").write_text(WARM_CONFTEST)
    cold = run_audit(pytester, "a", "-n", "auto", "--dist", "loadgroup")
    assert WORKERS.search(cold.stdout.str()), cold.stdout.str()[-2000:]
    cold_files = comparable_files(report_dir(root, "a"))
    warm = run_audit(pytester, "a", "-n", "auto", "--dist", "loadgroup")
    assert not WORKERS.search(warm.stdout.str()), "a warm run started workers"
    # ... and says so, since the command line it printed reads `-n auto`
    assert "so the audit runs in this process (-n auto starts no workers)" in warm.stdout.str()
    assert "runs in this process" not in cold.stdout.str()
    warm.stdout.fnmatch_lines(["*t3d-audit summary*", "*report: *reports-a*"])
    assert outcomes(warm) == outcomes(cold)
    assert comparable_files(report_dir(root, "a")) == cold_files
    # an explicit count, and xdist's own override of auto, still start workers
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "2")
    assert WORKERS.search(run_audit(pytester, "a", "-n", "auto", "--dist", "loadgroup").stdout.str())
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS")
    assert WORKERS.search(run_audit(pytester, "a", "-n", "2", "--dist", "loadgroup").stdout.str())
    # plain pytest -n auto (no WarmInProcess: e.g. the harness's own tests) keeps xdist's choice
    (root / "conftest.py").write_text(CONFTEST)
    assert WORKERS.search(run_audit(pytester, "a", "-n", "auto", "--dist", "loadgroup").stdout.str())


def test_the_audit_command_registers_the_warm_decision(monkeypatch):
    import harness.commands.audit as audit_cmd
    from harness.plugin.warm import WarmInProcess

    seen = {}

    def fake_main(argv, plugins=()):
        seen["argv"], seen["plugins"] = argv, list(plugins)
        return 0

    monkeypatch.setattr("pytest.main", fake_main)
    args = audit_cmd.argparse.Namespace(
        profile="smoke", evaluators=None, workers="auto", report_dir=None, cache_dir=None,
        no_warm=True, view_policy="single", gate=False, baseline=None, save_baseline=None,
        pytest_args=[],
    )
    assert audit_cmd.run(args) == 0
    assert "-n" in seen["argv"] and seen["argv"][seen["argv"].index("-n") + 1] == "auto"
    assert any(isinstance(p, WarmInProcess) for p in seen["plugins"])


def test_records_cached_measures_nothing(tmp_path, monkeypatch):
    from harness.testing import TinySpec
    from tests._audit_project import tiny_session

    session = tiny_session(tmp_path, [TinySpec("tiny-grid")])
    import harness.measure.images as measure

    assert session.record_cache.cached("tiny-grid") is False
    session.record_cache.file("tiny-grid")  # measured once
    fresh = tiny_session(tmp_path, [TinySpec("tiny-grid")])
    monkeypatch.setattr(measure, "measure", lambda *a, **k: pytest.fail("records_cached measured"))
    assert fresh.record_cache.cached("tiny-grid") is True
    path = next((tmp_path / "cache" / "records").glob("*.csv"))
    path.write_bytes(path.read_bytes() + b"\n")  # fails its seal: not cached
    assert tiny_session(tmp_path, [TinySpec("tiny-grid")]).record_cache.cached("tiny-grid") is False


def test_a_probe_edit_is_computed_once_per_scene_content(monkeypatch):
    from dataclasses import replace

    from harness.core.paths import FIXTURES
    from harness.scenes import probe_edits
    from harness.scenes.sceneset import SceneSet

    scene = SceneSet.load(FIXTURES / "scenes").scenes[0]
    monkeypatch.setattr(probe_edits, "_APPLIED", {})
    first = probe_edits.apply(scene, "scrambled", seed=3)
    calls = []
    monkeypatch.setattr(probe_edits, "scrambled", lambda *a: calls.append(a) or pytest.fail("recomputed"))
    again = probe_edits.apply(replace(scene), "scrambled", seed=3)  # an equal scene, loaded again
    assert again == first and calls == []
    moved = replace(scene, objects=(replace(scene.objects[0], yaw_deg=scene.objects[0].yaw_deg + 1.0),
                                    *scene.objects[1:]))
    with pytest.raises(pytest.fail.Exception, match="recomputed"):
        probe_edits.apply(moved, "scrambled", seed=3)  # other content: not the memo's
    with pytest.raises(pytest.fail.Exception, match="recomputed"):
        probe_edits.apply(scene, "scrambled", seed=4)
