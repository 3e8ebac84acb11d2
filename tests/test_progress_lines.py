"""Progress lines of the long phases of an audit that measures (no warm step): each image
evaluator's renders, from the lone process and from xdist workers alike, in ``pytest`` output
and in ``t3d-audit audit --no-warm`` output (pytester subprocesses, the interval near 0)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from harness.core.paths import REPO_ROOT
from tests._audit_project import make_project, run_audit

pytest_plugins = ["pytester"]

# a line per render: the smallest interval T3D_AUDIT_PROGRESS_INTERVAL takes (it must be > 0)
FAST = "0.001"
LINE = re.compile(r"t3d-audit: measuring (tiny-grid|tiny-pairs): fetched (\d+)/(\d+) renders \(\d+%\), "
                  r"\d\d:\d\d elapsed(, about \d\d:\d\d left)?, \d+ rendered now")  # fmt: skip


def progress_counts(text: str) -> dict[str, list[tuple[int, int]]]:
    """Each evaluator's (done, total) progress lines, in order."""
    found: dict[str, list[tuple[int, int]]] = {}
    for match in LINE.finditer(text):
        found.setdefault(match[1], []).append((int(match[2]), int(match[3])))
    return found


def check_progress(text: str) -> None:
    counts = progress_counts(text)
    assert set(counts) == {"tiny-grid", "tiny-pairs"}, text[-3000:]
    for lines in counts.values():
        total = lines[0][1]
        assert total > 1 and all(t == total for _, t in lines)
        assert len(lines) > 1 and lines[-1][0] == total  # more than the last line: progress, not a summary
        assert [n for n, _ in lines] == sorted(n for n, _ in lines)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_measuring_pytest_run_prints_progress_lines(pytester, monkeypatch, workers):
    # regression: a run without the warm step rendered for minutes with no progress line
    make_project(pytester)
    monkeypatch.setenv("T3D_AUDIT_PROGRESS_INTERVAL", FAST)
    result = run_audit(pytester, f"progress{workers}", "-n", workers)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    check_progress(result.stderr.str())


def test_the_audit_command_without_warm_prints_progress_lines(pytester):
    root = make_project(pytester)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "T3D_AUDIT_PROGRESS_INTERVAL": FAST,
           "T3D_AUDIT_CACHE_DIR": str(root / "cache")}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "harness", "audit", "--profile", "smoke", "--no-warm", "--workers", "2",
         "--report-dir", str(root / "reports"), "--", "-p", "no:cacheprovider"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    check_progress(done.stdout + done.stderr)


# -- the preset commands and the presentation probes (in process, the box rasterizer) ------------


@pytest.fixture
def tiny_set(tmp_path):
    from harness.scenes.scene_source import load_scene_set
    from harness.testing import write_tiny_scene_set

    return load_scene_set(write_tiny_scene_set(tmp_path / "set", generators=("g1", "g2"), prompts=("p01",)))


def test_a_preset_study_counts_every_protocols_renders_in_one_progress(tiny_set, tmp_path, monkeypatch, capsys):
    from dataclasses import replace

    from harness.measure.images import render_total
    from harness.peers.measure import StudyProgress, preset_plan, score_protocols
    from harness.protocol.presets import get_preset
    from harness.testing import BoxRasterizer, TinySpec

    monkeypatch.setenv("T3D_AUDIT_PROGRESS_INTERVAL", FAST)
    mate = get_preset("mate3d").scaled(max_views=2, resolution_px=64, samples=1)
    best = replace(mate, name="mate3d-max", aggregation="max")  # the same 2 views, reduced otherwise
    # 2 scenes x 2 views of one pass: 4 renders a protocol
    assert render_total(preset_plan(tiny_set, mate, "-.-.-.-.-")) == 4
    spec = TinySpec("tiny", grid=False)
    study = StudyProgress(spec, tiny_set, [mate, best], "-.-.-.-.-")
    score_protocols(spec, tiny_set, [mate, best], template="-.-.-.-.-", cache_dir=tmp_path / "cache",
                    renderer=BoxRasterizer(), progress_of=study.of)  # fmt: skip
    study.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith("tiny under 2 protocols: fetched ") for line in lines)
    assert lines[-1].startswith("tiny under 2 protocols: fetched 8/8 renders (100%), ")
    done = [int(line.split()[5].split("/")[0]) for line in lines]
    assert done == sorted(set(done)) and len(done) > 1  # lines along the way, not one at the end


def test_a_scene_reading_evaluator_has_no_render_progress(tiny_set, capsys):
    from harness.evaluators.reference.specs import preset_planted_specs
    from harness.peers.measure import StudyProgress
    from harness.protocol.presets import get_preset

    spec = next(s for s in preset_planted_specs() if s.id == "preset-tiling")
    study = StudyProgress(spec, tiny_set, [get_preset("mate3d")], "-.-.-.-.-")
    assert study.bar is None
    study.close()
    assert capsys.readouterr().err == ""


def test_a_presentation_probe_announces_its_renders_and_their_progress(tmp_path, monkeypatch):
    # regression: the probes of an audit under a preset rendered for most of the run, at the
    # preset's own size and outside the warm plan, with no line at all
    from harness.peers.audit_probes import presentation_check
    from harness.testing import TinySpec
    from tests._audit_project import tiny_session

    monkeypatch.setenv("T3D_AUDIT_PROGRESS_INTERVAL", FAST)
    session = tiny_session(tmp_path, [TinySpec("tiny-grid")], view_policy="preset:3dcodebench")
    lines: list[str] = []
    presentation_check(session.inputs, "tiny-grid", "untextured", None, lines.append)
    scenes = len(session.inputs.scene_set.scenes)
    assert lines[0] == (
        f"t3d-audit: presentation probe untextured for tiny-grid: {scenes} scenes under "
        "3dcodebench~untextured=ref and 3dcodebench~untextured=changed (512 px, 16 samples; renders "
        "missing from the render cache are rendered now; this can take minutes)"
    )
    for which in ("ref", "changed"):  # 4 views a scene; lines along the way, the last at the total
        label = f"t3d-audit: measuring tiny-grid under 3dcodebench~untextured={which}: fetched "
        counts = [line.removeprefix(label).split(" ")[0] for line in lines if line.startswith(label)]
        done = [int(c.split("/")[0]) for c in counts]
        assert len(done) > 1 and done == sorted(set(done)) and counts[-1] == f"{4 * scenes}/{4 * scenes}"


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_presentation_probes_of_a_preset_audit_print_progress_lines(pytester, monkeypatch, workers):
    make_project(pytester)
    monkeypatch.setenv("T3D_AUDIT_PROGRESS_INTERVAL", FAST)
    result = run_audit(pytester, f"probes{workers}", "-n", workers, "--audit-view-policy=preset:3dcodebench",
                       "-k", "presentation and tiny-grid")  # fmt: skip
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()[-3000:]
    err = result.stderr.str()
    for probe in ("untextured", "normal_map", "tiled", "points"):
        assert f"t3d-audit: presentation probe {probe} for tiny-grid: " in err, err[-3000:]
        for which in ("ref", "changed"):
            assert re.search(rf"t3d-audit: measuring tiny-grid under 3dcodebench~{probe}={which}: "
                             r"fetched (\d+)/\1 renders \(100%\)", err), err[-3000:]  # fmt: skip


def test_materialize_scoring_prints_each_evaluators_progress(tmp_path, capsys):
    # regression: materialize scored (and rendered what the store lacked) with no progress
    from harness.commands.materialize import score_plan
    from harness.testing import TinySpec
    from tests._audit_project import tiny_session

    specs = [TinySpec("tiny-grid"), TinySpec("tiny-pairs", grid=False)]
    session = tiny_session(tmp_path, specs, store=(tmp_path / "store").as_uri(), store_fill="local")
    score_plan(session, backend="local", log=lambda text: None)
    err = capsys.readouterr().err
    for evaluator in ("tiny-grid", "tiny-pairs"):
        last = [line for line in err.splitlines() if line.startswith(f"scoring {evaluator}: fetched ")][-1]
        assert "renders (100%)" in last, err[-2000:]
