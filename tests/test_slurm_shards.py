"""The Slurm backend's parts that need no cluster and no Blender: cutting a plan into shards,
naming shards on the command line, the options table, the retry command, the cluster
estimate's arithmetic, and the errors when submitit is missing or the options are wrong."""

from __future__ import annotations

import argparse
import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.backends.shards import chunks, format_shards, parse_shards, render_shards
from harness.backends.slurm.cli import report_failed_shards, retry_command
from harness.backends.slurm.options import SlurmOptions, load_options, require_submitit
from harness.cli import main
from harness.core.errors import AuditError
from harness.measure.cluster_estimate import (
    DEFAULT_CALIBRATION,
    Cluster,
    cluster_estimate,
    load_calibration,
    renders_per_shard,
)
from harness.measure.cost_estimate import PlanCounts


def _ident(x):
    return x[0]


def test_render_shards_keep_scene_groups_together_and_split_large_ones():
    reqs = [("a", 0), ("a", 1), ("b", 0), ("c", 0), ("c", 1), ("c", 2), ("c", 3), ("c", 4), ("d", 0)]
    shards = render_shards(reqs, 3, identity=_ident)
    # a(2)+b(1) fill one shard; c(5) is split 3+2; d joins c's remainder
    assert shards == [[("a", 0), ("a", 1), ("b", 0)], [("c", 0), ("c", 1), ("c", 2)],
                      [("c", 3), ("c", 4), ("d", 0)]]  # fmt: skip
    with pytest.raises(ValueError):
        render_shards(reqs, 0, identity=_ident)


@given(st.lists(st.tuples(st.sampled_from("abcde"), st.integers(0, 9))), st.integers(1, 7))
def test_render_shards_are_a_bounded_in_order_partition(reqs, size):
    reqs.sort(key=_ident)  # the plan lists a scene's renders together
    shards = render_shards(reqs, size, identity=_ident)
    assert [r for s in shards for r in s] == reqs
    assert all(1 <= len(s) <= size for s in shards)
    assert render_shards(reqs, size, identity=_ident) == shards  # stable: retries name the same shards


@given(st.lists(st.integers(0, 500), min_size=1))
def test_shard_numbers_round_trip_through_the_command_line(numbers):
    assert parse_shards(format_shards(numbers)) == frozenset(numbers)


def test_shard_numbers_collapse_runs_and_bad_ones_are_one_line():
    assert format_shards([12, 3, 10, 11, 7]) == "3,7,10-12"
    assert parse_shards("3, 7,10-12") == {3, 7, 10, 11, 12}
    for bad in ("x", "5-2", "-1", ",", "3-", "1.5"):
        with pytest.raises(AuditError) as err:
            parse_shards(bad)
        assert "--shards" in err.value.render() and "\n" not in err.value.render()


def test_chunks():
    assert chunks(list("abcde"), 2) == [["a", "b"], ["c", "d"], ["e"]]


def test_shard_size_fills_half_the_time_limit():
    # 60 min x 60 s x 0.5 = 1800 s; 17.5 s per render -> 102 renders
    assert renders_per_shard(17.5, 60) == 102
    assert renders_per_shard(5000.0, 60) == 1  # a render longer than the share: one per shard
    assert renders_per_shard(0.0, 60) == 1


def test_options_from_the_project_table_and_flags(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.t3d-audit.slurm]\npartition = "gpu"\ntime_limit_min = 30\nmem_gb = 8\n'
                    'executor = "local"\n')  # fmt: skip
    opts = load_options(path, partition=None, max_failures=5)
    assert (opts.partition, opts.time_limit_min, opts.mem_gb, opts.executor, opts.max_failures) == \
        ("gpu", 30, 8.0, "local", 5)  # fmt: skip
    assert load_options(tmp_path / "absent.toml") == SlurmOptions()


@pytest.mark.parametrize("table, message", [
    ('colour = "red"', "unknown key 'colour'"),
    ("time_limit_min = \"1h\"", "time_limit_min must be a int"),
    ("max_failures = 0", "max_failures must be at least 1"),
    ('executor = "pbs"', "executor must be one of slurm, local, debug"),
    ("gpus_per_task = -1", "gpus_per_task must not be negative"),
])  # fmt: skip
def test_bad_options_are_one_line_naming_the_key(tmp_path, table, message):
    path = tmp_path / "pyproject.toml"
    path.write_text(f"[tool.t3d-audit.slurm]\n{table}\n")
    with pytest.raises(AuditError) as err:
        load_options(path)
    text = err.value.render()
    assert message in text and "[tool.t3d-audit.slurm]" in text and "\n" not in text


def test_retry_command_names_only_the_failed_shards():
    argv = ["warm", "--profile", "paper", "--store", "s3://b/p", "--backend", "slurm", "--shards", "1-9"]
    line = retry_command(argv, "render", [3, 7, 8], 40)
    assert line == ("t3d-audit warm --profile paper --store s3://b/p --backend slurm "
                    "--shard-size 40 --shards 3,7-8")  # fmt: skip
    line = retry_command(["materialize", "--store", "/x y", "--score-shards=2"], "score", [5], 3)
    assert line == "t3d-audit materialize --store '/x y' --skip-render --score-shard-groups 3 --score-shards 5"


def test_failed_shards_are_printed_with_the_retry_line(capsys):
    args = argparse.Namespace(argv=["warm", "--backend", "slurm", "--store", "file:///s"])
    report_failed_shards("render", {4: "UncompletedJobError: killed", 2: "OOM"}, 10, args)
    err = capsys.readouterr().err
    assert "2 render shard(s) failed: 2,4" in err
    assert "render shard 4: UncompletedJobError: killed" in err
    assert "retry only those: t3d-audit warm --backend slurm --store file:///s --shard-size 10 --shards 2,4" in err


def test_without_submitit_the_backend_names_the_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "submitit", None)  # import submitit -> ImportError
    with pytest.raises(AuditError) as err:
        require_submitit()
    assert "pip install 't3d-audit[slurm]'" in err.value.render()
    code = main(["warm", "--profile", "smoke", "--backend", "slurm", "--store", (tmp_path / "s").as_uri()])
    err_text = capsys.readouterr().err
    assert code != 0 and "pip install 't3d-audit[slurm]'" in err_text
    assert "Traceback" not in err_text and len(err_text.strip().splitlines()) == 1


def test_slurm_needs_a_store(capsys):
    assert main(["warm", "--profile", "smoke", "--backend", "slurm"]) == 2
    assert "--backend slurm needs --store URL" in capsys.readouterr().err


class _Spec:
    def __init__(self, id_: str, needs_text: bool = True):
        self.id, self.needs_text = id_, needs_text


COSTS = {
    "host": {"cores": "2"},
    "render": {"first_s": 5.0, "marginal_s": 2.0, "resolution_px": 512, "samples": 32},
    "scoring": {"a": {"cpu": {"per_pair_s": 0.01}, "cuda": {"per_pair_s": 0.001}}},
}
COUNTS = PlanCounts(profile="p", scenes=10, renders=100, renders_per_scene=10.0,
                    render_pixels=100.0, distinct_images=200, text_pairs=1000, groups=10)  # fmt: skip


def test_cluster_estimate_arithmetic_slurm():
    cluster = Cluster("slurm", nodes=2, gpus_per_node=1, cpus_per_node=4, cpus_per_task=1, time_limit_min=1)
    est = cluster_estimate(COUNTS, {**COSTS, "job_start_s": 10.0}, [_Spec("a"), _Spec("z")], cluster)
    # a render is 2 s x 2 cores = 4 core-s; 8 slots; a shard fills 30 s: 7 renders, 15 shards
    assert (est["slots"], est["shard_size"], est["render_shards"], est["waves"]) == (8, 7, 15, 2)
    # a shard: 7 x 4 s + 1 scene build (3 s x 2 cores = 6 s; 7 renders < 10 per scene) + 10 s start
    render_wall = 2 * (7 * 4.0 + 1.0 * 6.0 + 10.0)
    # scoring a on 2 GPUs: 1000 pairs x 1 ms / 2
    assert est["render_wall_h"] == pytest.approx(render_wall / 3600)
    assert est["score_wall_h"] == pytest.approx(0.5 / 3600)
    assert est["node_hours"] == pytest.approx(2 * (render_wall + 0.5) / 3600)
    assert est["scored_on_gpu"] == ["a"] and est["not_measured"] == ["z"]
    assert est["score_shards"] == 1  # 10 groups x 0.05 s fit one shard


def test_cluster_estimate_arithmetic_ray_on_cpus():
    cluster = Cluster("ray", nodes=1, gpus_per_node=0, cpus_per_node=4, cpus_per_task=2)
    est = cluster_estimate(COUNTS, {**COSTS, "ray_start_s": 5.0}, [_Spec("a")], cluster)
    # 2 slots of 2 cores: a render 2 s; 100 renders + 10 builds of 3 s, over 2 slots, + 5 s
    assert est["render_wall_h"] == pytest.approx((5 + (100 * 2.0 + 10 * 3.0) / 2) / 3600)
    # no GPU: 1000 pairs x 10 ms x 2 calibration cores over 4 cores
    assert est["score_wall_h"] == pytest.approx(1000 * 0.01 * 2 / 4 / 3600)
    assert "render_shards" not in est


def test_the_shipped_calibration_says_what_it_measured():
    costs, source = load_calibration(None)
    assert "2-core x86_64" in source and "not a cluster node" in source
    assert "2-core x86_64 CPU" in costs["note"] and costs["host"]["cores"] == "2"
    assert DEFAULT_CALIBRATION.is_file()


def test_plan_estimate_on_slurm_from_a_costs_file(tmp_path, capsys):
    costs = {"format": "t3d-audit-costs/1", "measured_at": "2026-12-01T00:00:00Z", **COSTS,
             "scoring": {"ref-vit-clip": {"cpu": {"per_pair_s": 0.03}}}}  # fmt: skip
    path = tmp_path / "costs.json"
    path.write_text(json.dumps(costs))
    assert main(["plan", "--profile", "smoke", "--estimate", "--costs", str(path), "--evaluators",
                 "ref-vit-clip", "--backend", "slurm", "--nodes", "3", "--gpus", "0",
                 "--cpus-per-node", "8", "--time-limit", "10"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    # 168 renders of 168.86 c0-pixel units: 4 core-s x 1.00512 = 4.0205 s each; a shard fills
    # 300 s: 74 renders -> 3 shards, one wave on 24 slots
    assert "on slurm: 3 node(s) x 8 cores, 0 GPU(s) per node" in out
    assert "render shards:   3 jobs of up to 74 renders (1 wave(s) of 24" in out
    assert "node-hours:" in out and "wall time:" in out


def test_plan_estimate_on_a_cluster_without_costs_uses_the_shipped_calibration(capsys):
    assert main(["plan", "--profile", "smoke", "--estimate", "--evaluators", "ref-vit-clip",
                 "--backend", "ray", "--nodes", "2"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "provenance: shipped default calibration (a shared 2-core x86_64 CPU, not a cluster node)" in out
    assert "on ray: 2 node(s) x 2 cores" in out and "calibration:     shipped default" in out


def test_submitit_only_under_backends_and_imported_lazily():
    """submitit is optional (the ``slurm`` extra): only ``harness/backends/`` imports it, never
    at module level, so every module imports without it."""
    import ast

    from harness.core.paths import REPO_ROOT

    for path in sorted((REPO_ROOT / "harness").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}  # fmt: skip
        names |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                  and node.module}  # fmt: skip
        top = {alias.name.split(".")[0] for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
               for alias in getattr(node, "names", [])}  # fmt: skip
        top |= {node.module.split(".")[0] for node in tree.body if isinstance(node, ast.ImportFrom) and node.module}
        rel = path.relative_to(REPO_ROOT).as_posix()
        assert "submitit" not in top, f"{rel} imports submitit at load"
        if "submitit" in names:
            assert rel.startswith("harness/backends/"), rel


def test_score_shards_are_sized_from_the_costliest_group():
    from types import SimpleNamespace as NS

    from harness.backends.slurm.score import group_seconds

    rows = [NS(group="g1", image="a", caption="x"), NS(group="g1", image="a", caption="y"),
            NS(group="g1", image="b", caption="x"), NS(group="g1", image="b", caption="x"),
            NS(group="g1", image=None, caption="z"), NS(group="g2", image="c", caption="x")]  # fmt: skip

    class Plan:
        def groups(self):
            yield "g1", rows[:5]
            yield "g2", rows[5:]

    text, free = NS(id="t", needs_text=True), NS(id="f", needs_text=False)
    # g1: 3 distinct pairs (a,x) (a,y) (b,x), 2 images; at 2 s a pair the text evaluator costs 6 s
    assert group_seconds(Plan(), [text], {"t": 2.0}) == 6.0
    assert group_seconds(Plan(), [free], {"f": 2.0}) == 4.0
    assert group_seconds(Plan(), [text, free], {"f": 5.0}) == 10.0  # t uncalibrated: left out


def test_plan_backend_without_estimate_is_one_line(capsys):
    assert main(["plan", "--profile", "smoke", "--backend", "slurm"]) == 2
    assert "--backend estimates a cluster's cost: add --estimate" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["-1", "", "x", "4-2"])
def test_a_bad_shards_flag_is_a_usage_error(value, capsys):
    assert main(["warm", "--profile", "smoke", "--backend", "slurm", "--store", "/tmp/x", "--shards", value]) == 2
    err = capsys.readouterr().err
    assert "--shards" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
