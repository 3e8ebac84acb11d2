"""A project outside this repository audits its own evaluator against an installed wheel.

The project (in a temporary folder) has its own scoring code (a ``Scorer`` in a package of its own,
pip-installed and registered by an entry point in ``t3d_audit.evaluators``), its own scenes (GLBs imported
with ``t3d-audit import-scenes``), one audit file of its own and a ``pyproject.toml`` that
declares a custom threshold and overrides a study threshold. It runs the installed
``audit_tests`` with ``-n 0`` and ``-n 2`` from its folder, with nothing from this checkout on
the path, and a second project on the same machine reuses the first one's renders through the
per-user cache. Also: ``t3d-audit init`` writes a project whose printed commands pass.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.checks.thresholds import study_table

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.slow

SCORING = '''
"""colorstat: scores a render by the mean saturation of its pixels, in [0, 1] (no text)."""
import numpy as np

from harness.evaluators import Scorer


class ColorStat(Scorer):
    name = "colorstat"
    version = "1"
    score_range = (0.0, 1.0)
    needs_text = False

    def score_batch(self, images, texts):
        out = []
        for image in images:
            rgb = np.asarray(image)[..., :3].astype(np.float64) / 255.0
            out.append(float((rgb.max(-1) - rgb.min(-1)).mean()))
        return out
'''

OWN_AUDIT = '''
def test_lighting_dispersion(audit_evaluator, audit_summary, audit_check):
    audit_check.metric(audit_summary, "dispersion", "lighting", threshold="max_lighting_dispersion")
'''

PYPROJECT = '''
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "my-evaluator"
version = "0.0.1"

[project.entry-points."t3d_audit.evaluators"]
colorstat = "colorstat_eval:ColorStat"

[tool.setuptools]
packages = ["colorstat_eval"]

[tool.t3d-audit]
profile = "smoke"
evaluators = ["colorstat"]
scenes = "scenes"

[tool.t3d-audit.thresholds]
peak_rho_max = 7777.0            # overrides the study's 1.0

[tool.t3d-audit.thresholds.custom]
max_lighting_dispersion = 99.0
'''

GLBS = {("gen-a", "p1"): "red_textured", ("gen-a", "p2"): "green_vcol",
        ("gen-b", "p1"): "truck", ("gen-b", "p2"): "tiny"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The package built as a wheel from a copy of the sources and installed into a folder."""
    pytest.importorskip("bpy", reason="the outside project renders with Blender (the render extra)")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("harness", "audit_tests", "fixtures"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"),
                    str(src)], check=True, capture_output=True, cwd=tmp)
    (wheel,) = (tmp / "dist").glob("t3d_audit-*.whl")
    site = tmp / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, cwd=tmp)
    shutil.rmtree(src)
    return site


def _env(site: Path, xdg: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("T3D_AUDIT_") and k not in ("PYTHONPATH", "XDG_CACHE_HOME")}
    # the installed wheel first; the per-user cache in a folder of this test
    return env | {"PYTHONPATH": str(site), "XDG_CACHE_HOME": str(xdg), "PYTHONHASHSEED": "0",
                  "HF_HUB_OFFLINE": "1"}


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1800)


def _glbs(tmp: Path) -> Path:
    out = tmp / "glb"
    if not out.is_dir():
        proc = subprocess.run([sys.executable, str(HERE / "_gltf_fixtures.py"), str(out)],
                              capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def _project(root: Path, glb: Path, env: dict[str, str], version: int = 1) -> tuple[Path, dict]:
    """The user's project: its scoring package pip-installed (into a folder of its own) with
    an entry point, one audit of its own, the pyproject, imported scenes. Returns the project
    and its environment. ``version``: the scorer's (so its scores are its own)."""
    (root / "colorstat_eval").mkdir(parents=True)
    (root / "colorstat_eval" / "__init__.py").write_text(
        SCORING.replace('version = "1"', f'version = "{version}"'))
    (root / "audits").mkdir()
    (root / "audits" / "test_own.py").write_text(OWN_AUDIT)
    (root / "pyproject.toml").write_text(PYPROJECT)
    site = root.parent / f"{root.name}-site"
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "install",
                    "--no-deps", "--no-build-isolation", "--target", str(site), str(root)],
                   check=True, capture_output=True, cwd=root.parent)
    for left in ("build", "my_evaluator.egg-info"):  # what an in-tree build leaves
        shutil.rmtree(root / left, ignore_errors=True)
    shutil.rmtree(root / "colorstat_eval")  # only the installed package, found by its entry point
    env = env | {"PYTHONPATH": os.pathsep.join([env["PYTHONPATH"], str(site)])}
    outputs = root / "outputs"
    for (gen, pid), name in GLBS.items():
        (outputs / gen).mkdir(parents=True, exist_ok=True)
        shutil.copy(glb / f"{name}.glb", outputs / gen / f"{pid}.glb")
    (root / "prompts.csv").write_text("id,prompt,label\np1,a red cube,cube\np2,a small cube,\n")
    proc = _run(["-m", "harness", "import-scenes", "outputs", "--prompts", "prompts.csv",
                 "--out", "scenes"], root, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return root, env


def _audit(root: Path, env: dict[str, str], workers: str) -> tuple[subprocess.CompletedProcess, dict]:
    proc = _run(["-m", "pytest", "--pyargs", "audit_tests", "audits", "-p", "no:cacheprovider",
                 "-n", workers, "--dist", "loadgroup"], root, env)
    text = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode in (0, 1), text  # a verdict (fragility may fail checks), not an error
    (run,) = [p for p in (root / "reports").iterdir() if not p.name.startswith(".")]
    return proc, json.loads((run / "results.json").read_text())


def _thresholds(results: dict) -> dict[str, set[float]]:
    """threshold name -> the values the run's checks compared against."""
    out: dict[str, set[float]] = {}
    for result in results["results"]:
        for check in result["checks"]:
            out.setdefault(check["threshold_name"], set()).add(check["threshold"])
    return out


def test_an_outside_project_audits_its_own_evaluator_with_the_installed_package(installed, tmp_path):
    xdg = tmp_path / "user-cache"
    env = _env(installed, xdg)
    probe = _run(["-c", "import harness, audit_tests; print(harness.__file__); print(audit_tests.__file__)"],
                 tmp_path, env)
    assert probe.returncode == 0 and str(ROOT) not in probe.stdout, probe.stdout + probe.stderr
    assert all(line.startswith(str(installed)) for line in probe.stdout.split()), probe.stdout

    glb = _glbs(tmp_path)
    first, first_env = _project(tmp_path / "first", glb, env)
    listed = _run(["-m", "harness", "evaluators"], first, first_env)
    assert "colorstat" in listed.stdout, listed.stdout[-2000:] + listed.stderr[-2000:]
    runs = {}
    for workers in ("0", "2"):
        proc, results = _audit(first, first_env, workers)
        runs[workers] = results
        assert results["complete"] is True and results["evaluators"] == ["colorstat"]
        tests = {r["test"].split("::")[0] for r in results["results"]}
        assert "audits/test_own.py" in tests and "audit_tests/test_configuration_ratio.py" in tests
        used = _thresholds(results)
        # the study's checks ran with the built-in thresholds, the override and custom applied
        assert used["peak_rho_max"] == {7777.0}
        assert used["max_lighting_dispersion"] == {99.0}
        for name in ("min_kendall_w", "max_top1_count", "max_failed_share"):
            assert used[name] == {float(study_table()[name])}, name
        study = [r for r in results["results"] if r["test"].startswith("audit_tests/") and r["checks"]]
        assert len(study) >= 10
    assert [(r["test"], r["outcome"]) for r in runs["0"]["results"]] == \
        [(r["test"], r["outcome"]) for r in runs["2"]["results"]]
    assert not (installed / "reports").exists()  # the report went to the project, not the package
    renders = xdg / "t3d-audit" / "renders"
    assert renders.is_dir() and not (first / ".audit_cache").exists()

    # another project of the same user, its own version of the scoring code (so nothing of it
    # is cached), the same generator outputs: every render comes from the first one's
    images = sorted(renders.rglob("image.png"))
    second, second_env = _project(tmp_path / "second", glb, env, version=2)
    proc, results = _audit(second, second_env, "0")
    assert results["evaluators"] == ["colorstat"] and (second / "reports").is_dir()
    assert "(0 rendered by the tests, " in proc.stdout, proc.stdout[-3000:]
    assert sorted(renders.rglob("image.png")) == images and images


def test_init_writes_a_project_whose_printed_commands_pass(tmp_path):
    pytest.importorskip("bpy", reason="the printed audit renders with Blender (the render extra)")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "mine"\nversion = "0"\n')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(ROOT)}
    if not (env.get("T3D_AUDIT_CACHE_DIR") or env.get("TOX_ENV_DIR")):
        # never the real per-user cache; under tox, XDG_CACHE_HOME is inside its environment
        # (tox.ini), where the smoke renders of the bundled scenes are kept between runs
        env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")
    cli = shutil.which("t3d-audit", path=str(Path(sys.executable).parent)) or "t3d-audit"
    init = subprocess.run([cli, "init"], cwd=project, env=env, capture_output=True, text=True)
    assert init.returncode == 0, init.stderr
    text = (project / "pyproject.toml").read_text()
    assert text.startswith('[project]\nname = "mine"') and "[tool.t3d-audit]" in text
    printed = [line.split("#")[0].strip() for line in init.stdout.splitlines()
               if line.startswith("  t3d-audit ")]
    assert printed and "--profile smoke" in printed[0]
    quick = subprocess.run(printed[0].split(), cwd=project, env=env | {"PATH": str(Path(cli).parent)
                           + os.pathsep + env.get("PATH", "")}, capture_output=True, text=True,
                           timeout=1800)
    assert quick.returncode == 0, quick.stdout[-4000:] + quick.stderr[-2000:]
    assert "t3d-audit audit: verdict" in quick.stdout
    (run,) = [p for p in (project / "reports").iterdir() if not p.name.startswith(".")]
    results = json.loads((run / "results.json").read_text())
    assert "audits/test_colorstat_audit.py::test_lighting_dispersion[colorstat]" in \
        {r["test"] for r in results["results"]}
    again = subprocess.run([cli, "init"], cwd=project, env=env, capture_output=True, text=True)
    assert again.returncode == 2 and "--force" in again.stderr
    _run_the_workflow_gate(project, env | {"PATH": str(Path(cli).parent) + os.pathsep + env.get("PATH", "")})


def _run_the_workflow_gate(project: Path, env: dict[str, str]) -> None:
    """The written workflow's own steps, in order, as CI runs them (bash -e -o pipefail), on the
    smoke profile: the first release has no baseline and becomes one; a next one (the same
    release again) is compared with it and the comparison gates."""
    yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflow back")
    steps = yaml.safe_load((project / ".github/workflows/t3d-audit.yml").read_text())["jobs"]["audit"]["steps"]
    runs = {s["name"]: s["run"] for s in steps if "run" in s}

    def step(name: str) -> subprocess.CompletedProcess:
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", runs[name]], cwd=project,
                              env=env | {"T3D_AUDIT_PROFILE": "smoke"}, capture_output=True, text=True,
                              timeout=1800)  # fmt: skip
        assert done.returncode == 0, (name, done.stdout[-3000:] + done.stderr[-2000:])
        return done

    step("Audit")
    assert (project / "baselines" / "candidate" / "scores").is_dir()
    assert "no baseline yet" in step("Gate on the release comparison").stdout
    step("Keep this release as the baseline")
    assert (project / "baselines" / "release" / "scores").is_dir()
    shutil.copytree(project / "baselines" / "release", project / "baselines" / "candidate")  # the same release again
    gate = step("Gate on the release comparison")
    assert gate.stdout.strip().splitlines()[-1].startswith("gate PASS: no confirmed regression"), gate.stdout[-2000:]
    assert (project / "reports" / "comparison" / "comparison.json").is_file()
