"""The CLI sees the scorers a project's ``conftest.py`` offers through ``pytest_audit_evaluators``
(``t3d-audit evaluators``, ``score --evaluator``, ``audit --evaluators``), and an id offered
with an identity other than a registered one is refused, naming both sources."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from tests._audit_project import COLORSTAT_CONFTEST, make_project, report_dir

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = COLORSTAT_CONFTEST

ENTRY_MODULE = '''
from harness.evaluators import Scorer


class GreenShare(Scorer):
    name = "greenshare"
    needs_text = False

    def score_batch(self, images, texts):
        return [float(im[..., 1].mean() / 255) for im in images]
'''

CLASHING_CONFTEST = '''
from harness.evaluators import Scorer


class MyGreen(Scorer):
    name = "greenshare"
    version = "2"
    needs_text = False

    def score_batch(self, images, texts):
        return [0.0 for im in images]


def pytest_audit_evaluators(config):
    return [MyGreen]
'''


def _project(root: Path, conftest: str = CONFTEST) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (root / "conftest.py").write_text(conftest)
    return root


def _cli(cwd: Path, *argv: str, site: Path | None = None) -> subprocess.CompletedProcess:
    paths = [str(site)] if site is not None else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(ROOT)]),
           "T3D_AUDIT_CACHE_DIR": str(cwd / "cache")}  # fmt: skip
    return subprocess.run([sys.executable, "-m", "harness", *argv], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120)  # fmt: skip


def _entry_point_site(tmp_path: Path) -> Path:
    """A tiny installed distribution whose ``t3d_audit.evaluators`` entry point is greenshare."""
    site = tmp_path / "site"
    dist = site / "greenshare_pkg-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "greenshare_pkg.py").write_text(ENTRY_MODULE)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: greenshare-pkg\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[t3d_audit.evaluators]\ngreenshare = greenshare_pkg:GreenShare\n"
    )
    return site


def test_evaluators_lists_a_conftest_scorer(tmp_path):
    root = _project(tmp_path / "proj")
    listed = _cli(root, "evaluators", "color*")
    assert listed.returncode == 0, listed.stderr
    assert re.fullmatch(r"colorstat\tcustom\tColorStat\tversion 1, code sha256:[0-9a-f]{16}\tweights:yes\tno-text"
                        r"\tinstall:ok\n", listed.stdout)
    as_json = _cli(root, "evaluators", "--json")
    assert as_json.returncode == 0, as_json.stderr
    rows = {r["id"]: r for r in json.loads(as_json.stdout)}
    assert "clip-vit-b32" in rows and rows["colorstat"]["score_range"] == [0.0, 1.0]
    (root / "sub").mkdir()  # a subfolder of the project sees the root's conftest, as pytest does
    listed = _cli(root / "sub", "evaluators", "colorstat")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("colorstat\t")


def test_score_uses_a_conftest_scorer(tmp_path):
    root = _project(tmp_path / "proj")
    (root / "imgs").mkdir()
    Image.new("RGB", (4, 4), (255, 0, 0)).save(root / "imgs" / "red.png")  # saturation 1
    Image.new("RGB", (4, 4), (51, 51, 51)).save(root / "imgs" / "grey.png")  # saturation 0
    (root / "caps.json").write_text(json.dumps({"red.png": "a", "grey.png": "b"}))
    done = _cli(root, "score", "--evaluator", "colorstat", "--images", "imgs",
                "--captions", "caps.json", "--out", "out.csv")  # fmt: skip
    assert done.returncode == 0, done.stderr
    from harness.protocol.records import read_records

    table = read_records(root / "out.csv").set_index("prompt_id")
    assert table.loc["red", "score"] == pytest.approx(1.0)
    assert table.loc["grey", "score"] == pytest.approx(0.0)


def test_audit_checks_conftest_ids_before_rendering(tmp_path):
    root = _project(tmp_path / "proj")
    done = _cli(root, "audit", "--profile", "smoke", "--evaluators", "colorstat,nosuch")
    assert done.returncode == 2
    assert "no evaluator matches 'nosuch'" in done.stderr
    assert "warm" not in done.stdout  # refused before the warm step


def test_a_clash_with_an_entry_point_names_both_sources(tmp_path):
    site = _entry_point_site(tmp_path)
    root = _project(tmp_path / "proj", CLASHING_CONFTEST)
    done = _cli(root, "evaluators", "greenshare", site=site)
    assert done.returncode == 2, done.stdout
    line = done.stderr.strip().splitlines()[-1]
    assert str(root / "conftest.py") in line
    assert "entry point 'greenshare' (greenshare_pkg:GreenShare)" in line
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--co", "-q"],
                         capture_output=True, text=True, env=env, cwd=root, timeout=120)  # fmt: skip
    assert run.returncode == 4  # the pytest run is refused the same way (a usage error)
    assert "entry point 'greenshare'" in run.stdout + run.stderr


def test_the_same_scorer_registered_and_offered_is_no_clash(tmp_path):
    conftest = CONFTEST.replace("class ColorStat", "@register\nclass ColorStat").replace(
        "import Scorer", "import Scorer, register"
    )
    root = _project(tmp_path / "proj", conftest)
    listed = _cli(root, "evaluators", "colorstat")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("colorstat\t") == 1


def test_a_conftest_that_cannot_be_imported_is_a_clear_error(tmp_path):
    root = _project(tmp_path / "proj", "import no_such_module_here\n")
    done = _cli(root, "evaluators")
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert "could not load the project's conftest files" in last and "conftest.py" in last


def test_no_conftest_starts_no_pytest(tmp_path, monkeypatch):
    import _pytest.config

    import harness.run.project_evaluators as pe

    monkeypatch.setattr(_pytest.config, "main", lambda *a, **k: pytest.fail("pytest started"))
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    assert pe.conftest_files(tmp_path) == []
    assert pe.project_specs(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_audit_command_audits_a_conftest_scorer(pytester, workers):
    pytest.importorskip("xdist")
    root = make_project(pytester)
    renderer = ("from harness.testing import BoxRasterizer\n\n\n"
                "def pytest_audit_renderer(config, cache_dir):\n    return BoxRasterizer()\n")
    (root / "conftest.py").write_text(renderer + CONFTEST)
    done = pytester.run(
        sys.executable, "-m", "harness", "audit", "--profile", "smoke", "--no-warm",
        "--evaluators", "colorstat", "--workers", workers, "--cache-dir", str(root / "cache"),
        "--report-dir", str(root / f"reports-{workers}"), "--", "--audit-bootstrap=20",
        timeout=300,
    )  # fmt: skip
    assert done.ret == 0, done.stdout.str()[-3000:] + done.stderr.str()[-2000:]
    summary = json.loads((report_dir(root, workers) / "summary.json").read_text())
    assert set(summary["evaluators"]) == {"colorstat"}
    assert summary["evaluators"]["colorstat"]["failed"] == 0


PACKAGE_MODULE = '''
from harness.evaluators import Scorer


class Colorfulness(Scorer):
    name = "colorfulness"
    needs_text = False

    def score_batch(self, images, texts):
        return [float(im.std()) for im in images]
'''


def test_the_documented_entry_point_table_installs_a_scorer(tmp_path):
    """docs/evaluators.md's ``[project.entry-points."t3d_audit.evaluators"]`` block, built into
    a wheel by setuptools and unpacked as an installed distribution, offers the scorer."""
    import re
    import zipfile

    pytest.importorskip("setuptools")
    text = (ROOT / "docs" / "evaluators.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "t3d_audit.evaluators" in b)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "my_scorers.py").write_text(PACKAGE_MODULE)
    (pkg / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "my-scorers"\nversion = "0.1"\n\n'
        '[tool.setuptools]\npy-modules = ["my_scorers"]\n\n' + block
    )
    built = subprocess.run(
        [sys.executable, "-c", "import setuptools.build_meta as b; print(b.build_wheel('dist'))"],
        capture_output=True, text=True, cwd=pkg, timeout=120,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    site = tmp_path / "site"
    with zipfile.ZipFile(pkg / "dist" / built.stdout.strip().splitlines()[-1]) as wheel:
        wheel.extractall(site)
    (tmp_path / "elsewhere").mkdir()
    listed = _cli(tmp_path / "elsewhere", "evaluators", "colorfulness", site=site)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("colorfulness\tcustom\tColorfulness\t")


def test_api_audit_refuses_a_missing_audit_path(tmp_path, monkeypatch):
    import _pytest.config

    from harness.api import audit
    from harness.core.errors import AuditError

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_pytest.config, "main", lambda *a, **k: pytest.fail("pytest started"))
    with pytest.raises(AuditError, match="nope: audit path not found"):
        audit(["tiny-grid"], profile="smoke", paths=["nope"])


OWN_AUDIT = '''
from pathlib import Path


def test_my_own_audit(audit_evaluator, audit_summary):
    Path(f"ran-{audit_evaluator}").write_text(str(audit_summary.failed_share))
'''


@pytest.mark.slow
def test_api_audit_runs_the_projects_own_audit_files(pytester):
    root = make_project(pytester)
    (root / "audits").mkdir()
    (root / "audits" / "test_mine_audit.py").write_text(OWN_AUDIT)
    script = root / "run_api.py"
    script.write_text(
        "from harness.api import audit\n"
        "run = audit(['tiny-grid'], profile='smoke', scenes='scenes', paths=['audits'],\n"
        "            report_dir='api-reports', cache_dir='api-cache',\n"
        "            pytest_args=['--audit-bootstrap=20'])\n"
        "print('exit', run.exit_code)\n"
    )
    done = pytester.run(sys.executable, str(script), timeout=300)
    assert done.ret == 0, done.stdout.str()[-3000:] + done.stderr.str()[-3000:]
    assert (root / "ran-tiny-grid").read_text() == "0.0"
    assert done.outlines[-1] in ("exit 0", "exit 1")
