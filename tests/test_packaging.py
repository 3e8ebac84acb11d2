"""The package carries what a project outside this repository needs: the study's thresholds
as built-in defaults layered under the project's, the audit suite, the fixtures, and a
per-user cache directory (fast unit tests; tests/test_outside_project.py runs a built wheel)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest
from setuptools import find_namespace_packages

from harness.checks.thresholds import (
    KNOWN,
    ThresholdError,
    Thresholds,
    layered,
    repeated_defaults_that_differ,
    study_table,
    study_table_toml,
)
from harness.core import paths
from harness.run.aggregate import ControllerSink

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_repository_thresholds_repeat_only_built_in_defaults():
    # the repository may repeat them (a threshold added to the registry need not be), but a
    # different value would move its run ids away from those of every other project running
    # the same study
    own = _pyproject()["tool"]["t3d-audit"]["thresholds"]
    assert repeated_defaults_that_differ(own) == {}
    assert set(own) - {"overrides", "custom"} <= set(KNOWN)
    assert layered(own).base == layered({}).base == Thresholds.from_table(study_table()).base


def test_a_repeated_threshold_with_another_value_is_found():
    assert repeated_defaults_that_differ({"peak_rho_max": 1.0, "overrides": {}}) == {}
    assert repeated_defaults_that_differ({"peak_rho_max": 2.0}) == {"peak_rho_max": (2.0, 1.0)}


def test_the_generated_table_reads_back_as_the_built_in_defaults():
    table = tomllib.loads(study_table_toml())["tool"]["t3d-audit"]["thresholds"]
    assert table == study_table()


def test_the_built_in_defaults_name_only_known_thresholds_with_their_values():
    table = study_table()
    assert set(table) <= set(KNOWN)
    assert table["peak_rho_max"] == 1.0 and table["min_kendall_w"] == 0.5
    assert table["max_best_view_inflation"] == 1.25 and table["max_failed_share"] == 0.01


def test_a_project_table_overrides_and_adds_but_never_removes_a_study_threshold():
    defaults = {"peak_rho_max": 1.0, "min_kendall_w": 0.5}
    got = layered(
        {"peak_rho_max": 2.5, "custom": {"min_my_metric": 0.4},
         "overrides": {"mine-*": {"min_my_metric": 0.1}}},
        defaults=defaults,
    )
    assert dict(got.base) == {"peak_rho_max": 2.5, "min_kendall_w": 0.5, "min_my_metric": 0.4}
    assert got.for_evaluator("mine-a")["min_my_metric"] == 0.1
    assert got.custom == frozenset({"min_my_metric"})
    # an empty or absent project table keeps every study threshold
    assert dict(layered({}, defaults=defaults).base) == defaults
    assert dict(layered(None, defaults=defaults).base) == defaults


def test_a_misspelt_project_threshold_is_still_an_error_with_defaults_beneath():
    with pytest.raises(ThresholdError, match="did you mean peak_rho_max"):
        layered({"peak_rho_mx": 1.0})
    with pytest.raises(ThresholdError, match="must be a table"):
        layered([1, 2])  # type: ignore[arg-type]


def _sink(results: list[dict]) -> ControllerSink:
    sink = ControllerSink()
    sink.results = {r["test"]: r for r in results}
    return sink


@pytest.mark.parametrize("allow_empty", [False, True])
def test_a_run_whose_study_checks_all_skipped_is_an_empty_gate(allow_empty):
    # a run that must fail: the project's own check passed, all 35 study tests skipped, exit 0
    sink = _sink([
        {"test": "audit_tests/test_failures.py::test_failed_share[e]", "outcome": "skipped", "checks": []},
        {"test": "audit_tests/test_best_view.py::test_best_view[e]", "outcome": "skipped", "checks": []},
        {"test": "own/test_mine.py::test_mine[e]", "outcome": "passed", "checks": [{"ok": True}]},
    ])
    session = SimpleNamespace(options=SimpleNamespace(allow_empty=allow_empty))
    pytest_session = SimpleNamespace(exitstatus=pytest.ExitCode.OK)
    sink._check_gate(session, pytest_session)
    if allow_empty:
        assert sink.gate_problem is None and pytest_session.exitstatus == pytest.ExitCode.OK
    else:
        assert "none of the study's 2 audit tests" in sink.gate_problem
        assert pytest_session.exitstatus == pytest.ExitCode.USAGE_ERROR


def test_a_run_with_a_study_check_or_without_the_study_suite_is_not_empty():
    for results in (
        [{"test": "audit_tests/a.py::t", "outcome": "passed", "checks": [{"ok": True}]},
         {"test": "audit_tests/b.py::t", "outcome": "skipped", "checks": []}],
        [{"test": "own/test_mine.py::t", "outcome": "failed", "checks": [{"ok": False}]}],
    ):
        sink = _sink(results)
        pytest_session = SimpleNamespace(exitstatus=pytest.ExitCode.TESTS_FAILED)
        sink._check_gate(SimpleNamespace(options=SimpleNamespace(allow_empty=False)), pytest_session)
        assert sink.gate_problem is None and pytest_session.exitstatus == pytest.ExitCode.TESTS_FAILED


def test_the_package_list_covers_every_folder_of_harness():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {f"harness.{p}" for p in find_namespace_packages(ROOT / "harness", exclude=["*__pycache__*"])}
    assert found | {"harness", "harness.fixtures", "audit_tests"} == listed
    assert _pyproject()["tool"]["setuptools"]["package-dir"] == {"harness.fixtures": "fixtures"}
    assert (ROOT / "audit_tests" / "__init__.py").is_file()  # `pytest --pyargs audit_tests`


def test_the_cache_defaults_to_the_per_user_cache_dir(monkeypatch, tmp_path):
    monkeypatch.delenv(paths.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    assert paths.default_cache_dir() == (tmp_path / "xdg" / "t3d-audit").resolve()
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "mine"))
    assert paths.default_cache_dir() == (tmp_path / "mine").resolve()


def test_bundled_files_are_found_in_the_checkout():
    assert paths.REPO_ROOT == ROOT and paths.FIXTURES == ROOT / "fixtures"
    assert (paths.SCHEMAS / "scene-v1.json").is_file() and paths.PROFILES_FILE.is_file()


def test_the_project_root_is_found_from_the_invoking_folder(tmp_path):
    from harness.core.rootdir import project_root

    (tmp_path / "proj" / "src" / "deep").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text('[project]\nname = "p"\n')
    assert project_root(tmp_path / "proj" / "src" / "deep") == tmp_path / "proj"
    assert project_root(ROOT / "docs") == ROOT


def test_the_audit_command_runs_the_suite_by_package_name_from_the_invoking_folder(monkeypatch):
    from harness.run.suite_argv import SuiteRun, pytest_argv

    monkeypatch.syspath_prepend(str(ROOT))
    argv = pytest_argv(SuiteRun(profile="smoke", workers="2", pytest_args=("--", "audits")))
    assert argv[:2] == ["--pyargs", "audit_tests"] and argv[-1] == "audits"
    assert not any(a.startswith("--rootdir") for a in argv)  # the invoking project's rootdir


def test_the_warm_step_renders_the_projects_scenes(tmp_path, monkeypatch):
    import argparse

    from harness.commands import audit

    args = argparse.Namespace(profile="smoke", workers="2", cache_dir=None, view_policy="single")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    assert "--scenes" not in audit.warm_argv(args)  # none named: the bundled set
    (tmp_path / "pyproject.toml").write_text('[tool.t3d-audit]\nscenes = "my/scenes"\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    argv = audit.warm_argv(args)
    assert argv[argv.index("--scenes") + 1] == str((tmp_path / "my" / "scenes").resolve())


def test_no_module_names_package_files_through_the_repository_root():
    # regression: REPO_ROOT / "harness" / ... exists only in a checkout; in an installed wheel
    # REPO_ROOT is the package itself, so the report of an outside project was never written
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "harness").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "REPO_ROOT" in line and '"harness"' in line
    ]
    assert offenders == []
