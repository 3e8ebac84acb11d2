"""The CLI's loading of a project's ``conftest.py`` contains whatever the project's code does:
exits, exceptions, junk returned from the hook, output on stdout, hangs, thousands of
scorers, ids that clash with built-in ones in another letter case, hostile ``addopts``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import harness.run.project_evaluators as pe
from harness.core.errors import EvaluatorError

ROOT = Path(__file__).resolve().parents[1]

TINY = "from harness.testing import TinySpec\n\n\ndef pytest_audit_evaluators(config):\n    return {}\n"


def _project(root: Path, conftest: str, pyproject: str = "[tool.pytest.ini_options]\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(pyproject)
    (root / "conftest.py").write_text(conftest)
    return root


def _cli(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "T3D_AUDIT_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "harness", *argv], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120)  # fmt: skip


@pytest.mark.parametrize(
    ("conftest", "words"),
    [
        ("import sys\nsys.exit(0)\n", "called sys.exit(0)"),
        ("import sys\nsys.exit(3)\n", "called sys.exit(3)"),
        ("raise KeyError('nope')\n", "could not load"),
        ("def pytest_audit_evaluators(config):\n    raise RuntimeError('boom')\n", "raised RuntimeError: boom"),
        ("import sys\n\n\ndef pytest_audit_evaluators(config):\n    sys.exit(0)\n", "called sys.exit(0)"),
        ("def pytest_audit_evaluators(config):\n    return 5\n", "returned a int, not a list"),
        ("def pytest_audit_evaluators(config):\n    return 'tiny-a'\n", "returned a str, not a list"),
        ("def pytest_audit_evaluators(config):\n    return ['junk']\n", "neither a Scorer nor"),
        ("def pytest_audit_evaluators(config):\n    return [None]\n", "neither a Scorer nor"),
    ],
)
def test_a_misbehaving_conftest_is_one_evaluator_error(tmp_path, capfd, conftest, words):
    root = _project(tmp_path / "proj", conftest)
    with pytest.raises(EvaluatorError, match=re.escape(words)):
        pe.project_specs(root)
    assert capfd.readouterr().out == ""  # nothing on stdout, whatever happened


@pytest.mark.parametrize(
    "ids",
    [["CLIP-VIT-B32"], ["tiny-a", "TINY-A"], ["tiny-a "], [" tiny-a"], ["tiny-\u0430"], ["tiny-\uff41"], [""]],
)
def test_odd_spellings_of_ids_are_refused(tmp_path, ids):
    root = _project(tmp_path / "proj", TINY.format(", ".join(f"TinySpec({i!r})" for i in ids).join("[]")))
    with pytest.raises(EvaluatorError):
        pe.project_specs(root)


def test_thousands_of_offered_specs_load(tmp_path):
    root = _project(tmp_path / "proj", TINY.format("[TinySpec(f'tiny-{i}') for i in range(3000)]"))
    specs = pe.project_specs(root)
    assert len(specs) == 3000 and specs[-1].id == "tiny-2999"


def test_a_hanging_conftest_is_stopped_at_the_deadline(tmp_path, monkeypatch):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("the deadline's signal reaches only the main thread")
    monkeypatch.setattr(pe, "LOAD_DEADLINE_S", 0.5)
    root = _project(tmp_path / "proj", "import time\ntime.sleep(60)\n")
    with pytest.raises(EvaluatorError, match=r"took over 0\.5 s"):
        pe.project_specs(root)


def test_evaluators_json_stays_json_when_the_conftest_prints(tmp_path):
    conftest = ("import os\nprint('hello from conftest')\nos.write(1, b'raw write\\n')\n"
                "print('x' * 200_000)\n" + TINY.format("[TinySpec('tiny-a')]"))  # fmt: skip
    done = _cli(_project(tmp_path / "proj", conftest), "evaluators", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "tiny-a" in {entry["id"] for entry in json.loads(done.stdout)}


def test_a_conftest_exiting_zero_is_an_error_not_a_silent_success(tmp_path):
    done = _cli(_project(tmp_path / "proj", "import sys\nprint('bye')\nsys.exit(0)\n"), "evaluators", "--json")
    assert done.returncode == 2 and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert "sys.exit(0)" in last and "Traceback" not in done.stderr
    assert "bye" in done.stderr  # what the conftest said is shown, on stderr


@pytest.mark.parametrize("addopts", ["--pdb", "-h", "--version", "--co", "-p no:harness.plugin", "-s", "-W error"])
def test_hostile_addopts_do_not_hide_the_projects_evaluators(tmp_path, addopts):
    pyproject = f'[tool.pytest.ini_options]\naddopts = "{addopts}"\n'
    root = _project(tmp_path / "proj", TINY.format("[TinySpec('tiny-a')]"), pyproject)
    assert [s.id for s in pe.project_specs(root)] == ["tiny-a"]


@pytest.mark.parametrize("addopts", ["-p no_such_plugin_here", "--import-mode=nonsense"])
def test_broken_addopts_are_one_error(tmp_path, addopts):
    pyproject = f'[tool.pytest.ini_options]\naddopts = "{addopts}"\n'
    root = _project(tmp_path / "proj", TINY.format("[TinySpec('tiny-a')]"), pyproject)
    with pytest.raises(EvaluatorError, match="could not load"):
        pe.project_specs(root)


@pytest.mark.parametrize(
    "spec",
    [
        "class S:\n    id = 'only-id'\n",
        "from harness.testing import TinySpec\n\n\nclass S(TinySpec):\n"
        "    def weights_available(self):\n        raise RuntimeError('no')\n",
        "from harness.testing import TinySpec\n\n\nclass S(TinySpec):\n"
        "    def identity(self):\n        return {'id': self.id, 'junk': object()}\n",
    ],
    ids=["only-an-id", "raising-field", "unserialisable-identity"],
)
@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
def test_a_junk_spec_offered_by_a_hook_is_one_line_in_evaluators(tmp_path, spec, json_flag):
    conftest = spec + "\n\ndef pytest_audit_evaluators(config):\n    return [S('tiny-junk')]\n"
    conftest = conftest.replace("S('tiny-junk')", "S()") if "only-id" in spec else conftest
    done = _cli(_project(tmp_path / "proj", conftest), "evaluators", *json_flag)
    assert done.returncode == 2 and done.stdout == "", done.stderr[-2000:]
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "cannot be listed" in done.stderr or "not JSON serializable" in done.stderr


def test_a_weights_folder_the_file_system_refuses_lists_no_weights(tmp_path, monkeypatch, capsys):
    # regression: a 5,000-character T3D_AUDIT_WEIGHTS_DIR made `evaluators` end in an OSError
    from harness.cli import main

    monkeypatch.setenv("T3D_AUDIT_WEIGHTS_DIR", "/tmp/" + "a" * 5000)
    monkeypatch.chdir(tmp_path)  # no project here: the registry alone
    assert main(["evaluators", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed and all(isinstance(e["weights_available"], bool) for e in listed)
