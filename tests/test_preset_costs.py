"""``plan --estimate`` counts and prices the renders outside the audit's plan: the presets of a
preset study (``--presets``) and the presentation probes of an audit under ``preset:NAME``."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.measure.cost_estimate import PlanCounts, c0_scale

# 2 s a render at 512 px x 32 samples: 1 s at the presets' 512 px x 16
RENDER = {"first_s": 5.0, "marginal_s": 2.0, "resolution_px": 512, "samples": 32}


@pytest.fixture
def costs(tmp_path):
    from harness.measure.cost_estimate import host

    doc = {"format": "t3d-audit-costs/1", "measured_at": "2026-12-01T00:00:00Z", "host": host(),
           "render": RENDER, "scoring": {"ref-vit-clip": {"cpu": {"per_pair_s": 0.03}}}}  # fmt: skip
    path = tmp_path / "costs.json"
    path.write_text(json.dumps(doc))
    return path


def plan(capsys, costs, *extra: str) -> str:
    code = main(["plan", "--profile", "smoke", "--estimate", "--costs", str(costs), "--evaluators", "ref-vit-clip",
                 *extra])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def test_plan_estimate_counts_a_presets_renders(capsys, costs):
    # regression: the estimate had no preset renders at all
    out = plan(capsys, costs, "--presets", "3dcodebench")
    # smoke: 2 prompts x 6 generators = 12 scenes, 4 views each at the preset's 512 px x 16 samples
    assert "preset study (concordance / reproduce over 12 scenes" in out
    assert "preset            3dcodebench" in out
    assert "48 renders at 512 px x 16 samples, ~48 s" in out  # 48 x 2 s x (16 / 32)
    assert "  total: 48 renders, ~0.8 min on the calibrated machine" in out


def test_plan_estimate_counts_the_probes_around_the_first_preset_once_each(capsys, costs):
    out = plan(capsys, costs, "--presets", "3dcodebench,mate3d", "--probes", "all")
    # mate3d: 6 views; the probes around 3dcodebench add untextured, normal and points renders
    # (the tiled grid and every reference presentation are the preset's own views)
    assert "72 renders at 512 px x 16 samples, ~72 s" in out
    assert re.search(r"3dcodebench~tiled=changed +0 renders \(48 shared\)", out)
    assert "  total: 264 renders, ~4.4 min" in out  # 48 + 72 + 3 x 48


def test_plan_estimate_scales_the_presets_as_concordance_does(capsys, costs):
    out = plan(capsys, costs, "--presets", "mate3d,3dcodebench", "--max-views", "2", "--resolution", "64",
               "--samples", "1")  # fmt: skip
    assert out.count("24 renders at 64 px x 1 samples") == 2
    assert "  total: 48 renders," in out


def test_plan_estimate_of_an_audit_under_a_preset_counts_its_views_and_its_probes(capsys, costs):
    out = plan(capsys, costs, "--view-policy", "preset:3dcodebench")
    # the audit's own plan under the preset: every configuration's 4 views (the smoke c0 of
    # 224 px x 8 samples is the user's, so kept); before, the estimate ignored the view policy
    assert "  renders:         528" in out
    assert "presentation probes (an audit under preset:3dcodebench scores them after its plan; its warm step" in out
    assert "  total: 192 renders, ~3.2 min on the calibrated machine" in out  # 4 x 48 x 1 s
    assert "audit with its probes:" in out
    single = plan(capsys, costs)
    assert "presentation probes" not in single and "preset study" not in single


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--presets", "3dcodebench"], "--presets estimates a preset study's cost: add --estimate"),
     (["--probes", "all"], "add --presets A,B"),
     (["--resolution", "64"], "add --presets A,B")],
)  # fmt: skip
def test_preset_study_options_need_their_context(capsys, extra, message):
    assert main(["plan", "--profile", "smoke", *extra]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("presets", "probes"), [("nope", None), ("3dcodebench,,mate3d", None), ("mate3d", "tiles")])
def test_a_bad_preset_or_probe_is_one_line(capsys, costs, presets, probes):
    argv = ["plan", "--profile", "smoke", "--estimate", "--costs", str(costs), "--presets", presets]
    code = main([*argv, *(["--probes", probes] if probes else [])])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) <= 2, err


def test_a_calibration_at_another_size_is_scaled_to_the_profiles_c0():
    counts = PlanCounts(profile="p", scenes=1, renders=1, renders_per_scene=1.0, render_pixels=1.0,
                        distinct_images=1, text_pairs=1, groups=1, c0_px=256, c0_samples=8)  # fmt: skip
    assert c0_scale(counts, RENDER) == pytest.approx((256 / 512) ** 2 * (8 / 32))
    unsaid = PlanCounts(profile="p", scenes=1, renders=1, renders_per_scene=1.0, render_pixels=1.0,
                        distinct_images=1, text_pairs=1, groups=1)  # fmt: skip
    assert c0_scale(unsaid, RENDER) == 1.0


def test_batch_seconds_by_hand():
    from harness.peers.render_costs import RenderBatch, batch_seconds

    batch = RenderBatch("preset", "x", renders=10, listed=12, resolution_px=1024, samples=64)
    assert batch_seconds(batch, RENDER) == pytest.approx(10 * 2.0 * 4 * 2)


@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory):
    from harness.scenes.scene_source import load_scene_set
    from harness.testing import write_tiny_scene_set

    root = tmp_path_factory.mktemp("set")
    return load_scene_set(write_tiny_scene_set(root / "set", generators=("g1", "g2"), prompts=("p01",)))


def _protocols():
    from dataclasses import replace

    from harness.peers.presentation_probes import PROBES
    from harness.protocol.presets import get_preset

    base = get_preset("3dcodebench")
    out = [("preset", base), ("preset", replace(get_preset("mate3d"), name="mate3d-copy"))]
    return out + [(f"probe {p.name}", q) for p in PROBES for q in p.protocols(base)]


@settings(max_examples=25, deadline=None)
@given(st.permutations(range(10)))
def test_batches_count_every_distinct_render_once_in_any_order(tiny_set, order):
    from harness.peers.render_costs import protocol_batches

    protocols = _protocols()
    batches = protocol_batches(tiny_set, [protocols[i] for i in order])
    keys = [k for b in batches for k in b.keys]
    assert all(b.renders == len(b.keys) <= b.listed for b in batches)
    assert len(keys) == len(set(keys))  # no render counted twice
    # the union does not depend on the order: 2 scenes x (3dcodebench's 4 views, untextured,
    # normal and point presentations of them: 16) + mate3d's 6 views
    assert sum(b.renders for b in batches) == 2 * (16 + 6)
