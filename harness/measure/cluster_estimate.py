"""What a profile costs on a cluster: ``t3d-audit plan --estimate --backend slurm|ray
--nodes N --gpus G``: wall time, node-hours and shard counts, from a calibration.

The calibration is a costs file (:mod:`harness.measure.cost_estimate`, written by
``plan --estimate --calibrate-out FILE`` on the target hardware); without ``--costs`` the
shipped default is used, measured on a shared 2-core x86_64 CPU (a development VM), and the
output says so. Its costs are converted to core-seconds (wall seconds x the calibration's
cores) and spread over the cluster:

* renders: ``nodes x (cpus_per_node // cpus_per_task)`` slots, each rendering with
  ``cpus_per_task`` cores (Cycles scales about linearly with cores on one node). On Slurm
  the renders are cut into shards of :func:`renders_per_shard`
  renders; the shards run in waves of one shard per slot, each paying
  :data:`JOB_START_S` for starting Python and Blender and one scene build per scene group
  it holds. On Ray actors stay up: renders are spread evenly and the start is paid once.
* scoring: on GPUs (``nodes x gpus``) at the calibration's GPU seconds per pair when it has
  them, else on the nodes' CPUs at its CPU seconds per pair. Slurm score shards hold
  whole scene groups (one evaluator each).

Node-hours are ``nodes x wall hours``. An evaluator without a measured cost is left out and
named, never guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from harness.measure.cost_estimate import PlanCounts, read_costs

#: the shipped calibration (a shared 2-core x86_64 CPU; not a cluster node)
DEFAULT_CALIBRATION = Path(__file__).with_name("calibration_cpu-2core-x86_64.json")
#: seconds a Slurm job spends before its first render (Python, harness and Blender start);
#: a costs file's ``job_start_s`` replaces it
JOB_START_S = 30.0
#: seconds to start Ray and its actors, once per run; a costs file's ``ray_start_s`` replaces it
RAY_START_S = 15.0
#: the share of a job's time limit a shard is sized to fill
TIME_SHARE = 0.5


@dataclass(frozen=True)
class Cluster:
    """The cluster an estimate is for."""

    backend: str  # slurm | ray
    nodes: int
    gpus_per_node: int
    cpus_per_node: int
    cpus_per_task: int = 1
    time_limit_min: int = 60


def renders_per_shard(seconds_per_render: float, time_limit_min: float) -> int:
    """Renders that fill :data:`TIME_SHARE` of a ``time_limit_min`` job at
    ``seconds_per_render`` each (at least 1)."""
    if seconds_per_render <= 0:
        return 1
    return max(1, math.floor(time_limit_min * 60 * TIME_SHARE / seconds_per_render))


def groups_per_shard(seconds_per_group: float, time_limit_min: float) -> int:
    """Scene groups per score shard, the same way (at least 1)."""
    return renders_per_shard(seconds_per_group, time_limit_min)


def load_calibration(path: Path | str | None) -> tuple[dict[str, object], str]:
    """The costs at ``path`` (default: the shipped calibration) and a phrase naming them."""
    if path is None:
        costs = read_costs(DEFAULT_CALIBRATION)
        return costs, "shipped default calibration (a shared 2-core x86_64 CPU, not a cluster node)"
    return read_costs(path), f"costs file {path}"


def cluster_estimate(counts: PlanCounts, costs: dict[str, object], specs: list, cluster: Cluster) -> dict[str, object]:
    """Wall hours, node-hours and shard counts of ``counts`` on ``cluster`` (module docstring)."""
    render = costs["render"]
    cores = int(costs.get("host", {}).get("cores", 1))
    render_core_s = float(render["marginal_s"]) * cores  # one c0 render
    build_core_s = max(0.0, float(render["first_s"]) - float(render["marginal_s"])) * cores
    per_task = max(1, cluster.cpus_per_task)
    slots = max(1, cluster.nodes * max(1, cluster.cpus_per_node // per_task))
    render_s = render_core_s / per_task  # one render's wall seconds in one slot
    build_s = build_core_s / per_task
    mean_px = counts.render_pixels / max(1, counts.renders)  # renders in c0-pixel units
    out: dict[str, object] = {"slots": slots, "renders": counts.renders}
    if cluster.backend == "slurm":
        size = renders_per_shard(render_s * mean_px, cluster.time_limit_min)
        shards = math.ceil(counts.renders / size)
        groups_per = max(1.0, counts.renders / max(1, counts.scenes))
        builds_per_shard = max(1.0, size / groups_per)
        start = float(costs.get("job_start_s", JOB_START_S))
        shard_s = size * render_s * mean_px + builds_per_shard * build_s + start
        waves = math.ceil(shards / slots)
        render_wall = waves * shard_s
        out.update(render_shards=shards, shard_size=size, waves=waves, job_start_s=start)
    else:
        start = float(costs.get("ray_start_s", RAY_START_S))
        total = counts.renders * render_s * mean_px + counts.scenes * build_s
        render_wall = start + total / slots
        out.update(ray_start_s=start)
    gpus = cluster.nodes * cluster.gpus_per_node
    cpu_slots = cluster.nodes * cluster.cpus_per_node
    score_s, unmeasured, on_gpu, score_shards = 0.0, [], [], 0
    for spec in specs:
        measured = costs.get("scoring", {}).get(spec.id, {})
        pairs = counts.text_pairs if spec.needs_text else counts.distinct_images
        gpu = next((m for d, m in measured.items() if d.startswith("cuda")), None)
        cpu = measured.get("cpu")
        if gpus and gpu is not None:
            seconds = pairs * float(gpu["per_pair_s"]) / gpus
            on_gpu.append(spec.id)
        elif cpu is not None:
            seconds = pairs * float(cpu["per_pair_s"]) * cores / cpu_slots
        else:
            unmeasured.append(spec.id)
            continue
        score_s += seconds
        group_s = seconds * (gpus if spec.id in on_gpu else cpu_slots) / max(1, counts.groups)
        score_shards += math.ceil(counts.groups / groups_per_shard(group_s, cluster.time_limit_min))
    if cluster.backend == "slurm":
        out["score_shards"] = score_shards
    out.update(
        render_wall_h=render_wall / 3600,
        score_wall_h=score_s / 3600,
        wall_h=(render_wall + score_s) / 3600,
        node_hours=cluster.nodes * (render_wall + score_s) / 3600,
        scored_on_gpu=on_gpu,
        not_measured=unmeasured,
    )
    return out
