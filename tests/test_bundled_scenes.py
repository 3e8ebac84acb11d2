"""The committed frozen scene set: loads, validates, matches its manifest, rebuilds byte for byte."""

from __future__ import annotations

from collections import Counter

import pytest

from harness.core.paths import BUNDLED_SCENES, FIXTURES
from harness.scenes.bundle import build_scene_set, compare_builds
from harness.scenes.generators import GENERATORS
from harness.scenes.prompts import PROMPTS_PATH, load_prompts
from harness.scenes.sceneset import SceneSet
from harness.scenes.set_manifest import MANIFEST_NAME

FIXTURES_BUDGET = 25 * 1024 * 1024


@pytest.fixture(scope="module")
def bundled():
    return SceneSet.load(BUNDLED_SCENES)


def test_bundled_set_loads_and_has_six_by_fifty(bundled):
    assert len(bundled) == 300
    assert set(bundled.generators) == set(GENERATORS)
    assert len(bundled.prompt_ids) == 50
    assert Counter(s.generator for s in bundled) == {g: 50 for g in GENERATORS}


def test_scenes_carry_their_prompt_spec(bundled):
    specs = {s.id: s for s in load_prompts(PROMPTS_PATH)}
    assert set(specs) == set(bundled.prompt_ids)
    assert len({s.room_type for s in specs.values()}) >= 8
    for scene in bundled:
        spec = specs[scene.prompt_id]
        assert scene.prompt == spec.text
        assert scene.prompt_source == spec.prompt_source
        assert scene.id == f"{scene.generator}.{scene.prompt_id}"
        assert all(o.candidates for o in scene.objects)


def test_fixtures_fit_the_size_budget():
    total = sum(p.stat().st_size for p in FIXTURES.rglob("*") if p.is_file())
    assert total <= FIXTURES_BUDGET, f"fixtures are {total / 2**20:.1f} MiB"


def test_rebuild_reproduces_the_committed_files(tmp_path):
    built = build_scene_set(tmp_path / "scenes", tmp_path / "prompts")
    assert len(built.scene_files) == 300
    assert compare_builds(built, BUNDLED_SCENES, FIXTURES / "prompts") == []
    # and the comparison can fail: a one-byte change in a copy of the manifest is reported
    copy = tmp_path / "copy"
    copy.mkdir()
    data = bytearray((BUNDLED_SCENES / MANIFEST_NAME).read_bytes())
    data[-2] ^= 1
    (copy / MANIFEST_NAME).write_bytes(bytes(data))
    assert compare_builds(built, copy, FIXTURES / "prompts") == [str(copy / MANIFEST_NAME)]
