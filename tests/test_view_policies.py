"""View policies (``--audit-view-policy``): the views each policy looks at, the plan, the
aggregation of view scores, the records column, the card, and the option end to end."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from harness.core.errors import ProtocolError
from harness.protocol.configurations import BLOCK, Configuration, RenderConfig
from harness.protocol.profiles import get_profile
from harness.protocol.view_policies import VIEW_POLICIES, check_view_policy, policy_views
from harness.testing import TinySpec
from tests._audit_project import (
    baseline_image_and_views,
    make_project,
    report_dir,
    run_audit,
    tiny_session,
)

pytest_plugins = ["pytester"]


def _cfg(factor="baseline", level="c0", **render):
    return Configuration(factor, level, RenderConfig(**render))


def _poses(views):
    return [(v.pitch_deg, v.yaw_deg) for v in views]


def test_single_is_the_configuration_itself():
    cfg = _cfg(pitch_deg=0.0)
    assert policy_views(cfg, "single", 45.0) == (cfg.render,)


def test_c0_of_a_room_turns_at_the_yaw_sweep_pitch():
    assert _poses(policy_views(_cfg(pitch_deg=0.0), "mean4", 45.0)) == [
        (45.0, 0.0), (45.0, 90.0), (45.0, 180.0), (45.0, 270.0)]


def test_levels_that_set_the_pitch_keep_it():
    pitch = _cfg("pitch", "90", pitch_deg=90.0)
    assert {p for p, _ in _poses(policy_views(pitch, "max4", 45.0))} == {90.0}
    yaw = _cfg("yaw", "45", pitch_deg=45.0, yaw_deg=45.0)
    assert _poses(policy_views(yaw, "sheet4", 45.0)) == [
        (45.0, 45.0), (45.0, 135.0), (45.0, 225.0), (45.0, 315.0)]
    cell = _cfg(BLOCK, "lighting=night,pitch=0", pitch_deg=0.0, lighting="night")
    views = policy_views(cell, "mean4", 45.0)
    assert {p for p, _ in _poses(views)} == {0.0} and {v.lighting for v in views} == {"night"}
    other = _cfg(BLOCK, "focal_length=35,background=red", pitch_deg=0.0, focal_length_mm=35.0)
    assert {p for p, _ in _poses(policy_views(other, "mean4", 45.0))} == {45.0}


def test_objects_turn_at_their_own_c0_pitch():
    profile = get_profile("smoke").for_scene_kind("object")
    views = profile.probe_renders("mean4")
    assert {v.pitch_deg for v in views} == {60.0} and len(views) == 4


def test_unknown_policy():
    assert check_view_policy("mean4") == "mean4"
    with pytest.raises(ProtocolError, match="unknown view policy"):
        check_view_policy("mean5")


def test_render_configs_per_policy_share_views():
    smoke = get_profile("smoke")
    single = smoke.render_configs()
    assert len(single) == 10 and smoke.render_configs("single") == single
    multi = {p: smoke.render_configs(p) for p in VIEW_POLICIES[1:]}
    assert len({tuple(v) for v in multi.values()}) == 1  # mean4, max4, sheet4: one render set
    # 7 non-view configs x 4 at 45 deg (pitch=45 shares them), pitch 0 and 90 x 4, yaw shares
    assert len(multi["mean4"]) == 36


# ---------------------------------------------------------------------------- measurement


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vp")
    return {p: tiny_session(tmp, [TinySpec("tiny-grid"), TinySpec("tiny-pairs", grid=False)],
                            view_policy=p) for p in VIEW_POLICIES}


def test_single_plan_is_the_plan_without_a_policy(sessions):
    from harness.measure.plan import build_plan

    s = sessions["single"]
    assert s.inputs.plan.key == build_plan(s.inputs.scene_set, s.inputs.profile).key
    assert all(r.image is None or not r.image.views for r in s.inputs.plan.rows)
    assert len({sessions[p].inputs.plan.key for p in VIEW_POLICIES}) == 4
    assert len({sessions[p].run_id(["tiny-grid"]) for p in VIEW_POLICIES}) == 4


def test_mean4_and_max4_aggregate_the_view_scores(sessions):
    from harness.measure.images import ImageSource

    mean4, max4, single = (sessions[p] for p in ("mean4", "max4", "single"))
    row = next(r for r in mean4.inputs.plan.rows if r.factor == "baseline")
    source = ImageSource(mean4.inputs.plan, mean4.inputs.renderer)
    evaluator = TinySpec("tiny-pairs", grid=False).build()
    views = source.scored_images(row.image)
    assert len(views) == 4
    scores = [evaluator.score([im], [row.caption])[0].score for im in views]
    rec = mean4.record_cache.records("tiny-pairs")
    got = rec[(rec.factor == "baseline") & (rec.generator == row.generator)
              & (rec.prompt_id == row.prompt_id)].score.item()
    assert got == pytest.approx(math.fsum(scores) / 4, rel=1e-12)
    rec = max4.record_cache.records("tiny-pairs")
    got = rec[(rec.factor == "baseline") & (rec.generator == row.generator)
              & (rec.prompt_id == row.prompt_id)].score.item()
    assert got == pytest.approx(max(scores), rel=1e-12)
    assert "view_policy" not in single.record_cache.records("tiny-pairs").columns
    assert set(mean4.record_cache.records("tiny-pairs")["view_policy"]) == {"mean4"}


def test_sheet4_scores_one_two_by_two_sheet(sessions):
    from harness.measure.images import sheet

    image, views = baseline_image_and_views(sessions["sheet4"])
    h, w, _ = views[0].shape
    assert image.shape == (2 * h, 2 * w, 3)
    assert np.array_equal(image[:h, w:], views[1]) and np.array_equal(image[h:, :w], views[2])
    assert sheet([views[0], "render failed: x", views[2], views[3]]) == "render failed: x"


def test_cards_record_the_policy(sessions):
    from harness.cards.card_format import validate_card

    single = sessions["single"].cards.card("tiny-grid")
    assert single["view_policy"]["policy"] == "fixed" and "view_rule" not in single["view_policy"]
    ids = {single["card_id"]}
    for policy, word in (("mean4", "averaged"), ("max4", "selected"), ("sheet4", "sheet")):
        card = sessions[policy].cards.card("tiny-grid")
        validate_card(card)
        assert card["view_policy"]["policy"] == word and card["view_policy"]["view_rule"] == policy
        assert len(card["view_policy"]["declared_views"]) > len(single["view_policy"]["declared_views"])
        assert sessions[policy].cards.run_options(["tiny-grid"])["view_policy"] == policy
        ids.add(card["card_id"])
    assert len(ids) == 4
    assert "view_policy" not in sessions["single"].cards.run_options(["tiny-grid"])


# ---------------------------------------------------------------------------- records


def test_records_view_policy_column_is_checked():
    from harness.core.errors import RecordsError
    from harness.protocol.records import (
        COLUMNS,
        SERVED_MODEL,
        record,
        records_frame,
        validate_records,
    )

    row = record("e", "g", "p", "a" * 64, "baseline", "c0", "cap", 0.5, "ok", "", "", "mean4")
    frame = records_frame([row])
    assert list(frame.columns) == [*COLUMNS, "view_policy"]
    validate_records(frame)
    both = records_frame([row._replace(served_model="m")])
    assert list(both.columns) == [*COLUMNS, SERVED_MODEL, "view_policy"]
    validate_records(both)
    with pytest.raises(RecordsError, match="columns out of order"):
        validate_records(both[[*COLUMNS, "view_policy", SERVED_MODEL]])
    bad = frame.assign(view_policy=["mean5"])
    with pytest.raises(RecordsError, match="'mean5' is not one of"):
        validate_records(bad)


def test_records_round_trip_with_the_column(tmp_path):
    from harness.protocol.records import read_records, record, records_frame, write_records

    rows = [record("e", "g", "p", "a" * 64, "baseline", "c0", "cap", 0.25, "ok", "", "", "sheet4")]
    back = read_records(write_records(records_frame(rows), tmp_path / "r.csv"))
    assert back["view_policy"].tolist() == ["sheet4"] and back["score"].tolist() == [0.25]


# ---------------------------------------------------------------------------- the option


def test_option_end_to_end_writes_mean4_cards(pytester):
    make_project(pytester)
    result = run_audit(pytester, "mean4", "-n", "0", "--audit-view-policy=mean4")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    report = report_dir(pytester.path, "mean4")
    cards = sorted((report / "cards").glob("*.json"))
    assert cards
    for path in cards:
        card = json.loads(path.read_text())
        assert card["view_policy"]["view_rule"] == "mean4"
    manifest = json.loads((report / "manifest.json").read_text())
    assert manifest["options"]["view_policy"] == "mean4"
    import sys

    check = pytester.run(sys.executable, "-m", "harness", "validate", "--deep", "--skip-figures", str(report))
    assert check.ret == 0, check.stdout.str()[-2000:] + check.stderr.str()[-2000:]


def test_bad_option_is_a_usage_error(pytester):
    make_project(pytester)
    result = run_audit(pytester, "bad", "-n", "0", "--audit-view-policy=mean5")
    assert result.ret == 4
    assert "--audit-view-policy must be one of single, mean4, max4, sheet4" in result.stderr.str()


def test_report_splits_scores_by_view_policy(sessions, tmp_path):
    import csv

    from harness.cli import main as cli_main
    from harness.protocol.records import write_records

    files = []
    for policy in ("mean4", "single"):
        path = tmp_path / f"{policy}.csv"
        write_records(sessions[policy].record_cache.records("tiny-grid"), path)
        files.append(str(path))
    out = tmp_path / "out"
    assert cli_main(["report", "--scores", *files, "--out", str(out), "--bootstrap", "20"]) == 0
    with open(out / "tables" / "table_view_policies.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["Evaluator"], r["Policy"]) for r in rows] == [("tiny-grid", "single"), ("tiny-grid", "mean4")]
    assert rows[0]["Δ ρ vs single"] == "+0.00"
    single_only = tmp_path / "single-only"
    assert cli_main(["report", "--scores", files[1], "--out", str(single_only), "--bootstrap", "20"]) == 0
    assert not (single_only / "tables" / "table_view_policies.csv").exists()
    assert (single_only / "summary.json").read_bytes() == (out / "summary.json").read_bytes()
