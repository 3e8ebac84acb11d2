"""Result keys of audit tests do not depend on where the package is installed: the installed
``audit_tests`` in a virtual environment inside the project, outside it, or a checkout's copy
give the same ``audit_tests/<file>::<test>`` key, so one run id has one results.json."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.plugin.reporting import key_of_test


def _item(path: Path, root: Path) -> SimpleNamespace:
    return SimpleNamespace(path=path, name="test_rho[clip-pitch]", config=SimpleNamespace(rootpath=root))


def _package(base: Path) -> Path:
    pkg = base / "audit_tests"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "test_configuration_ratio.py").write_text("")
    return pkg / "test_configuration_ratio.py"


@pytest.mark.parametrize("where", [".venv/lib/python3.11/site-packages", "venv/lib/python3/dist-packages",
                                   "../elsewhere/site-packages", "."])  # fmt: skip
def test_the_key_is_the_package_path_wherever_it_is_installed(tmp_path, where):
    root = tmp_path / "project"
    root.mkdir()
    test_file = _package((root / where).resolve())
    assert key_of_test(_item(test_file, root)) == "audit_tests/test_configuration_ratio.py::test_rho[clip-pitch]"


def test_a_project_file_keeps_its_project_path(tmp_path):
    (tmp_path / "audits").mkdir()
    own = tmp_path / "audits" / "test_own.py"
    own.write_text("")
    assert key_of_test(_item(own, tmp_path)) == "audits/test_own.py::test_rho[clip-pitch]"
