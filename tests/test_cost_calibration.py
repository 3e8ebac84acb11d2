"""``t3d-audit plan --estimate``'s calibration: a pairwise user scorer is calibrated with one
caption per image, an evaluator that cannot be built (open_clip missing) is "not measured"
with the reason instead of a traceback, the run says it calibrates before it does, and a
cached calibration is reused (Blender replaced by a fixed render: no render, no model)."""

from __future__ import annotations

import math
import sys
from typing import ClassVar

import numpy as np
import pytest

from harness.evaluators import Scorer
from harness.measure import cost_estimate as ce
from harness.protocol.profiles import get_profile


class PairCounter(Scorer):
    """A pairwise text scorer (no score_grid) that counts its rows; scores caption length."""

    name = "pair-counter"
    needs_text = True
    batch_size = None
    rows: ClassVar[list[int]] = []

    def score_batch(self, images, texts):
        assert len(images) == len(texts)
        PairCounter.rows.append(len(images))
        return [float(len(t)) for t in texts]


def _fake_render(profile, scene_set, cache_dir=None):
    image = np.zeros((8, 8, 4), np.uint8)
    image[..., 3] = 255
    return {"first_s": 2.0, "marginal_s": 1.0, "resolution_px": profile.c0.resolution_px,
            "samples": profile.c0.samples, "scene": scene_set.scenes[0].id, "_image": image}  # fmt: skip


@pytest.fixture(scope="module")
def smoke_plan():
    from harness.render.scene_inputs import load_profile_scenes

    profile = get_profile("smoke")
    scene_set = load_profile_scenes(profile, None)
    return profile, scene_set, ce.plan_counts(profile, scene_set)[1]


def test_a_pairwise_scorer_is_calibrated_with_one_caption_per_image(smoke_plan):
    from harness.evaluators.scorer import ScorerEvaluator

    profile, scene_set, plan = smoke_plan
    _, rows = next(iter(plan.groups()))
    images = {r.image for r in rows if r.image is not None}
    captions = {r.caption for r in rows if r.image is not None}
    pairs = {(r.image, r.caption) for r in rows if r.image is not None}
    assert len(captions) >= 2  # the case that paired 2 images with 4 captions

    class Spec:  # the Scorer's own spec, built as a ScorerEvaluator over PairCounter
        id, needs_text = "pair-counter", True

        def build(self, device="cpu", batch_size=32):
            return ScorerEvaluator(PairCounter.spec(), PairCounter("cpu"), 8)

    PairCounter.rows.clear()
    image = _fake_render(profile, scene_set)["_image"]
    got = ce.calibrate_scoring(Spec(), plan, image, "cpu")
    assert got["group_pairs"] == len(pairs)
    assert got["group_images"] == len(images) and got["group_captions"] == len(captions)
    # batches of 8 (padded): one for the two warm-up pairs, then every pair of the group
    assert len(PairCounter.rows) == 1 + math.ceil(len(pairs) / 8)


_NO_OPEN_CLIP = """
import sys
sys.modules["open_clip"] = None  # as if open_clip were not installed
import numpy as np
import harness.commands.plan as plan
from harness.measure import cost_estimate as ce
from harness.cli import main

calls = []


def fake_render(profile, scene_set, cache_dir=None):
    calls.append(1)
    image = np.zeros((8, 8, 4), np.uint8)
    image[..., 3] = 255
    return {"first_s": 2.0, "marginal_s": 1.0, "resolution_px": profile.c0.resolution_px,
            "samples": profile.c0.samples, "scene": scene_set.scenes[0].id, "_image": image}


ce.calibrate_render = fake_render
plan._has_cuda = lambda: False
argv = ["plan", "--profile", "smoke", "--estimate", "--evaluators", "clip-vit-b32"]
assert main(argv) == 0
print("=== again")
assert main(argv) == 0
print(f"=== renders {len(calls)}")
"""


def test_an_evaluator_that_cannot_be_built_is_not_measured(tmp_path):
    """Run in a fresh interpreter: in a test worker an earlier test may already hold open_clip
    (or an adapter bound to it), which no sys.modules patch here can take back."""
    import os
    import subprocess

    # a clean environment: a variable an earlier test left in this worker's os.environ (weights,
    # caches, offline switches) must not decide what the fresh interpreter can build
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "PYTHONPATH") if k in os.environ}
    env |= {"T3D_AUDIT_CACHE_DIR": str(tmp_path / "cache"), "XDG_CACHE_HOME": str(tmp_path / "xdg"),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", _NO_OPEN_CLIP], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out, again = done.stdout.split("=== again\n")
    lines = out.splitlines()
    assert lines[1].startswith("calibrating on this machine first (about a minute; cached for")
    # offline (as here and under tox) the missing weights stop the build before the missing
    # package does: either way the evaluator is "not measured" with its reason, never a traceback
    assert "  not measured:    clip-vit-b32: " in out and "Traceback" not in done.stderr
    assert "CPU-hours:" in out
    # the second run reuses the cached calibration: no render, the same finding
    assert "calibrating" not in again and "(cached: " in again
    assert "not measured:    clip-vit-b32: " in again
    assert again.rstrip().endswith("=== renders 1")


def test_costs_files_check_not_measured(tmp_path):
    import json

    from harness.core.errors import AuditError

    doc = {"format": ce.COSTS_FORMAT, "render": {"first_s": 1, "marginal_s": 1,
           "resolution_px": 8, "samples": 1}, "not_measured": {"x": 3}}  # fmt: skip
    path = tmp_path / "costs.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(AuditError, match="not_measured: must be an object"):
        ce.read_costs(path)
    doc["not_measured"] = {"x": "open_clip is not installed"}
    path.write_text(json.dumps(doc))
    assert ce.read_costs(path)["not_measured"] == {"x": "open_clip is not installed"}


def test_estimate_leaves_an_unmeasured_evaluator_out_of_the_hours():
    counts = ce.PlanCounts(profile="p", scenes=1, renders=10, renders_per_scene=10.0,
                           render_pixels=10.0, distinct_images=10, text_pairs=20, groups=1)  # fmt: skip
    costs = {"host": {"cores": "2"}, "render": {"first_s": 1.0, "marginal_s": 1.0},
             "scoring": {"a": {"cpu": {"per_pair_s": 0.5}}}, "not_measured": {"b": "why"}}  # fmt: skip

    class Spec:
        def __init__(self, id):
            self.id, self.needs_text = id, True

    est = ce.estimate(counts, costs, [Spec("a"), Spec("b")])
    assert est["not_measured"] == ["b"] and est["gpu_not_measured"] == ["a"]
    assert est["wall_hours_here"] == pytest.approx((10 * 1.0 + 20 * 0.5) / 3600)
    assert est["score_pairs"] == 40


def test_a_missing_package_reads_as_not_installed_with_the_extra_to_install():
    from harness.evaluators.catalogue import builtin_specs

    spec = next(s for s in builtin_specs() if s.id == "clip-vit-b32")
    reason = ce.why_not_measured(spec, ImportError("No module named 'open_clip'", name="open_clip"))
    assert reason == "open_clip is not installed (pip install 't3d-audit[models]', then --recalibrate)"
