"""A confirmed worst configuration saved into a user profile file as a named level
(``search --save-level NAME --into FILE``, :mod:`harness.search.saved_levels`)."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.protocol.profiles import PROFILES_FILE, get_profile
from harness.render.cache import render_key
from harness.search.saved_levels import (
    SavedLevelError,
    load_profile_file,
    save_level,
    saved_configurations,
)
from harness.search.space import space_for

POINT = {"pitch": 52.0, "colour_temperature": 2500.0, "framing_margin": 0.47, "template": "-.-.-.-.-"}


def test_a_saved_level_round_trips_to_the_same_configuration_and_render_key(tmp_path):
    space = space_for(get_profile("smoke"))
    point = space.point(POINT)
    path = save_level(tmp_path / "mine.json", "smoke", "offgrid-1", space.text(point))
    saved = load_profile_file(path)["smoke"]
    assert saved.levels == {"offgrid-1": space.text(point)}
    assert saved.profile.levels == get_profile("smoke").levels  # started from the bundled profile
    again = saved_configurations(saved)["offgrid-1"]
    assert again == space.configuration(point)
    assert render_key("scene", again.render) == render_key("scene", space.configuration(point).render)
    assert (again.background, again.template) == (space.configuration(point).background, "-.-.-.-.-")


def test_saving_again_keeps_other_levels_and_replaces_a_same_name(tmp_path):
    space = space_for(get_profile("smoke"))
    path = tmp_path / "mine.json"
    save_level(path, "smoke", "a", space.text(space.point({"pitch": 10.0})))
    save_level(path, "smoke", "b", space.text(space.point({"pitch": 20.0})))
    save_level(path, "smoke", "a", space.text(space.point({"pitch": 30.0})))
    levels = load_profile_file(path)["smoke"].levels
    assert set(levels) == {"a", "b"} and "pitch=30" in levels["a"] and "pitch=20" in levels["b"]


@pytest.mark.parametrize(
    ("level", "point", "words"),
    [("bad name!", "pitch=10", "bad level name"), ("ok", "pitch=10,nonsense=3", "unknown axis")],
)
def test_bad_levels_are_one_line_errors_and_write_nothing(tmp_path, level, point, words):
    with pytest.raises(SavedLevelError, match=words):
        save_level(tmp_path / "mine.json", "smoke", level, point)
    assert not (tmp_path / "mine.json").exists()


def test_the_bundled_profiles_file_is_never_written():
    before = PROFILES_FILE.read_bytes()
    with pytest.raises(SavedLevelError, match="bundled"):
        save_level(PROFILES_FILE, "smoke", "x", "pitch=10")
    assert PROFILES_FILE.read_bytes() == before


def test_cli_saves_the_confirmed_offgrid_worst_case(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("T3D_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    into = tmp_path / "release.json"
    common = ["search", "--profile", "smoke", "--objective", "pair:faithful,gridded", "--budget", "64",
              "--seed", "0", "--json", "--no-progress", "--save-level", "offgrid", "--into", str(into)]
    assert main([*common[:1], "--evaluator", "planted-offgrid", *common[1:]]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["confirmed"] is True
    saved = load_profile_file(into)["smoke"]
    assert saved.levels["offgrid"] == doc["worst"]["text"]
    cfg = saved_configurations(saved)["offgrid"]
    assert cfg.render.to_dict() == doc["worst"]["render"]
    # nothing confirmed: nothing saved, one line, exit 1
    assert main([*common[:1], "--evaluator", "planted-robust", *common[1:-1], str(tmp_path / "no.json")]) == 1
    assert "no confirmed worst configuration" in capsys.readouterr().err
    assert not (tmp_path / "no.json").exists()
    assert main(["search", "--evaluator", "planted-robust", "--save-level", "x"]) == 2
