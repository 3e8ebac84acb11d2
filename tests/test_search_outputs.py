"""What a search writes and shows (docs/search.md): ``--out`` never writes through a symlink
nor trips over a folder; no markup, formula or secret reaches its outputs from an objective,
a saved level or a failure reason."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from harness.cli import main
from harness.core.errors import ProtocolError
from harness.evaluators.reference.specs import search_planted_specs
from harness.protocol.profiles import _parse_search, get_profile
from harness.search import evaluate
from harness.search.evaluate import PointScorer
from harness.search.pipeline import SearchError, SearchRequest, run_search
from harness.search.saved_levels import SavedLevelError, load_profile_file
from harness.search.space import space_for

SPACE = space_for(get_profile("smoke"))
POINT = SPACE.text(SPACE.point({"pitch": 55.0}))
API_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"


@pytest.mark.parametrize("name", ["search.json", "search_trace.png", "search_flip_region.png"])
def test_out_refuses_a_symlink_among_its_files_before_the_search(tmp_path, capsys, name):
    out, outside = tmp_path / "out", tmp_path / "outside.txt"
    out.mkdir()
    outside.write_text("keep me")
    (out / name).symlink_to(outside)
    code = main(["search", "--evaluator", "planted-offgrid", "--budget", "8", "--no-progress",
                 "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "is a symlink" in err, err
    assert outside.read_text() == "keep me" and not (tmp_path / "cache").exists()


def test_out_refuses_a_folder_where_a_file_goes(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "search.json").mkdir(parents=True)
    code = main(["search", "--evaluator", "planted-offgrid", "--budget", "8", "--no-progress",
                 "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "is a folder" in err, err


def test_a_figure_replaces_a_symlink_instead_of_writing_through_it(tmp_path):
    from harness.report.search_figures import trace_figure

    outside = tmp_path / "outside.png"
    outside.write_bytes(b"keep me")
    target = tmp_path / "trace.png"
    target.symlink_to(outside)
    trace_figure({"trace": [0.1, None, 0.3], "evaluator": "e", "profile": "smoke", "objective": "shift"}, target)
    assert outside.read_bytes() == b"keep me"
    assert not target.is_symlink() and target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("objective", ["pair:<script>alert(1)</script>,faithful", "pair:=HYPERLINK(\"x\"),b",
                                       "pair:a,b\nc", "pair:a|b,c", "pair:$\\alpha$,b", "shift\n", "pair:a,a",
                                       "pair:" + "a" * 101 + ",b", "pair:a\u202eb,c"])  # fmt: skip
def test_an_objective_is_only_ever_shift_ranking_or_a_pair_of_names(tmp_path, objective):
    with pytest.raises(ProtocolError, match="is not shift, ranking or pair:A,B"):
        _parse_search({"objective": objective}, "file#/smoke/search")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"smoke": {"saved_levels": {"x": {"point": POINT, "objective": objective}}}}))
    with pytest.raises(SavedLevelError, match="is not shift, ranking or pair:A,B") as caught:
        load_profile_file(path)
    assert "\n" not in str(caught.value)


def test_a_hand_written_point_is_kept_in_its_printed_form(tmp_path):
    """A point spaced or reordered by hand reaches the manifest and test ids as the search
    prints it, never with the file's line breaks."""
    parts = POINT.split(",")
    messy = " ,\n ".join(reversed(parts))
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"smoke": {"saved_levels": {"x": messy}}}))
    assert load_profile_file(path)["smoke"].levels == {"x": POINT}


def _failing_measure(*args, **kwargs):
    plan = args[1]
    return pd.DataFrame([{"generator": r.generator, "prompt_id": r.prompt_id, "factor": r.factor,
                          "level": r.level, "status": "failed", "score": float("nan"),
                          "error": f"HTTP 401 for https://api.example/v1?key={API_KEY}\n  at line 3"}
                         for r in plan.rows])  # fmt: skip


def test_a_failure_reason_carrying_an_api_key_is_scrubbed_and_one_line(tmp_path, monkeypatch):
    from harness.scenes.scene_source import load_scene_set

    monkeypatch.setenv("JUDGE_API_KEY", API_KEY)
    monkeypatch.setattr(evaluate, "measure", _failing_measure)
    spec = next(s for s in search_planted_specs() if s.id == "planted-offgrid")
    scenes = load_scene_set(None).select_for_profile(2, None)
    (measured,) = PointScorer(spec, scenes, None, tmp_path).measure([SPACE.configuration(SPACE.c0)])
    assert not measured.ok and API_KEY not in measured.error and "4f9a8b7c" not in measured.error
    assert "\n" not in measured.error and "HTTP 401" in measured.error
    with pytest.raises(SearchError) as caught:
        run_search(SearchRequest("planted-offgrid", "smoke", budget=8), cache_dir=tmp_path, spec=spec,
                   log_path=tmp_path / "log.jsonl")  # fmt: skip
    assert API_KEY not in str(caught.value) and "4f9a8b7c" not in str(caught.value)
