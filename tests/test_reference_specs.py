"""Registry entries of the reference evaluators (no model is loaded here)."""

from __future__ import annotations

import math

from harness.core.paths import REPO_ROOT
from harness.evaluators import registry
from harness.evaluators.reference import specs as ref
from harness.evaluators.reference.companion import CompanionEvaluator
from harness.evaluators.reference.items import ScoreItem
from harness.evaluators.reference.planted import PLANTED_IDS, PlantedEvaluator
from harness.evaluators.reference.scene_measure import is_scene_evaluator


def test_ids_and_scene_routing():
    planted = ref.planted_specs()
    assert [s.id for s in planted] == list(PLANTED_IDS)
    assert all(is_scene_evaluator(s) and s.needs_text for s in planted)
    comp = ref.companion_spec()
    assert is_scene_evaluator(comp) and not comp.needs_text
    for spec in ref.reference_specs():
        assert spec.id in ref.REFERENCE_IDS
        assert is_scene_evaluator(spec) == (spec.id == "companion")


def test_models_listed_only_with_their_weights():
    ids = {s.id for s in ref.reference_specs()}
    for model_id in ("ref-vit-clip", "ref-rn-clip", "ref-siglip"):
        assert (model_id in ids) == (REPO_ROOT / ref.weights_path(model_id)).is_file()
    assert ("ref-clipiqa" in ids) == ("ref-vit-clip" in ids)
    for spec in ref.reference_specs():
        if spec.id.startswith("ref-"):
            assert spec.checkpoint_sha256 and spec.option("model_config")
            assert spec.weights_available()


def test_scene_specs_build_without_torch_and_fail_cleanly():
    comp = ref.companion_spec().build()
    assert isinstance(comp, CompanionEvaluator) and comp.needs_render is False
    for spec in ref.planted_specs():
        ev = spec.build()
        assert isinstance(ev, PlantedEvaluator) and ev.id == spec.id
    res = comp.score_items([ScoreItem(None, {"id": "p", "objects": {"bed": 1}}, "")])
    assert res[0].status == "failed" and math.isnan(res[0].score)


def test_registering_the_reference_set_again_is_idempotent():
    first = [registry.register(s, replace=False) for s in ref.all_reference_specs()]
    again = [registry.register(s, replace=False) for s in ref.all_reference_specs()]
    assert [s.id for s in first] == [s.id for s in again]
    chosen = {s.id for s in registry.select(["planted-*", "companion"])}
    assert chosen == {*PLANTED_IDS, "companion"}
    # the registry loads them by itself too (after the Table 12 built-ins)
    assert {s.id for s in registry.all_specs()} >= {s.id for s in first}
