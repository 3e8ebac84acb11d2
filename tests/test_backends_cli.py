"""The backend switches and the cost estimate, without a cluster: clear errors when Ray is
missing or misused, and the estimate's arithmetic against hand-computed values."""

from __future__ import annotations

import json
import sys

import pytest

from harness.cli import main
from harness.measure.cost_estimate import PlanCounts, estimate


def test_backend_ray_without_ray_installed_says_how_to_install(monkeypatch):
    from harness.backends.ray.cluster import require_ray
    from harness.backends.shared import BackendError

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(BackendError) as err:
        require_ray()
    assert "pip install 't3d-audit[distributed]'" in err.value.render()
    assert "--backend" in err.value.render()


def test_warm_with_ray_needs_a_store(capsys):
    assert main(["warm", "--profile", "smoke", "--backend", "ray"]) == 2
    assert "--backend ray needs --store URL" in capsys.readouterr().err


def test_warm_takes_store_or_cache_dir_not_both(tmp_path, capsys):
    code = main(["warm", "--profile", "smoke", "--store", str(tmp_path / "s"), "--cache-dir", str(tmp_path)])
    assert code == 2 and "not both" in capsys.readouterr().err


def test_ray_backend_refuses_a_plain_local_path(tmp_path):
    pytest.importorskip("ray")
    from harness.backends.ray.render import warm_ray
    from harness.backends.shared import BackendError

    with pytest.raises(BackendError, match="needs a shared store URL"):
        warm_ray([], str(tmp_path))


def test_materialize_needs_a_store(capsys):
    assert main(["materialize", "--profile", "smoke"]) == 2
    assert "--store URL is required" in capsys.readouterr().err


class _Spec:
    def __init__(self, id_: str, needs_text: bool = True):
        self.id, self.needs_text = id_, needs_text


COSTS = {
    "render": {"first_s": 5.0, "marginal_s": 2.0, "resolution_px": 512, "samples": 32},
    "scoring": {"a": {"cpu": {"per_pair_s": 0.01}, "cuda": {"per_pair_s": 0.001}},
                "b": {"cpu": {"per_pair_s": 0.02}}},
}
COUNTS = PlanCounts(profile="p", scenes=10, renders=100, renders_per_scene=10.0,
                    render_pixels=120.0, distinct_images=200, text_pairs=1000, groups=10)  # fmt: skip


def test_estimate_arithmetic():
    est = estimate(COUNTS, COSTS, [_Spec("a"), _Spec("b", needs_text=False)])
    # renders: 120 c0-pixel units x 2 s + 10 scene builds x 3 s = 270 s
    assert est["render_cpu_hours"] == pytest.approx(270 / 3600)
    assert est["scoring"]["a"] == {"pairs": 1000, "cpu_hours": pytest.approx(10 / 3600),
                                   "gpu_hours": pytest.approx(1 / 3600)}  # fmt: skip
    assert est["scoring"]["b"]["pairs"] == 200  # prompt-free: one pair per image
    assert est["score_pairs"] == 1200
    # b has no GPU timing: its scoring counts as CPU time, and the GPU total is not claimed
    assert est["cpu_hours"] == pytest.approx((270 + 200 * 0.02) / 3600)
    assert est["gpu_hours"] is None and est["gpu_not_measured"] == ["b"]
    full = estimate(COUNTS, COSTS, [_Spec("a")])
    assert full["gpu_hours"] == pytest.approx(1 / 3600) and full["cpu_hours"] == pytest.approx(270 / 3600)


def test_plan_estimate_from_a_costs_file(tmp_path, capsys):
    from harness.measure.cost_estimate import host

    costs = {"format": "t3d-audit-costs/1", "measured_at": "2026-12-01T00:00:00Z", "host": host(),
             "render": COSTS["render"], "scoring": {"ref-vit-clip": {"cpu": {"per_pair_s": 0.03}}}}  # fmt: skip
    path = tmp_path / "costs.json"
    path.write_text(json.dumps(costs))
    assert main(["plan", "--profile", "smoke", "--estimate", "--costs", str(path),
                 "--evaluators", "ref-vit-clip"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "renders:         168" in out
    assert "distinct images: 192" in out and "score pairs:     264 (ref-vit-clip 264)" in out
    assert "GPU-hours:       not measured" in out
    assert f"provenance: costs file {path}" in out and "measured 2026-12-01T00:00:00Z" in out
