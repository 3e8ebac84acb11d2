"""``t3d-audit claim`` from the command line and from a user's own project: bad input is one
line (exit 2) and leaves ``--out`` untouched; ``--out`` holds every file or none; a project's
own scorer and own scene set (its ``[tool.t3d-audit]``) are what the claim measures.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from harness.claims.inputs import ClaimRequest, project_config
from harness.claims.outputs import OUT_NAMES, write_all
from harness.claims.pipeline import run_claim, write_out
from harness.cli import main
from harness.testing import BoxRasterizer, write_tiny_scene_set
from tests._audit_project import COLORSTAT_CONFTEST

FAST = ["--profile", "smoke", "--search-budget", "4", "--flip-points", "8", "--presets", "mate3d,3dcodebench",
        "--backend", "inline"]  # fmt: skip


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["claim", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("argv", "message"), [
    (["--evaluator", "planted-pitch", "--a", "faithful", "--b", "faithful"], "both name 'faithful'"),
    (["--evaluator", "planted-pitch", "--a", "faithful", "--b", "nobody"], "generator 'nobody' is not in the scene set"),
    (["--evaluator", "no-such-evaluator", "--a", "faithful", "--b", "gridded"], "no-such-evaluator"),
    (["--evaluator", "planted-pitch", "--a", "faithful"], "needs both --a and --b"),
    (["--evaluator", "planted-pitch", "--all-pairs", "--a", "faithful"], "leave out --a and --b"),
    (["--evaluator", "planted-pitch", "--a", "faithful", "--b", "gridded", "--presets", "mate3d,bogus"], "bogus"),
])  # fmt: skip
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    code, stdout, err = _run(capsys, *FAST, *argv, "--cache-dir", str(tmp_path / "cache"), "--out", str(out))
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and stdout == ""
    assert not out.exists()


def _scene_set(root: Path, generators=("g1", "g2"), prompts=("p01", "p02", "p03", "p04")) -> Path:
    return write_tiny_scene_set(root, generators, prompts)


def test_a_generator_missing_from_some_prompts_and_too_few_prompts(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scenes = _scene_set(tmp_path / "set")
    (scenes / "scenes" / "g2-p02.json").unlink()
    from harness.scenes.set_manifest import build_manifest, write_manifest

    write_manifest(scenes, build_manifest(scenes, sorted((scenes / "scenes").glob("*.json"))))
    code, _, err = _run(capsys, "--evaluator", "planted-robust", "--a", "g1", "--b", "g2", "--scenes", str(scenes),
                        *FAST, "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
    assert code == 2 and "generator 'g2' has no scene for 1 of the claim's 2 prompts (p02)" in err, err
    single = _scene_set(tmp_path / "one", prompts=("p01",))
    code, _, err = _run(capsys, "--evaluator", "planted-robust", "--a", "g1", "--b", "g2", "--scenes", str(single),
                        *FAST, "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
    assert code == 2 and "too few prompts: the claim has 1" in err, err


def test_out_holds_every_file_and_the_page_is_self_contained(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    code, stdout, err = _run(capsys, "--evaluator", "planted-pitch", "--a", "faithful", "--b", "gridded", *FAST,
                             "--cache-dir", str(tmp_path / "cache"), "--out", str(out))  # fmt: skip
    assert code == 0, err
    assert "verdict: faithful beats gridded under planted-pitch: depends on the protocol" in stdout
    assert "[not confirmable: 2 prompts (needs 6)]" in stdout
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(["claim.json", "claim.md", "claim.tex", "claim.html", "card.json", "claim_envelope.png",
                              "claim_presets.png"])  # fmt: skip
    doc = json.loads((out / "claim.json").read_text())
    card = json.loads((out / "card.json").read_text())
    assert doc["card_id"] == card["card_id"] and doc["verdict"]["kind"] == "depends"
    page = (out / "claim.html").read_text()
    assert "script-src 'none'" in html.unescape(page) and "<script" not in page
    assert not re.search(r"(src|href)=\"(?!data:|#)", page)  # nothing fetched: data URIs and anchors only
    assert (out / "claim.md").read_text() in stdout  # the terminal shows the Markdown block
    json_code, json_out, _ = _run(capsys, "--evaluator", "planted-pitch", "--a", "faithful", "--b", "gridded", *FAST,
                                  "--cache-dir", str(tmp_path / "cache"), "--json")  # fmt: skip
    assert json_code == 0 and json.loads(json_out)["verdict"] == doc["verdict"]


def test_a_failure_while_writing_leaves_out_as_it_was(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "claim.md").write_text("old")
    import harness.core.fileio as fileio

    real = fileio.write_bytes_atomic
    calls = []

    def failing(path, data, **kw):
        calls.append(path)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(path, data, **kw)

    monkeypatch.setattr(fileio, "write_bytes_atomic", failing)
    with pytest.raises(OSError, match="disk full"):
        write_all(out, {"claim.md": b"new", "claim.tex": b"new"})
    assert (out / "claim.md").read_text() == "old" and sorted(p.name for p in out.iterdir()) == ["claim.md"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no staging folder left
    assert set(OUT_NAMES) >= {"claim.md", "claim.tex"}


def test_out_that_is_a_file_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    taken = tmp_path / "taken"
    taken.write_text("mine")
    code, _, err = _run(capsys, "--evaluator", "planted-pitch", "--a", "faithful", "--b", "gridded", *FAST,
                        "--out", str(taken))  # fmt: skip
    assert code == 2 and "is a file, not a directory" in err and taken.read_text() == "mine"


PYPROJECT = """
[tool.t3d-audit]
profile = "smoke"
evaluators = ["colorstat"]
scenes = "outputs-set"

[tool.t3d-audit.thresholds]
max_worst_case_pair_reversal = 0.0
"""


def test_a_users_own_scorer_and_scenes_from_their_project(tmp_path, monkeypatch):
    """The project's pyproject names the scene set, profile and evaluator; its conftest offers
    the scorer: the claim measures exactly those (the box rasterizer stands in for Blender)."""
    from harness.run.project_evaluators import project_specs

    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / "conftest.py").write_text(COLORSTAT_CONFTEST)
    _scene_set(project / "outputs-set", generators=("mine", "theirs"))
    monkeypatch.chdir(project)
    config = project_config(project)
    assert config.profile == "smoke" and config.evaluators == ("colorstat",)
    request = ClaimRequest("", "mine", "theirs", presets="mate3d,3dcodebench", search_budget=4, flip_points=4)
    result = run_claim(request, cache_dir=tmp_path / "cache", renderer=BoxRasterizer(), config=config,
                       offered=project_specs(project))  # fmt: skip
    doc = result.to_dict()
    assert doc["evaluator"] == "colorstat" and doc["profile"] == "smoke" and doc["scenes"] == "outputs-set"
    assert doc["generators"] == ["mine", "theirs"] and doc["prompts"] == 2
    assert doc["pairs"][0]["search"]["ran"] and len(doc["pairs"][0]["search"]["split"]["held_out"]) == 2
    assert result.verdict.kind in ("holds", "depends", "flips_off_grid", "reversed")
    assert result.card["evaluator_identity"]["evaluator_id"] == "colorstat"
    files = write_out(result, tmp_path / "out", BoxRasterizer())
    assert {p.name for p in files} >= {"claim.md", "claim.tex", "claim.html", "claim_worst_vs_c0.png"}


def test_all_pairs_gives_a_partial_order(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    code, stdout, err = _run(capsys, "--evaluator", "planted-preset", "--all-pairs", "--generators",
                             "faithful,gridded,confused", *FAST, "--search-budget", "0", "--out", str(out),
                             "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
    assert code == 0, err
    doc = json.loads((out / "claim.json").read_text())
    order = doc["partial_order"]
    assert order["order"] == ["faithful", "gridded", "confused"] and len(order["pairs"]) == 3
    classes = {(p["first"], p["second"]): p["class"] for p in order["pairs"]}
    # planted-preset lifts gridded and sinks faithful and confused under mate3d only
    assert classes[("faithful", "gridded")] == "protocol-dependent"
    assert classes[("faithful", "confused")] == "robust"
    assert (out / "claim_matrix.png").is_file() and "pairwise claims hold everywhere tested" in stdout
