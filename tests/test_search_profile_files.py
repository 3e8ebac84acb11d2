"""Profile files and ``search --save-level NAME --into FILE`` against hostile input
(docs/search.md "Saving a confirmed worst configuration"): duplicates, foreign files, odd
targets, non-finite and huge values, too many levels; each is one line, and ``--save-level``
is checked before the search runs."""

from __future__ import annotations

import json
import os

import pytest

from harness.cli import main
from harness.protocol.profiles import get_profile
from harness.search.saved_levels import (
    MAX_SAVED_LEVELS,
    SavedLevelError,
    check_save_target,
    load_profile_file,
    save_level,
)
from harness.search.space import space_for

SPACE = space_for(get_profile("smoke"))
POINT = SPACE.text(SPACE.point({"pitch": 55.0, "colour_temperature": 2500.0}))
OTHER = SPACE.text(SPACE.point({"pitch": 10.0}))


def _file(tmp_path, text: str):
    path = tmp_path / "mine.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_level_named_twice_is_refused_naming_both_lines(tmp_path):
    path = _file(tmp_path, '{"smoke": {"saved_levels": {\n'
                           f'  "offgrid": "{POINT}",\n'
                           f'  "offgrid": "{OTHER}"\n'
                           "}}}\n")  # fmt: skip
    with pytest.raises(SavedLevelError) as caught:
        load_profile_file(path)
    message = str(caught.value)
    assert "'offgrid' is given twice" in message and "lines 2 and 3" in message and "\n" not in message


def test_a_profile_named_twice_is_refused(tmp_path):
    body = json.dumps({"saved_levels": {"a": POINT}})
    path = _file(tmp_path, f'{{"smoke": {body},\n"smoke": {{"saved_levels": {{}}}}}}')
    with pytest.raises(SavedLevelError, match=r"'smoke' is given twice in one object \(lines 1 and 2\)"):
        load_profile_file(path)
    with pytest.raises(SavedLevelError, match="given twice"):  # --into reads it the same way
        save_level(path, "smoke", "b", POINT)


def test_the_same_level_name_under_two_profiles_is_no_duplicate(tmp_path):
    path = _file(tmp_path, json.dumps({"smoke": {"saved_levels": {"a": POINT}},
                                       "paper": {"saved_levels": {}}}))  # fmt: skip
    assert set(load_profile_file(path)) == {"smoke", "paper"}


@pytest.mark.parametrize("text", [
    '{"name": "my settings", "values": [1, 2]}', '[1, 2, 3]', '{"smoke": 3}',
    '{"smoke": {"levels": {}}}', '{"smoke": {"saved_levels": {"a": "pitch=400"}}}',
])  # fmt: skip
def test_into_a_foreign_json_file_is_refused_and_the_file_left_as_it_is(tmp_path, text):
    path = _file(tmp_path, text)
    with pytest.raises(SavedLevelError):
        save_level(path, "smoke", "offgrid", POINT)
    with pytest.raises(SavedLevelError):
        check_save_target(path, "smoke", "offgrid")
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("kind", ["symlink", "dangling symlink", "folder", "fifo", "dev null"])
def test_into_a_target_that_is_no_plain_file_is_refused(tmp_path, kind):
    path = tmp_path / "into.json"
    outside = tmp_path / "outside.json"
    if kind == "symlink":
        outside.write_text("{}")
        path.symlink_to(outside)
    elif kind == "dangling symlink":
        path.symlink_to(outside)
    elif kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path = type(path)(os.devnull)
    with pytest.raises(SavedLevelError, match=r"symlink|folder|not a regular file"):
        save_level(path, "smoke", "offgrid", POINT)
    assert not outside.exists() or outside.read_text() == "{}"


@pytest.mark.parametrize("name", ["", "../x", "a/b", "-x", ".hidden", "a b", "x" * 65, "a\nb", "<script>",
                                  "naïve", "a;rm", "NUL\x00"])  # fmt: skip
def test_a_hostile_level_name_is_refused(tmp_path, name):
    with pytest.raises(SavedLevelError, match="bad level name"):
        save_level(tmp_path / "mine.json", "smoke", name, POINT)
    assert not (tmp_path / "mine.json").exists()


@pytest.mark.parametrize(("search", "words"), [
    ('{"budget": NaN}', "NaN is not a JSON number"), ('{"budget": Infinity}', "Infinity"),
    ('{"budget": -Infinity}', "-Infinity"), ('{"budget": 1e400}', "[1, 100000]"),
    ('{"budget": 18446744073709551616}', "[1, 100000]"), ('{"budget": -5}', "[1, 100000]"),
    ('{"seed": 9223372036854775808}', "[0, 9223372036854775807]"),
    ('{"flip_points": 1000000000}', "[0, 65536]"), ('{"split": [2, 1000000000]}', "[2, 100000]"),
    ('{"budget": 1' + "0" * 5000 + "}", "integer too long"),
])  # fmt: skip
def test_a_hand_written_search_block_with_hostile_numbers_is_one_line(tmp_path, search, words):
    path = _file(tmp_path, '{"smoke": {"search": ' + search + ', "saved_levels": {}}}')
    with pytest.raises(SavedLevelError) as caught:
        load_profile_file(path)
    assert words in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("point", ["pitch=nan", "pitch=inf", "pitch=-inf", "pitch=1e400", "resolution=100000",
                                   "resolution=-1", "pitch=" + "9" * 5000, "pitch=-91"])  # fmt: skip
def test_a_hand_written_level_with_hostile_values_is_refused(tmp_path, point):
    full = ",".join(part if not part.startswith(point.split("=")[0] + "=") else point for part in POINT.split(","))
    path = _file(tmp_path, json.dumps({"smoke": {"saved_levels": {"x": full}}}))
    with pytest.raises(SavedLevelError) as caught:
        load_profile_file(path)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 600
    assert "mine.json#/smoke/saved_levels/x" in str(caught.value)  # the file and the level, not "point/pitch"


def test_more_levels_than_the_limit_are_refused(tmp_path):
    levels = {f"l{i}": POINT for i in range(MAX_SAVED_LEVELS + 1)}
    path = _file(tmp_path, json.dumps({"smoke": {"saved_levels": levels}}))
    with pytest.raises(SavedLevelError, match=f"more than {MAX_SAVED_LEVELS}"):
        load_profile_file(path)
    path = _file(tmp_path, json.dumps({"smoke": {"saved_levels": {f"l{i}": POINT for i in range(10**5)}}}))
    with pytest.raises(SavedLevelError, match=f"100000 saved levels, more than {MAX_SAVED_LEVELS}"):
        load_profile_file(path)


def test_a_bad_save_level_is_refused_before_the_search_runs(tmp_path, capsys):
    """The name and the target are checked first: no search (no trial log, no cache)."""
    cache = tmp_path / "cache"
    foreign = _file(tmp_path, '{"name": "not a profile file"}')
    for name, into in (("../x", tmp_path / "new.json"), ("good", foreign), ("good", tmp_path)):
        code = main(["search", "--evaluator", "planted-offgrid", "--budget", "8", "--no-progress",
                     "--cache-dir", str(cache), "--save-level", name, "--into", str(into)])  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, err
        assert not cache.exists()
    assert foreign.read_text() == '{"name": "not a profile file"}'
