"""Plugin options, ini/pyproject precedence, parametrization ids and markers (pytester, collect only)."""

from __future__ import annotations

import pytest

from harness.testing import write_tiny_scene_set

pytest_plugins = ["pytester"]

CONFTEST = """
from harness.testing import BoxRasterizer, TinySpec


def pytest_audit_renderer(config, cache_dir):
    return BoxRasterizer()


def pytest_audit_evaluators(config):
    return [TinySpec("tiny-grid"), TinySpec("tiny-pairs", grid=False), TinySpec("other")]
"""

TESTS = """
def test_rho(audit_evaluator, audit_factor):
    pass


def test_disc(audit_evaluator, audit_probe):
    pass


def test_w(audit_evaluator, audit_shared_factor):
    pass


def test_panel(audit_panel_summary):
    pass


def test_plain():
    pass


def test_options(audit_session):
    o = audit_session.options
    print("OPTIONS", o.profile, o.evaluators, o.bootstrap, o.seed, o.report_dir.name, o.cache_dir.name)
    print("THRESHOLDS", audit_session.gate_thresholds.for_evaluator("tiny-grid"))
"""


@pytest.fixture
def project(pytester):
    write_tiny_scene_set(pytester.path / "scenes")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_audit=TESTS)
    return pytester


def write_pyproject(pytester, body: str) -> None:
    (pytester.path / "pyproject.toml").write_text(body)


def test_parametrization_ids_groups_and_markers(project):
    write_pyproject(project, '[tool.t3d-audit]\nprofile = "smoke"\nevaluators = ["tiny-*"]\nscenes = "scenes"\n')
    items, _ = project.inline_genitems("-p", "no:cacheprovider")
    names = [i.name for i in items]
    assert "test_rho[tiny-grid-pitch]" in names
    assert "test_rho[tiny-pairs-paraphrase]" in names
    assert "test_disc[tiny-grid-scrambled]" in names
    assert "test_w[tiny-grid-template]" in names
    assert not any(n.startswith("test_w[") and n.endswith("-paraphrase]") for n in names)
    assert not any("other" in n for n in names)
    by_name = {i.name: i for i in items}
    group = by_name["test_rho[tiny-grid-pitch]"].get_closest_marker("xdist_group")
    assert group is not None and group.args == ("tiny-grid",)
    assert by_name["test_panel"].get_closest_marker("xdist_group").args == ("t3d-audit-panel",)
    assert by_name["test_rho[tiny-grid-pitch]"].get_closest_marker("audit") is not None
    assert by_name["test_plain"].get_closest_marker("audit") is None
    listed = project.runpytest("-p", "no:cacheprovider", "--collect-only", "-q").stdout.lines
    nodes = [line for line in listed if "::" in line]
    assert nodes[-1].endswith("::test_panel")  # panel tests need every evaluator: run last


def test_the_removed_dict_fixtures_fail_naming_their_typed_replacements(project):
    """``audit_stats`` and ``audit_panel`` (raw summary dicts) were removed: a test that still
    asks for one fails at setup with one line naming the typed fixture that replaces it."""
    write_pyproject(project, '[tool.t3d-audit]\nprofile = "smoke"\nevaluators = ["tiny-grid"]\nscenes = "scenes"\n')
    project.makepyfile(test_old="def test_stats(audit_stats):\n    pass\n\n\n"
                                "def test_panel_dict(audit_panel):\n    pass\n")  # fmt: skip
    result = project.runpytest("-p", "no:cacheprovider", "test_old.py", "--audit-cache-dir=cache")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines_random([
        "*the audit_stats fixture (a raw summary dict) was removed; use audit_summary "
        "(harness.stats.summary.EvaluatorSummary*",
        "*the audit_panel fixture (a raw summary dict) was removed; use audit_panel_summary "
        "(harness.stats.summary.PanelSummary*",
    ])  # fmt: skip


def test_command_line_beats_ini_beats_pyproject(project):
    write_pyproject(
        project,
        "[tool.pytest.ini_options]\naudit_bootstrap = \"30\"\naudit_seed = \"7\"\n"
        '[tool.t3d-audit]\nprofile = "smoke"\nevaluators = ["tiny-*"]\nscenes = "scenes"\n'
        "bootstrap = 10\nseed = 1\n"
        "[tool.t3d-audit.thresholds]\npeak_rho_max = 1.0\n"
        '[tool.t3d-audit.thresholds.overrides]\n"tiny-g*" = { peak_rho_max = 4.0 }\n',
    )
    result = project.runpytest(
        "-p", "no:cacheprovider", "-s", "-k", "test_options", "--audit-seed", "99",
        "--audit-evaluators", "tiny-grid", "--audit-report-dir", "out", "--audit-cache-dir", "cachex",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        # the study's built-in thresholds, the project's override layered over them
        ["*OPTIONS smoke ('tiny-grid',) 30 99 out cachex",
         "THRESHOLDS {'max_best_view_inflation': 1.25, *'min_kendall_w': 0.5, *'peak_rho_max': 4.0}"]
    )


@pytest.mark.parametrize("form", ["tool table", "top level"])
def test_audit_config_names_the_file_read_instead_of_the_pyproject(project, form):
    write_pyproject(project, '[tool.t3d-audit]\nprofile = "default"\n'
                    "[tool.t3d-audit.thresholds]\npeak_rho_max = 9.0\n")
    (project.path / "conf").mkdir()
    body = ('profile = "smoke"\nevaluators = ["tiny-grid"]\nscenes = "../scenes"\n'
            "[thresholds]\nmin_kendall_w = 0.25\n")
    if form == "tool table":
        body = body.replace("[thresholds]", "[tool.t3d-audit.thresholds]")
        body = "[tool.t3d-audit]\n" + body
    (project.path / "conf" / "audit.toml").write_text(body)
    result = project.runpytest("-p", "no:cacheprovider", "-s", "-k", "test_options",
                               "--audit-config=conf/audit.toml")
    result.assert_outcomes(passed=1)
    # scenes relative to the config file; its thresholds over the built-in ones, not the pyproject's
    result.stdout.fnmatch_lines(["*OPTIONS smoke ('tiny-grid',) *",
                                 "THRESHOLDS {*'min_kendall_w': 0.25, *'peak_rho_max': 1.0}"])
    missing = project.runpytest("-p", "no:cacheprovider", "--audit-config=conf/nope.toml")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*--audit-config=*nope.toml: no such file*"])


def test_bad_threshold_table_is_a_usage_error(project):
    write_pyproject(project, '[tool.t3d-audit]\nscenes = "scenes"\n[tool.t3d-audit.thresholds]\npeak_rho_mx = 1\n')
    result = project.runpytest("-p", "no:cacheprovider", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown threshold 'peak_rho_mx' (did you mean peak_rho_max?*"])


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ('profile = "nope"\nevaluators = ["tiny-*"]', "ERROR: --audit-profile: unknown profile 'nope'*"),
        ('profile = "smoke"\nevaluators = ["tiny-gird"]', "ERROR: t3d-audit: no evaluator matches 'tiny-gird'*"),
    ],
)
def test_bad_profile_or_evaluator_is_a_one_line_usage_error(project, setting, message):
    # regression: both were collection errors (exit 2) after configure; now checked once, up front
    write_pyproject(project, f'[tool.t3d-audit]\nscenes = "scenes"\n{setting}\n')
    result = project.runpytest("-p", "no:cacheprovider", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_non_audit_runs_write_no_report(project):
    write_pyproject(project, '[tool.t3d-audit]\nprofile = "smoke"\nevaluators = ["tiny-*"]\nscenes = "scenes"\n')
    result = project.runpytest("-p", "no:cacheprovider", "-k", "test_plain", "--audit-report-dir", "rep")
    result.assert_outcomes(passed=1)
    assert not (project.path / "rep").exists()
    assert "t3d-audit summary" not in result.stdout.str()


def test_xdist_workers_share_the_cores(monkeypatch):
    import os
    import sys

    from harness.plugin.configure import share_cores
    from harness.render.settings import THREADS_ENV

    monkeypatch.delitem(sys.modules, "torch", raising=False)  # keep this process's torch threads
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv(THREADS_ENV, "3")  # a user's setting wins
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    share_cores(4)
    assert os.environ["OMP_NUM_THREADS"] == "2" and os.environ[THREADS_ENV] == "3"
    monkeypatch.delenv("OMP_NUM_THREADS")
    share_cores(16)
    assert os.environ["OMP_NUM_THREADS"] == "1"
