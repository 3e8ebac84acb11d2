"""``t3d-audit init`` (fast parts: what it writes, what it refuses, what it keeps). The printed
commands are run in tests/test_outside_project.py (slow: they render)."""

from __future__ import annotations

import ast
import tomllib

import pytest

from harness.cli import main
from harness.commands.init_project import WORKFLOW, next_commands, without_own_tables


def test_init_writes_config_evaluator_audit_and_workflow(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mine"\n\n[tool.ruff]\nline-length = 99\n')
    assert main(["init", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert all(f"  {cmd}" in out for cmd in next_commands())
    data = tomllib.loads((tmp_path / "pyproject.toml").read_text())
    assert data["project"] == {"name": "mine"} and data["tool"]["ruff"] == {"line-length": 99}
    table = data["tool"]["t3d-audit"]
    assert table["evaluators"] == ["colorstat"]
    assert table["thresholds"]["custom"] == {"max_lighting_dispersion": 0.05}
    conftest = (tmp_path / "conftest.py").read_text()
    assert "def pytest_audit_evaluators(config):" in conftest
    ast.parse(conftest)
    audit = (tmp_path / "audits" / "test_colorstat_audit.py").read_text()
    assert 'threshold="max_lighting_dispersion"' in audit
    ast.parse(audit)
    yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflow back")
    flow = yaml.safe_load((tmp_path / WORKFLOW).read_text())
    steps = flow["jobs"]["audit"]["steps"]
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache"))
    assert cache["with"]["path"] == "${{ env.T3D_AUDIT_CACHE_DIR }}"
    assert flow["jobs"]["audit"]["env"]["T3D_AUDIT_CACHE_DIR"].startswith("${{ github.workspace }}")
    runs = {s.get("name"): s.get("run", "") for s in steps}
    # the audit keeps its report whatever the verdict; the comparison with the last release gates
    assert "--save-baseline candidate" in runs["Audit"] and "--gate" not in runs["Audit"]
    assert "t3d-audit compare baselines/release baselines/candidate" in runs["Gate on the release comparison"]
    restore = next(s for s in steps if s.get("uses", "").startswith("actions/cache/restore"))
    assert restore["with"]["path"] == "baselines/release"
    assert "this t3d-audit was installed from a local folder" in out  # a checkout: no URL to give CI


def test_the_workflow_installs_from_the_url_this_install_came_from(monkeypatch):
    import json
    from importlib import metadata

    from harness.commands import init_project

    class Dist:
        def __init__(self, origin):
            self.origin = origin

        def read_text(self, name):
            return json.dumps(self.origin) if name == "direct_url.json" else None

    git = {"url": "https://git.example.org/lab/t3d-audit.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}
    for origin, spec in (
        (git, "t3d-audit[render] @ git+https://git.example.org/lab/t3d-audit.git@abc123"),
        ({"url": "https://files.example.org/t3d_audit-0.1.0-py3-none-any.whl", "archive_info": {}},
         "t3d-audit[render] @ https://files.example.org/t3d_audit-0.1.0-py3-none-any.whl"),
        ({"url": "file:///home/me/t3d-audit", "dir_info": {"editable": True}}, init_project.PLACEHOLDER_SPEC),
    ):
        monkeypatch.setattr(metadata, "distribution", lambda name, o=origin: Dist(o))
        assert init_project.install_spec()[0] == spec
        assert f'T3D_AUDIT_SPEC: "{spec}"' in init_project.workflow_text()


def test_init_creates_a_pyproject_when_there_is_none(tmp_path):
    assert main(["init", str(tmp_path)]) == 0
    assert tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["t3d-audit"]["profile"] == "default"


def test_init_refuses_to_overwrite_anything_without_force(tmp_path, capsys):
    (tmp_path / "conftest.py").write_text("# mine\n")
    before = '[project]\nname = "mine"\n'
    (tmp_path / "pyproject.toml").write_text(before)
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "conftest.py" in err and "--force" in err
    # nothing was written: not even the files that did not exist
    assert (tmp_path / "conftest.py").read_text() == "# mine\n"
    assert (tmp_path / "pyproject.toml").read_text() == before
    assert not (tmp_path / "audits").exists() and not (tmp_path / WORKFLOW).exists()


def test_force_replaces_only_the_own_tables_of_the_pyproject(tmp_path):
    text = ('[project]\nname = "mine"\n[tool.t3d-audit]\nprofile = "smoke"\n'
            '[tool.t3d-audit.thresholds]\npeak_rho_max = 3.0\n[tool.black]\nline-length = 80\n')
    (tmp_path / "pyproject.toml").write_text(text)
    assert main(["init", str(tmp_path)]) == 2
    assert main(["init", str(tmp_path), "--force"]) == 0
    data = tomllib.loads((tmp_path / "pyproject.toml").read_text())
    assert data["tool"]["black"] == {"line-length": 80} and data["project"]["name"] == "mine"
    assert data["tool"]["t3d-audit"]["profile"] == "default"
    assert "peak_rho_max" not in data["tool"]["t3d-audit"]["thresholds"]


@pytest.mark.parametrize("header", ["[tool.t3d-audit]", '[tool."t3d-audit"]', "[ tool.t3d-audit.thresholds ]"])
def test_without_own_tables_keeps_every_other_table(header):
    text = f'[a]\nx = 1\n{header}\ny = 2\n[tool.t3d-auditx]\nz = 3\n'
    assert without_own_tables(text) == "[a]\nx = 1\n[tool.t3d-auditx]\nz = 3\n"


def test_a_pyproject_that_is_not_toml_is_an_error_naming_it(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[project\n")
    assert main(["init", str(tmp_path)]) == 2
    assert "pyproject.toml" in capsys.readouterr().err


# --- --force edits the pyproject as TOML and keeps what the user set up

_OWN_FORMS = {
    "inline": '[project]\nname = "mine"\n[tool]\nt3d-audit = {profile = "smoke"}\nruff = {line-length = 99}\n',
    "dotted": '[project]\nname = "mine"\n[tool]\nt3d-audit.profile = "smoke"\nt3d-audit.thresholds.peak_rho_max = 3.0\nruff.line-length = 99\n',
    "root-dotted": 'tool.t3d-audit.profile = "smoke"\ntool.ruff.line-length = 99\n[project]\nname = "mine"\n',
    "inline-tool": 'tool = {t3d-audit = {profile = "smoke"}, ruff = {line-length = 99}}\n[project]\nname = "mine"\n',
    "in-a-string": ('[project]\nname = "mine"\ndescription = """\n[tool.t3d-audit]\nprofile = "kept"\n'
                    '[other]\n"""\n[tool.t3d-audit]\nprofile = "smoke"\n[tool.ruff]\nline-length = 99\n'),
    "quoted-arrays": ("[[tool.ruff.per]]\na = 1\n[tool.\"t3d-audit\".thresholds]\npeak_rho_max = 3.0\n"
                      "[[tool.ruff.per]]\na = 2\n[project]\nname = \"mine\"\n"),
}


@pytest.mark.parametrize("form", sorted(_OWN_FORMS))
def test_force_replaces_the_own_table_in_every_toml_form(tmp_path, form):
    text = _OWN_FORMS[form]
    before = tomllib.loads(text)
    (tmp_path / "pyproject.toml").write_text(text)
    assert main(["init", str(tmp_path), "--force"]) == 0
    after = tomllib.loads((tmp_path / "pyproject.toml").read_text())
    assert after["tool"]["t3d-audit"]["profile"] == "default"
    assert after["tool"]["t3d-audit"]["thresholds"] == {"custom": {"max_lighting_dispersion": 0.05}}
    del before["tool"]["t3d-audit"], after["tool"]["t3d-audit"]
    assert after == before  # every other key, and a multi-line string's lines, kept


def test_force_keeps_crlf_line_endings_mode_and_symlink(tmp_path):
    real = tmp_path / "elsewhere" / "pyproject.toml"
    real.parent.mkdir()
    real.write_bytes(b'[project]\r\nname = "mine"\r\n[tool.t3d-audit]\r\nprofile = "smoke"\r\n')
    real.chmod(0o640)
    (tmp_path / "proj").mkdir()
    link = tmp_path / "proj" / "pyproject.toml"
    link.symlink_to(real)
    assert main(["init", str(tmp_path / "proj"), "--force"]) == 0
    assert link.is_symlink() and link.resolve() == real
    data = real.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"") and data.startswith(b'[project]\r\nname = "mine"\r\n')
    assert tomllib.loads(data.decode())["tool"]["t3d-audit"]["profile"] == "default"
    assert real.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("make", ["directory", "latin-1", "dangling-link"])
def test_an_unusable_pyproject_is_a_one_line_error_and_nothing_is_written(tmp_path, capsys, make):
    path = tmp_path / "pyproject.toml"
    if make == "directory":
        path.mkdir()
    elif make == "latin-1":
        path.write_bytes('[project]\nname = "caf\xe9"\n'.encode("latin-1"))
    else:
        path.symlink_to(tmp_path / "nowhere.toml")
    assert main(["init", str(tmp_path), "--force"]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml" in err and "Traceback" not in err
    assert not (tmp_path / "conftest.py").exists() and not (tmp_path / "audits").exists()
    assert not (tmp_path / WORKFLOW).exists()


def test_a_target_in_the_way_stops_init_before_anything_is_written(tmp_path, capsys):
    (tmp_path / "audits").write_text("a file where the folder goes\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    assert main(["init", str(tmp_path), "--force"]) == 2
    assert "audits" in capsys.readouterr().err
    assert not (tmp_path / "conftest.py").exists()
    assert (tmp_path / "pyproject.toml").read_text() == '[project]\nname = "mine"\n'


@pytest.mark.parametrize("value", ["1" * 5000, "[" * 3000 + "]" * 3000])
def test_a_pyproject_too_long_or_deep_for_the_parser_is_one_line_and_nothing_is_written(tmp_path, capsys, value):
    """Regression: tomllib raises a plain ValueError for an integer over 4300 digits
    and RecursionError for deep arrays; init called tomllib directly: a traceback."""
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "mine"\nseed = {value}\n')
    assert main(["init", str(tmp_path), "--force"]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "conftest.py").exists() and not (tmp_path / "audits").exists()


@pytest.mark.parametrize("target", ["conftest.py", "audits", f"audits/test_{'{name}'}.py", ".github"])
@pytest.mark.parametrize("force", [[], ["--force"]])
def test_a_dangling_symlink_target_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys, target, force):
    # regression: a dangling conftest.py link was written through (creating its target
    # wherever it pointed) without a word
    from harness.commands.init_project import AUDIT_NAME

    outside = tmp_path / "outside" / "elsewhere.py"
    root = tmp_path / "proj"
    link = root / target.format(name=AUDIT_NAME)
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    assert main(["init", str(root), *force]) == 2
    err = capsys.readouterr().err
    assert "dangling symlink" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert link.is_symlink() and not outside.exists() and not (tmp_path / "outside").exists()
    assert not (root / "pyproject.toml").exists()


def test_force_keeps_a_copy_of_every_file_it_replaces(tmp_path, capsys):
    (tmp_path / "conftest.py").write_text("# mine\n")
    (tmp_path / "conftest.py.bak").write_text("# an older backup of mine\n")
    own = '[project]\nname = "mine"\n[tool.t3d-audit]\nprofile = "smoke"\n'
    (tmp_path / "pyproject.toml").write_text(own)
    assert main(["init", str(tmp_path), "--force"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "conftest.py.bak").read_text() == "# an older backup of mine\n"
    assert (tmp_path / "conftest.py.bak.1").read_text() == "# mine\n"
    assert (tmp_path / "pyproject.toml.bak").read_text() == own
    assert "replaced conftest.py (the previous one is kept as conftest.py.bak.1)" in out
    assert "pytest_audit_evaluators" in (tmp_path / "conftest.py").read_text()


def test_force_says_it_writes_through_a_link_and_keeps_the_target_s_old_text(tmp_path, capsys):
    shared = tmp_path / "shared" / "conftest.py"
    shared.parent.mkdir()
    shared.write_text("# shared\n")
    root = tmp_path / "proj"
    root.mkdir()
    (root / "conftest.py").symlink_to(shared)
    assert main(["init", str(root), "--force"]) == 0
    out = capsys.readouterr().out
    assert f"replaced conftest.py through its link, in {shared}" in out
    assert (root / "conftest.py").is_symlink() and (root / "conftest.py.bak").read_text() == "# shared\n"
