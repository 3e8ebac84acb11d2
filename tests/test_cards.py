"""Evaluator Configuration Card v1.0: schema, deterministic id, validator."""

from __future__ import annotations

import copy
import hashlib
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cards import (
    GROUPS,
    NOT_REPORTED,
    build_card,
    card_id,
    read_card,
    validate_card,
    write_card,
)
from harness.core.errors import CardError
from tests._card_inputs import C0, stats_entry


def make_card(**over):
    kwargs = dict(
        evaluator={
            "evaluator_id": "tiny-a",
            "name": "tiny evaluator A",
            "checkpoint": "fixtures/evaluators/tiny-a.npz",
            "identity_sha256": "ab" * 32,
            "instruction": NOT_REPORTED,
            "decoding": "deterministic",
            "call_date": NOT_REPORTED,
            "prompt_free": False,
        },
        scenes={
            "dataset": "t3d-audit bundled scenes",
            "generators": ["g2", "g1"],
            "n_scenes": 12,
            "n_prompts": 2,
            "scene_set_sha256": "cd" * 32,
        },
        render={
            "renderer": "numpy-box-rasterizer",
            "c0": C0,
            "background": "255",
            "declared_levels": {"pitch": ["0", "45"], "yaw": ["0", "180"]},
        },
        captions={
            "template": "A top-down view of {prompt}",
            "n_templates": 337,
            "paraphrase_rule": "original + rewrites, duplicates collapsed; default render only",
            "prompt_source": "bundled prompts",
        },
        views=[{"pitch_deg": 0, "yaw_deg": 0}, {"pitch_deg": 45, "yaw_deg": 180}],
        stats=stats_entry(),
        bootstrap=200,
        seed=42,
        thresholds={"peak_rho_max": 1.0, "min_kendall_w": 0.5},
        evidence={"raw_score_files": ("released", "scores/tiny-a.csv")},
    )
    kwargs.update(over)
    return build_card(**kwargs)


def test_built_card_validates_and_has_all_groups():
    card = make_card()
    validate_card(card)
    assert set(GROUPS) <= set(card)
    assert card["schema_version"] == "1.0"
    assert card["card_id"].startswith("ecc-v1-sha256:")
    assert len(card["card_id"].split(":")[1]) == 64


def test_card_id_is_sha256_of_canonical_json_without_id():
    card = make_card()
    body = {k: v for k, v in card.items() if k != "card_id"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert card["card_id"] == "ecc-v1-sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_same_inputs_same_id_and_different_inputs_different_id():
    assert make_card()["card_id"] == make_card()["card_id"]
    other = make_card(stats=stats_entry(peak_rho=1.5))
    assert other["card_id"] != make_card()["card_id"]
    assert make_card(seed=43)["card_id"] != make_card()["card_id"]


@pytest.mark.parametrize("group", GROUPS)
def test_schema_rejects_card_missing_a_group(group):
    card = make_card()
    del card[group]
    card["card_id"] = card_id(card)  # a well-formed id does not rescue a missing group
    with pytest.raises(CardError, match="schema"):
        validate_card(card)


def test_schema_rejects_missing_field_inside_group_with_pointer():
    card = make_card()
    del card["render_protocol"]["lighting"]
    card["card_id"] = card_id(card)
    with pytest.raises(CardError) as info:
        validate_card(card)
    assert "#/render_protocol" in str(info.value)
    assert "lighting" in str(info.value)


def test_tampered_card_fails_id_check():
    card = make_card()
    card["score_uncertainty"]["peak_rho"] = 0.5
    with pytest.raises(CardError, match="does not match its content"):
        validate_card(card)


def test_no_stats_gives_partial_card_with_not_reported_fields():
    card = make_card(stats=None)
    validate_card(card)
    status = card["schema_and_status"]
    assert status["evidence_status"] == "partial"
    assert "/score_uncertainty/peak_rho" in status["not_reported_fields"]
    assert card["rank_stability"]["winner_changes"] == NOT_REPORTED
    assert card["companion_check"]["kind"] == NOT_REPORTED


def test_nan_statistics_become_not_reported():
    card = make_card(stats=stats_entry(peak_rho=math.nan, peak_rho_ci=[math.nan, 2.0]))
    validate_card(card)
    assert card["score_uncertainty"]["peak_rho"] == NOT_REPORTED


def test_winner_changes_follows_max_top1():
    assert make_card()["rank_stability"]["winner_changes"] is True
    assert make_card(stats=stats_entry(max_top1=1))["rank_stability"]["winner_changes"] is False


def test_write_and_read_round_trip(tmp_path):
    card = make_card()
    path = tmp_path / "card.json"
    write_card(card, path)
    first = path.read_bytes()
    assert read_card(path) == card
    write_card(read_card(path), path)
    assert path.read_bytes() == first


def test_read_card_names_the_file_on_bad_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(CardError) as info:
        read_card(path)
    assert "bad.json" in str(info.value)


@settings(max_examples=30, deadline=None)
@given(
    rho=st.dictionaries(
        st.sampled_from(["pitch", "yaw", "lighting", "template"]),
        st.floats(min_value=0, max_value=50, allow_nan=False),
        min_size=1,
    ),
    peak=st.floats(min_value=0, max_value=50, allow_nan=False),
)
def test_id_is_independent_of_key_order_and_bound_to_content(rho, peak):
    a = make_card(stats=stats_entry(rho=rho, peak_rho=peak))
    b = make_card(stats=stats_entry(rho=dict(reversed(list(rho.items()))), peak_rho=peak))
    assert a["card_id"] == b["card_id"]
    validate_card(a)
    shuffled = copy.deepcopy(a)
    shuffled["score_uncertainty"]["peak_rho"] = peak + 1.0
    assert card_id(shuffled) != a["card_id"]


def test_card_command_validates_and_identifies(tmp_path, capsys):
    from harness.cli import main

    good = tmp_path / "good.json"
    write_card(make_card(), good)
    bad = tmp_path / "bad.json"
    broken = make_card()
    del broken["view_policy"]
    bad.write_text(json.dumps(broken))
    assert main(["card", "validate", str(good)]) == 0
    assert main(["card", "validate", str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "ok      " in out and "INVALID" in out and "view_policy" in out
    assert main(["card", "id", str(good)]) == 0
    assert capsys.readouterr().out.strip() == make_card()["card_id"]


def _with_served(served):
    return make_card(evaluator={**make_card()["evaluator_identity"], "served_models": served})


def test_served_models_are_recorded_sorted_and_change_the_id():
    one = _with_served(["gpt-4o-2024-11-20", "gpt-4o-2024-08-06", "gpt-4o-2024-11-20"])
    validate_card(one)
    assert one["evaluator_identity"]["served_models"] == ["gpt-4o-2024-08-06", "gpt-4o-2024-11-20"]
    other = _with_served(["gpt-4o-2024-11-20"])
    validate_card(other)
    assert len({one["card_id"], other["card_id"], make_card()["card_id"]}) == 3


def test_no_served_model_leaves_the_card_as_before():
    assert _with_served([]) == make_card()  # local evaluators: same bytes, same id
    assert "served_models" not in make_card()["evaluator_identity"]


def test_schema_rejects_a_malformed_served_models_list():
    from harness.cards.card_format import card_id

    for bad in ([], [""], ["a", "a"], "gpt-4o"):
        card = make_card()
        card["evaluator_identity"]["served_models"] = bad
        card["card_id"] = card_id(card)
        with pytest.raises(CardError, match="evaluator_identity"):
            validate_card(card)


def test_served_models_come_from_the_records_column():
    import pandas as pd

    from harness.cards.assemble import evaluator_fields, served_models
    from harness.evaluators import registry

    frame = pd.DataFrame({"served_model": ["b", "", "a", "b"]})
    assert served_models(frame) == ["a", "b"]
    assert served_models(pd.DataFrame({"score": [1.0]})) == []
    fields = evaluator_fields(registry.get("gpt4o-judge"), ["a", "b"])
    assert fields["served_models"] == ["a", "b"]
