"""The test suite's own rules: test modules share helpers only through ``tests/_*.py``, and the
``slow`` marker means the same thing in pyproject.toml, tox.ini and the README."""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (lazy imports inside functions too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(("." * node.level) + node.module)
    return names


def test_no_test_module_imports_another():
    test_modules = {p.stem for p in TESTS.glob("test_*.py")}
    bad = []
    for path in sorted(TESTS.rglob("*.py")):
        for name in imported_modules(path):
            last = name.rsplit(".", 1)[-1].lstrip(".")
            if last in test_modules and (name.startswith(("tests.", ".")) or name == last):
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "move shared helpers to tests/_<name>.py:\n" + "\n".join(bad)


def test_the_module_scan_sees_lazy_and_relative_imports(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tests.test_x import y\n    from .test_z import w\n")
    assert imported_modules(probe) == {"tests.test_x", ".test_z"}


def test_the_slow_marker_tox_and_readme_agree():
    pytest_ini = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    options = pytest_ini["tool"]["pytest"]["ini_options"]
    slow = next(m for m in options["markers"] if m.startswith("slow:"))
    assert "tox -e tests runs every test" in slow and "-m 'not slow'" in slow
    assert "-m" not in options.get("addopts", "").split()  # nothing deselected by default
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    command = tox["testenv:tests"]["commands"]
    assert command.split()[:2] == ["pytest", "tests"] and "slow" not in command
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "`tox -e tests` runs every test, the `slow` ones included" in readme


def test_the_two_readme_commands_share_one_environment_and_the_audit_needs_no_test_packages():
    # regression: `tox -e audit` and `tox -e tests` each built an identical environment, and the
    # audit's installed ray, moto, playwright and ruff, which it never uses
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## The two commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("&&")[-1].strip() for line in block.splitlines() if "tox" in line]
    # the same env: tox 4 reuses it, no second install (`tox exec` never installs the package,
    # so the main job builds the env with --notest first)
    assert commands == ["python3 -m tox -qq exec -e tests -- t3d-audit audit --profile default",
                        "python3 -m tox -e tests"]
    assert "python3 -m tox -e tests --notest && python3 -m tox -qq exec -e tests" in block
    assert "The expected verdict of the main job is FAIL" in readme
    assert not re.search(r"\b\d{1,2},\d{3} tests\b", readme)  # no test count that drifts
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    lean = set(tox["testenv:audit"]["extras"].split())
    assert lean == {"render", "models"}
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    needed = " ".join(d for name in lean for d in extras[name])
    for test_only in ("hypothesis", "playwright", "moto", "ruff", "ray"):
        assert test_only not in needed


def test_a_missing_extra_skips_naming_it_and_fails_where_ci_requires_it(monkeypatch):
    import pytest

    from tests import _extras

    monkeypatch.setitem(_extras.EXTRA_OF, "t3d_absent_judge_lib", "judge")
    monkeypatch.setitem(_extras.EXTRA_OF, "t3d_absent_store_lib", "distributed")
    monkeypatch.setattr(_extras, "DISTRIBUTED", _extras.DISTRIBUTED | {"t3d_absent_store_lib"})
    monkeypatch.delenv(_extras.REQUIRE_DISTRIBUTED_ENV, raising=False)
    for module, extra in (("t3d_absent_judge_lib", "judge"), ("t3d_absent_store_lib", "distributed")):
        with pytest.raises(pytest.skip.Exception, match=rf"the {extra} extra \(pip install -e '\.\[{extra}\]'\)"):
            _extras.need(module)
    assert _extras.missing("t3d_absent_judge_lib") and not _extras.missing("json")
    mark = _extras.needs("t3d_absent_judge_lib")
    assert mark.args == (True,) and "judge extra" in mark.kwargs["reason"]
    # .ci/run sets T3D_AUDIT_REQUIRE_DISTRIBUTED=1: a distributed package missing there fails
    monkeypatch.setenv(_extras.REQUIRE_DISTRIBUTED_ENV, "1")
    with pytest.raises(ModuleNotFoundError):
        _extras.need("t3d_absent_store_lib")
    with pytest.raises(pytest.skip.Exception):  # other extras still skip
        _extras.need("t3d_absent_judge_lib")


def test_the_readme_commands_install_with_uv_and_leave_the_checkout_clean():
    # regression: pip resolved the environment in 113-594 s; tox wrote a `.venv`
    # redirect file that left the checkout dirty; the main job ended on "congratulations :)"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## The two commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    installs = [line.split("&&")[0].strip() for line in block.splitlines() if "tox" in line]
    assert installs == ['python3 -m pip install -q "tox>=4.11" "tox-uv>=1.11"'] * 2
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'python3 -m pip install -q "tox>=4.11" "tox-uv>=1.11"' in ci
    assert "T3D_AUDIT_REQUIRE_BROWSER=1" in ci and "chromium" in ci
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    assert tox["tox"]["venv_redirect"].strip() == "false"
    assert tox["testenv"]["uv_seed"].strip() == "true"  # test_outside_project runs pip in it
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert ".venv" in ignored  # no slash: the redirect is a file
    # the audit's verdict is the last line: -qq silences tox's closing report
    assert "tox -qq exec -e tests -- t3d-audit audit" in block


def test_the_readme_explains_every_planted_evaluator_a_smoke_run_audits():
    # regression: the smoke run audited six planted-* evaluators the README never named
    from harness.evaluators.reference.planted import PLANTED_IDS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### The `planted-*` evaluators of a smoke run", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip(" `"): line for line in section.splitlines() if line.startswith("| `planted-")}
    assert set(rows) == set(PLANTED_IDS)
    for name, row in rows.items():
        planted, expected = (cell.strip() for cell in row.split("|")[2:4])
        assert planted and expected and ("fails" in expected or "passes" in expected), name
