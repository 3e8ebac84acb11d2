"""An audit under a protocol preset (``--audit-view-policy preset:NAME``): the plan
looks at every configuration with the preset's views and presentation, the preset's reduction
makes the score, a tiled preset scores one grid, the records carry the policy and the card
records the preset and its parameters. Tiny scenes, the box rasterizer, tiny evaluators."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest

from harness.core.errors import ProtocolError
from harness.protocol.configurations import Configuration, RenderConfig
from harness.protocol.presets import get_preset
from harness.protocol.view_policies import check_view_policy, policy_views
from harness.testing import TinySpec
from tests._audit_project import (
    baseline_image_and_views,
    make_project,
    report_dir,
    run_audit,
    tiny_session,
)

pytest_plugins = ["pytester"]
POLICIES = ("preset:3dcodebench", "preset:3d-defectbench")


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("presetaudit")
    return {p: tiny_session(tmp, [TinySpec("tiny-grid"), TinySpec("tiny-pairs", grid=False)], view_policy=p)
            for p in ("single", *POLICIES)}  # fmt: skip


def test_preset_policy_views_keep_the_configuration_s_other_settings():
    cfg = Configuration("lighting", "night", RenderConfig(resolution_px=224, lighting="night", pitch_deg=0.0))
    views = policy_views(cfg, "preset:mate3d", 0.0)
    # the poles turned as PyTorch3D's look_at turns them (image right on -x: yaw 180)
    assert [(v.pitch_deg, v.yaw_deg) for v in views] == [(90.0, 0.0), (90.0, 90.0), (90.0, 180.0), (90.0, 270.0),
                                                         (0.0, 180.0), (180.0, 180.0)]
    assert {(v.camera_distance, v.distance_unit) for v in views} == {(2.0, "radius")}  # dist=2, unit sphere
    assert [v.focal_length_mm for v in views] == pytest.approx([18.0 / math.tan(math.radians(30.0))] * 6)  # fov 60
    assert {(v.resolution_px, v.lighting, v.ambient) for v in views} == {(224, "night", 0.8)}
    gpt = policy_views(cfg, "preset:gpteval3d", 0.0)
    assert [v.render_pass for v in gpt] == ["shaded"] * 4 + ["normal"] * 4
    with pytest.raises(ProtocolError, match="unknown protocol preset 'nope'"):
        check_view_policy("preset:nope")


def test_preset_resolution_and_samples_apply_unless_the_user_set_them():
    """At the harness's defaults (512 px, 16 samples) a configuration takes the preset's
    (3D-DefectBench: 1024 px per view); a value the user set (224 px, 4 samples) is kept."""
    plain = Configuration("baseline", "c0", RenderConfig())
    assert {v.resolution_px for v in policy_views(plain, "preset:3d-defectbench", 0.0)} == {1024}
    assert {v.samples for v in policy_views(plain, "preset:3d-defectbench", 0.0)} == {get_preset("3d-defectbench").samples}
    own = Configuration("resolution", "224", RenderConfig(resolution_px=224, samples=4))
    assert {(v.resolution_px, v.samples) for v in policy_views(own, "preset:3d-defectbench", 0.0)} == {(224, 4)}
    assert {v.resolution_px for v in policy_views(plain, "single", 0.0)} == {512}  # other policies: unchanged


def test_plan_scores_the_mean_of_the_preset_views(sessions):
    from harness.measure.images import ImageSource

    s = sessions["preset:3dcodebench"]
    row = next(r for r in s.inputs.plan.rows if r.factor == "baseline")
    assert len(row.image.views) == 4 and row.image.policy == "preset:3dcodebench"
    assert sorted(v.yaw_deg for v in row.image.views) == [45.0, 135.0, 225.0, 315.0]
    views = ImageSource(s.inputs.plan, s.inputs.renderer).scored_images(row.image)
    evaluator = TinySpec("tiny-pairs", grid=False).build()
    scores = [evaluator.score([im], [row.caption])[0].score for im in views]
    rec = s.record_cache.records("tiny-pairs")
    got = rec[(rec.factor == "baseline") & (rec.generator == row.generator) & (rec.prompt_id == row.prompt_id)]
    assert got.score.item() == pytest.approx(math.fsum(scores) / 4, rel=1e-12)
    assert set(rec["view_policy"]) == {"preset:3dcodebench"}


def test_tiled_preset_scores_one_4_by_2_grid(sessions):
    grid, views = baseline_image_and_views(sessions["preset:3d-defectbench"])
    h, w, _ = views[0].shape
    assert grid.shape == (2 * h, 4 * w, 3)
    assert np.array_equal(grid[:h, w:2 * w], views[1]) and np.array_equal(grid[h:, :w], views[4])


def test_cards_record_the_preset_and_its_parameters(sessions):
    from harness.cards.card_format import validate_card

    ids = {sessions["single"].cards.card("tiny-grid")["card_id"]}
    for policy in POLICIES:
        card = sessions[policy].cards.card("tiny-grid")
        validate_card(card)
        vp = card["view_policy"]
        assert vp["view_rule"] == policy and vp["protocol"] == get_preset(policy.split(":")[1]).to_dict()
        assert vp["policy"] == ("sheet" if policy.endswith("defectbench") else "averaged")
        ids.add(card["card_id"])
    assert len(ids) == 3
    assert "protocol" not in sessions["single"].cards.card("tiny-grid")["view_policy"]


def test_records_accept_preset_policies_only():
    from harness.core.errors import RecordsError
    from harness.protocol.records import record, records_frame, validate_records

    ok = records_frame([record("e", "g", "p", "a" * 64, "baseline", "c0", "cap", 0.5, "ok", "", "", "preset:mate3d")])
    validate_records(ok)
    bad = records_frame([record("e", "g", "p", "a" * 64, "baseline", "c0", "cap", 0.5, "ok", "", "", "preset:")])
    with pytest.raises(RecordsError, match="preset:<name>"):
        validate_records(bad)


@pytest.mark.slow
def test_option_end_to_end_writes_preset_cards_and_validates(pytester):
    make_project(pytester)
    result = run_audit(pytester, "preset", "-n", "0", "--audit-view-policy=preset:3dcodebench")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    report = report_dir(pytester.path, "preset")
    cards = sorted((report / "cards").glob("*.json"))
    assert cards
    for path in cards:
        card = json.loads(path.read_text())
        assert card["view_policy"]["protocol"]["name"] == "3dcodebench"
    check = pytester.run(sys.executable, "-m", "harness", "validate", "--deep", "--skip-figures", str(report))
    assert check.ret == 0, check.stdout.str()[-2000:] + check.stderr.str()[-2000:]


def test_unknown_preset_option_is_a_usage_error(pytester):
    make_project(pytester)
    result = run_audit(pytester, "badpreset", "-n", "0", "--audit-view-policy=preset:nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown protocol preset in 'preset:nope'" in result.stderr.str()


def test_preset_normal_pass_keeps_its_own_background_under_the_audit():
    """GPTEval3D's normals are composited on black (threestudio's ``(n + 1) / 2 * opacity``)
    whatever the configuration's background; its RGB views keep the configuration's."""
    from types import SimpleNamespace

    from harness.measure.images import ImageSource
    from harness.measure.plan import ImageKey
    from harness.protocol.presets import configuration_views

    class EmptyRenderer:  # every render transparent but one opaque grey pixel
        def render(self, scene, root, identity, cfg):
            rgba = np.zeros((cfg.resolution_px, cfg.resolution_px, 4), np.uint8)
            rgba[0, 0] = (90, 90, 90, 255)
            return rgba

    cfg = Configuration("background", "128", RenderConfig(resolution_px=16), background="128")
    views = configuration_views(cfg, "gpteval3d")
    plan = SimpleNamespace(scenes={"s": SimpleNamespace(scene=None, identity="x")}, root=".")
    key = ImageKey("s", views[0], "128", views, "preset:gpteval3d")
    (sheet,) = ImageSource(plan, EmptyRenderer()).scored_images(key)
    assert sheet.shape == (64, 32, 3)  # the RGB 2 x 2 sheet above the normal sheet
    assert np.all(sheet[1:32, 1:16] == 128) and np.all(sheet[33:, 1:16] == 0)
    assert tuple(sheet[32, 0]) == (90, 90, 90)  # the normal pass's opaque pixel is kept
