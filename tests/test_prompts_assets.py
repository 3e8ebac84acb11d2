"""Prompt pool, seeded sample, paraphrase file and the procedural asset library."""

from __future__ import annotations

import json
import re

import pytest

from harness.captions.paraphrase import distinct_levels, load_paraphrases
from harness.core.errors import SceneError
from harness.core.paths import BUNDLED_ASSETS, FIXTURES
from harness.scenes.assets import (
    CATEGORIES,
    VARIANTS,
    build_variant,
    candidates,
    catalogue,
    write_assets,
)
from harness.scenes.prompts import POOL_PATH, load_pool, parse_spec, pool_sha256, sample
from harness.scenes.rewrites import N_REWRITES, rewrites_for

GOOD = {
    "id": "bedroom-99",
    "room_type": "bedroom",
    "prompt_source": "written-terse",
    "style": None,
    "text": "a bed and a lamp on a nightstand",
    "objects": {"bed": 1, "nightstand": 1, "lamp": 1},
    "relations": [["lamp", "on", "nightstand"]],
}


def test_pool_is_large_and_varied():
    pool = load_pool()
    assert len(pool) >= 80
    assert len({p.room_type for p in pool}) >= 8
    assert all(label in CATEGORIES for p in pool for label, _ in p.objects)


def test_sample_is_reproducible_and_recorded():
    pool = load_pool()
    first = sample(pool, 50, 20260)
    assert first == sample(pool, 50, 20260)
    assert [s.id for s in first] == sorted(s.id for s in first)
    assert len({s.room_type for s in first}) >= 8
    assert sample(pool, 50, 1) != first
    doc = json.loads((FIXTURES / "prompts" / "prompts.json").read_text(encoding="utf-8"))
    assert (doc["seed"], doc["n"], doc["pool_sha256"]) == (20260, 50, pool_sha256(POOL_PATH))
    assert [p["id"] for p in doc["prompts"]] == [s.id for s in first]


@pytest.mark.parametrize(
    ("change", "pointer"),
    [
        ({"objects": {"bed": 1, "unicorn": 1}}, "/objects/unicorn"),
        ({"relations": [["lamp", "on", "desk"]]}, "/relations/0/2"),
        ({"relations": [["lamp", "levitating", "nightstand"]]}, "/relations/0/1"),
        ({"id": "Bedroom 1"}, "/id"),
        ({"room_type": "garage"}, "/room_type"),
        ({"objects": {"bed": 0, "nightstand": 1, "lamp": 1}}, "/objects/bed"),
    ],
)
def test_bad_specs_name_the_field(change, pointer):
    with pytest.raises(SceneError) as info:
        parse_spec({**GOOD, **change}, where="pool.jsonl:1")
    assert info.value.pointer == pointer
    assert parse_spec(GOOD).n_objects == 3


def test_paraphrase_file_has_ten_rewrites_and_eight_to_eleven_distinct():
    entries = load_paraphrases()
    specs = {s.id: s for s in sample(load_pool())}
    assert set(entries) == set(specs)
    flags = set()
    for pid, entry in entries.items():
        assert entry.original == specs[pid].text
        assert len(entry.rewrites) == N_REWRITES
        assert 8 <= len(distinct_levels(entry)) <= 11, pid
        flags |= {r.meaning_preserved for r in entry.rewrites}
        assert [r.text for r in entry.rewrites] == [r["text"] for r in rewrites_for(specs[pid])]
    assert flags == {True, False, None}


def _obj_bounds(text):
    verts = [tuple(map(float, line.split()[1:4])) for line in text.splitlines() if line.startswith("v ")]
    return [min(v[i] for v in verts) for i in range(3)], [max(v[i] for v in verts) for i in range(3)]


def test_assets_have_scored_variants_with_exact_nominal_bounds():
    assert len(CATEGORIES) >= 15
    body_colours = set()
    for label, cat in CATEGORIES.items():
        cands = candidates(label)
        assert len(cands) == len(VARIANTS) == 3
        assert cands[-1].asset.endswith("/c.obj")  # the crude variant ranks last
        assert cands[0].retrieval_score > cands[1].retrieval_score > cands[2].retrieval_score
        for variant in VARIANTS:
            text = (BUNDLED_ASSETS / cat.slug / f"{variant}.obj").read_text(encoding="utf-8")
            lo, hi = _obj_bounds(text)
            w, d, h = cat.size
            assert lo == pytest.approx([-w / 2, -d / 2, 0.0], abs=1e-4)
            assert hi == pytest.approx([w / 2, d / 2, h], abs=1e-4)
            mtl = (BUNDLED_ASSETS / cat.slug / f"{variant}.mtl").read_text(encoding="utf-8")
            used = set(re.findall(r"^usemtl (\S+)$", text, re.M))
            assert used == set(re.findall(r"^newmtl (\S+)$", mtl, re.M))
        mesh, _ = build_variant(label, "c")
        assert len(mesh.vertices) == 8  # one box
        body_colours.add(cat.colors[0])
    assert len(body_colours) == len(CATEGORIES)


def test_asset_writer_is_byte_deterministic(tmp_path):
    written = write_assets(tmp_path)
    for rel in written:
        assert (tmp_path / rel).read_bytes() == (BUNDLED_ASSETS.parent / rel).read_bytes(), rel
    assert json.loads((tmp_path / "assets" / "catalogue.json").read_text()) == json.loads(
        json.dumps(catalogue())
    )
