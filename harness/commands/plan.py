"""``t3d-audit plan``: a profile's render plan (distinct scene x render-config pairs).

``--estimate`` adds the work and its cost: renders, distinct images, score pairs, CPU-hours
and GPU-hours, from per-render and per-pair costs measured on this machine by a quick
calibration (cached per machine under ``<cache dir>/calibration``) or read from a costs file
(``--costs FILE``, written by ``--calibrate-out FILE`` on the machine that measured it, with
its provenance). See :mod:`harness.measure.cost_estimate`. The counts are those of the audit
under ``--view-policy``; under ``preset:NAME`` a block adds the presentation probes the audit
scores after its plan, and ``--presets A,B [--probes ...]`` one for a preset study
(``concordance``, ``reproduce``; ``--max-views``/``--resolution``/``--samples`` scale it as
they do): per protocol its new renders, their size and estimated seconds
(:mod:`harness.peers.render_costs`).

``--backend slurm|ray --nodes N --gpus G`` adds the cluster's wall time, node-hours and shard
counts (:mod:`harness.measure.cluster_estimate`), from ``--costs FILE`` (a calibration of the
cluster's nodes) or, without it, the shipped calibration of a 2-core x86_64 CPU, which the
output names as such.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from harness.core.jsonout import print_json
from harness.protocol.profiles import get_profile
from harness.render.job_plan import plan_summary, render_plan
from harness.run import argtypes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="default", help="profile name (default: default)")
    parser.add_argument(
        "--scenes", type=argtypes.input_path, default=None, help="scene-set root (default: the bundled set)"
    )
    parser.add_argument(
        "--prompts", type=argtypes.positive_int, default=None, help="only the first N prompt ids (default: profile's)"
    )
    parser.add_argument(
        "--view-policy", default="single", type=argtypes.view_policy,
        help="single (default), mean4, max4, sheet4 or preset:NAME: plan every view (docs/formats.md)",
    )
    parser.add_argument("--json", action="store_true", help="print the full plan as JSON")
    parser.add_argument(
        "--estimate", action="store_true",
        help="also print distinct images, score pairs, CPU- and GPU-hours (calibrates here)",
    )  # fmt: skip
    parser.add_argument("--costs", type=argtypes.input_path, default=None, help="measured costs file to use")
    parser.add_argument("--calibrate-out", type=argtypes.output_file, default=None,
                        help="write the costs measured here to this file")  # fmt: skip
    parser.add_argument("--evaluators", type=argtypes.name_list, default=None,
                        help="image evaluators to cost (default: the profile's, else default's)")  # fmt: skip
    parser.add_argument("--recalibrate", action="store_true", help="ignore cached calibration")
    study = parser.add_argument_group("preset study (with --estimate): the renders of concordance / reproduce")
    study.add_argument("--presets", default=None,
                       help="comma-separated presets: also cost their renders over the profile's scenes")  # fmt: skip
    study.add_argument("--probes", default=None,
                       help="with --presets: the presentation probes around the first preset (all, or some of "
                       "untextured,normal_map,tiled,points)")  # fmt: skip
    study.add_argument("--max-views", type=argtypes.integer(1, 100_000), default=None,
                       help="at most this many views per preset (as concordance --max-views)")  # fmt: skip
    study.add_argument("--resolution", type=argtypes.integer(16, 8192), default=None,
                       help="every preset at this many pixels (as concordance --resolution)")  # fmt: skip
    study.add_argument("--samples", type=argtypes.samples, default=None, help="Cycles samples per view")
    cluster = parser.add_argument_group("cluster estimate (with --estimate)")
    cluster.add_argument("--backend", choices=("slurm", "ray"), default=None,
                         help="also estimate wall time, node-hours and shards on this backend")  # fmt: skip
    cluster.add_argument("--nodes", type=argtypes.positive_int, default=1, help="nodes (default 1)")
    cluster.add_argument("--gpus", type=argtypes.integer(0), default=0, help="GPUs per node (default 0)")
    cluster.add_argument("--cpus-per-node", type=argtypes.positive_int, default=None,
                         help="CPU cores per node (default: the calibration's)")  # fmt: skip
    cluster.add_argument("--cpus-per-task", type=argtypes.positive_int, default=1,
                         help="cores per render job or actor (default 1)")  # fmt: skip
    cluster.add_argument("--time-limit", type=argtypes.positive_int, default=60,
                         help="Slurm: minutes per job; shards fill half of it (default 60)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from harness.render.scene_inputs import load_profile_scenes

    if args.backend is not None and not args.estimate:
        import sys

        print("t3d-audit plan: --backend estimates a cluster's cost: add --estimate", file=sys.stderr)
        return 2
    study = args.presets is not None
    if not study and (args.probes, args.max_views, args.resolution, args.samples) != (None,) * 4:
        import sys

        print("t3d-audit plan: --probes, --max-views, --resolution and --samples cost a preset study: "
              "add --presets A,B", file=sys.stderr)  # fmt: skip
        return 2
    if study and not args.estimate:
        import sys

        print("t3d-audit plan: --presets estimates a preset study's cost: add --estimate", file=sys.stderr)
        return 2
    if study:
        from harness.peers.presentation_probes import parse_probes
        from harness.protocol.presets import get_preset, preset_names

        presets = tuple(get_preset(n).scaled(max_views=args.max_views, resolution_px=args.resolution,
                                             samples=args.samples) for n in preset_names(args.presets))  # fmt: skip
        if args.probes is not None:
            parse_probes(args.probes)  # a bad name: one line before any calibration
        args.study_presets = presets
    profile = get_profile(args.profile)
    if args.prompts is not None:
        profile = replace(profile, prompts=args.prompts)
    scene_set = load_profile_scenes(profile, args.scenes)
    profile = profile.for_scene_kind(scene_set.kind)
    scenes = list(scene_set)
    jobs = render_plan(profile, scenes, view_policy=args.view_policy)
    summary = plan_summary(profile, jobs, args.view_policy)
    if args.json:
        print_json({**summary, "jobs": [j.to_dict() for j in jobs]}, ensure_ascii=True)
        return 0
    counts = set(summary["per_scene"].values())
    per = counts.pop() if len(counts) == 1 else f"{min(counts)}..{max(counts)}"
    print(
        f"profile {profile.name}: {summary['renders']} renders = {summary['scenes']} scenes x "
        f"{per} per scene ({summary['configs_per_scene']} render configs + "
        f"{len(profile.probes)} probes at c0"
        + (f", {summary['view_policy']}: {len(profile.probe_renders(args.view_policy))} views each)"
           if "view_policy" in summary else ")")
    )
    if args.estimate:
        return _estimate(args, profile, scene_set)
    for scene_id, n in summary["per_scene"].items():
        print(f"  {scene_id}\t{n}")
    return 0


def _estimate(args: argparse.Namespace, profile, scene_set) -> int:
    from harness.core.hashing import sha256_json
    from harness.core.paths import default_cache_dir
    from harness.measure import cost_estimate as ce
    from harness.measure.images import measurement_kind
    from harness.protocol.profiles import get_profile
    from harness.run.evaluator_selection import select_evaluators
    from harness.run.project_evaluators import project_specs

    patterns = tuple(e.strip() for e in (args.evaluators or "").split(",") if e.strip())
    patterns = patterns or profile.evaluators or get_profile("default").evaluators
    offered = project_specs()  # a project's conftest scorers are costed like the others
    specs = [s for s in select_evaluators(patterns, offered) if measurement_kind(s) == "image"]
    counts, plan = ce.plan_counts(profile, scene_set, view_policy=args.view_policy)
    if args.costs is not None:
        costs = ce.read_costs(args.costs)
        source = f"costs file {args.costs}"
    elif args.backend is not None and args.calibrate_out is None:  # a cluster is not this machine
        from harness.measure.cluster_estimate import load_calibration

        costs, source = load_calibration(None)
    else:
        devices = ["cpu"] + (["cuda"] if _has_cuda() else [])
        key = sha256_json({"host": ce.host(), "c0": profile.c0.to_dict(), "plan": plan.key,
                           "evaluators": sorted(s.identity_hash for s in specs), "devices": devices})  # fmt: skip
        cached = default_cache_dir() / "calibration" / f"{key[:24]}.json"
        costs = _cached_costs(cached) if not args.recalibrate else None
        if costs is not None:
            source = f"calibration of {costs.get('measured_at', '?')} (cached: {cached})"
        else:
            print(f"calibrating on this machine first (about a minute; cached for the next run "
                  f"as {cached}; --costs FILE skips it): 2 renders at c0 ({profile.c0.resolution_px} px, "
                  f"{profile.c0.samples} samples), one scene group per evaluator ...", flush=True)  # fmt: skip
            costs = ce.calibrate(profile, scene_set, plan, specs, devices)
            from harness.core.fileio import write_text_atomic

            write_text_atomic(cached, ce.public(costs))
            source = f"calibration just measured (cached: {cached})"
    if args.calibrate_out is not None:
        from harness.core.fileio import write_text_atomic

        write_text_atomic(args.calibrate_out, ce.public(costs))
    est = ce.estimate(counts, costs, specs)
    h = costs.get("host", {})
    r = costs["render"]
    print(f"estimate for profile {profile.name} ({counts.scenes} scenes, {len(specs)} image evaluators):")
    print(f"  renders:         {est['renders']}")
    print(f"  distinct images: {est['distinct_images']}")
    per_eval = ", ".join(f"{k} {v['pairs']}" for k, v in est["scoring"].items())
    print(f"  score pairs:     {est['score_pairs']} ({per_eval})")
    print(f"  CPU-hours:       {est['cpu_hours']:.1f} core-hours (renders {est['render_cpu_hours']:.1f}"
          + (", scoring on CPU for the evaluators without a GPU measurement" if est["gpu_not_measured"] else "")
          + f"); {est['wall_hours_here']:.1f} h on the measured {est['cores']}-core machine")  # fmt: skip
    if est["gpu_hours"] is None:
        print(f"  GPU-hours:       not measured (no GPU timing in the {source.split(' (')[0]}; calibrate on a GPU "
              f"machine "
              f"with --calibrate-out FILE and pass --costs FILE)")  # fmt: skip
    else:
        print(f"  GPU-hours:       {est['gpu_hours']:.2f} (scoring)")
    why = costs.get("not_measured", {})
    absent = f"no cost for it in the {source.split(' (')[0]}"
    for evaluator_id in est["not_measured"]:  # left out of every hour above, never guessed
        print(f"  not measured:    {evaluator_id}: {why.get(evaluator_id, absent)}; "
              "its scoring is left out of the hours above")  # fmt: skip
    print(f"  costs: {r['marginal_s']:.2f} s/render at {r['resolution_px']} px x {r['samples']} "
          f"samples (+{max(0.0, r['first_s'] - r['marginal_s']):.1f} s scene build), per pair: "
          + ", ".join(f"{e} {d} {m['per_pair_s'] * 1000:.1f} ms"
                      for e, devs in costs.get("scoring", {}).items() for d, m in devs.items()))  # fmt: skip
    print(f"  provenance: {source}; {h.get('cpu_model', '?')} ({h.get('node', '?')}), "
          f"Blender {h.get('blender', '?')}, measured {costs.get('measured_at', '?')}")  # fmt: skip
    _protocol_renders(args, scene_set, plan, costs, est)
    if args.backend is not None:
        _cluster(args, counts, costs, specs)
    return 0


def _protocol_renders(args: argparse.Namespace, scene_set, plan, costs: dict, est: dict) -> None:
    """The blocks of ``--estimate`` for renders outside the audit's plan: the presentation
    probes of an audit under ``preset:NAME``, and the preset study of ``--presets``."""
    from harness.peers import render_costs as rc

    probes = rc.protocol_batches(scene_set, rc.audit_probe_protocols(args.view_policy), plan.renders)
    if probes:
        total_s = _print_batches(f"presentation probes (an audit under {args.view_policy} scores them after its plan; "
                                 "its warm step renders them too):", probes, costs)  # fmt: skip
        hours = est["wall_hours_here"] + total_s / 3600
        print(f"  audit with its probes: {hours:.2f} h on the measured {est['cores']}-core machine")
    presets = getattr(args, "study_presets", None)
    if presets:
        batches = rc.protocol_batches(scene_set, rc.study_protocols(presets, args.probes))
        _print_batches(f"preset study (concordance / reproduce over {len(scene_set.scenes)} scenes, "
                       "its own render cache entries):", batches, costs)  # fmt: skip


def _print_batches(title: str, batches: list, costs: dict) -> float:
    """Print one line per batch and a total; returns the total estimated seconds."""
    from harness.peers.render_costs import batch_seconds

    print(title)
    total_s = 0.0
    for b in batches:
        seconds = batch_seconds(b, costs["render"])
        total_s += seconds
        shared = f" ({b.listed - b.renders} shared)" if b.listed != b.renders else ""
        print(f"  {b.label:<17} {b.protocol:<32} {b.renders:>6} renders{shared} at {b.resolution_px} px x "
              f"{b.samples} samples, ~{seconds:.0f} s")  # fmt: skip
    print(f"  total: {sum(b.renders for b in batches)} renders, ~{total_s / 60:.1f} min on the calibrated machine")
    return total_s


def _cluster(args: argparse.Namespace, counts, costs: dict, specs: list) -> None:
    """The cluster block of ``--estimate --backend``."""
    from harness.measure.cluster_estimate import Cluster, cluster_estimate

    cores = args.cpus_per_node or int(costs.get("host", {}).get("cores", 1))
    cluster = Cluster(args.backend, args.nodes, args.gpus, cores, args.cpus_per_task, args.time_limit)
    est = cluster_estimate(counts, costs, specs, cluster)
    print(f"on {args.backend}: {args.nodes} node(s) x {cores} cores, {args.gpus} GPU(s) per node, "
          f"{args.cpus_per_task} core(s) per render task ({est['slots']} render slots)")  # fmt: skip
    if args.backend == "slurm":
        print(f"  render shards:   {est['render_shards']} jobs of up to {est['shard_size']} renders "
              f"({est['waves']} wave(s) of {est['slots']}; {args.time_limit} min time limit, "
              f"{est['job_start_s']:.0f} s job start each)")  # fmt: skip
        print(f"  score shards:    {est['score_shards']} jobs (whole scene groups, one evaluator each)")
    else:
        print(f"  render tasks:    {est['renders']} (one per render on long-lived actors; "
              f"{est['ray_start_s']:.0f} s Ray start)")  # fmt: skip
    where = f"on {args.nodes * args.gpus} GPU(s): {', '.join(est['scored_on_gpu'])}" if est["scored_on_gpu"] \
        else "on the nodes' CPUs (no GPU or no GPU measurement)"  # fmt: skip
    print(f"  wall time:       {est['wall_h']:.2f} h (renders {est['render_wall_h']:.2f} h, "
          f"scoring {est['score_wall_h']:.2f} h {where})")  # fmt: skip
    print(f"  node-hours:      {est['node_hours']:.1f}")
    if note := costs.get("note"):
        print(f"  calibration:     {note}")
    for evaluator_id in est["not_measured"]:
        print(f"  not measured:    {evaluator_id}: no cost in the calibration; left out of the hours above")


def _cached_costs(path: Path) -> dict | None:
    """The cached calibration at ``path``; None when absent or damaged (it is measured again)."""
    from harness.core.errors import AuditError
    from harness.measure import cost_estimate as ce

    if not path.is_file():
        return None
    try:
        return ce.read_costs(path)
    except AuditError:
        return None


def _has_cuda() -> bool:
    try:
        from harness.evaluators._torch import resolve_device

        return resolve_device("auto") == "cuda"
    except ImportError:  # no torch: no GPU scoring either
        return False
