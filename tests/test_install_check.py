"""What this install can run, said before anything loads: ``evaluators`` marks each evaluator
``install:ok`` or names the missing modules and the pip extra; an audit or a materialize of an
evaluator it cannot run stops with one line before the first render; ``plan --estimate`` without
torch treats the machine as CPU-only instead of raising."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from harness.cli import main
from harness.evaluators import families, registry

ABSENT = "t3d_audit_absent_module_for_tests"


@pytest.fixture
def needy():
    """The bundled ref-vit-clip's family, made to require a module no install has."""
    saved = families.FAMILIES.snapshot()
    family = families.get_family("open_clip")
    families.register_family(replace(family, requires=(*family.requires, ABSENT)), replace=True)
    try:
        yield registry.get("ref-vit-clip")
    finally:
        families.FAMILIES.restore(saved)


def test_a_family_names_what_it_lacks_and_the_extra():
    family = families.Family("t3d-test-needs", "harness.evaluators.judge:build", requires=("json", ABSENT))
    assert family.missing() == (ABSENT,)
    assert family.install_problem() == (f"needs {ABSENT}, which this install lacks: "
                                        "pip install 't3d-audit[models]'")  # fmt: skip
    assert families.Family("t3d-test-ok", "harness.evaluators.judge:build", requires=("json",)).missing() == ()


def test_listing_marks_each_evaluator(needy, capsys):
    assert main(["evaluators", "ref-vit-clip", "companion"]) == 0
    lines = dict(line.split("\t", 1) for line in capsys.readouterr().out.splitlines())
    assert lines["companion"].endswith("\tinstall:ok")
    assert lines["ref-vit-clip"].endswith(f"\tinstall:missing (needs {ABSENT}, which this install lacks: "
                                          "pip install 't3d-audit[models]')")  # fmt: skip
    assert main(["evaluators", "ref-vit-clip", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert ABSENT in row["install_problem"]


def test_an_audit_of_an_evaluator_this_install_cannot_run_is_one_line(needy, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["audit", "--profile", "smoke", "--evaluators", "ref-vit-clip,companion"])
    err = capsys.readouterr()
    text = err.out + err.err
    assert code != 0 and "Traceback" not in text
    assert f"ref-vit-clip cannot run in this install: needs {ABSENT}" in text
    assert not (tmp_path / "reports").exists()  # stopped before the warm step and the run


def test_plan_without_torch_is_cpu_only(monkeypatch):
    import harness.evaluators._torch as torch_helpers
    from harness.commands.plan import _has_cuda

    def no_torch(device):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(torch_helpers, "resolve_device", no_torch)
    assert _has_cuda() is False
