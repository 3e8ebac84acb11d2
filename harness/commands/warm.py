"""``t3d-audit warm``: render everything a profile's audit measures into the render cache.

The renders are read from the audit's own measurement plan (:func:`audit_requests`), so warm
renders exactly what the audit uses: nothing for a probe that does not apply to a scene or a
factor that cannot change it (lighting on 3D Gaussian splats).

Under ``--view-policy preset:NAME`` the audit's presentation probes render too, at the
preset's own size: their renders follow the plan's (``t3d-audit plan --estimate`` prices them).

Prints the plan size first, then renders the missing entries with a progress bar (done/total,
renders/s, ETA) on a terminal, or one plain progress line every 30 s in a log
(``harness.core.progress``). Resumable: entries already in the cache are skipped, so a run interrupted by
Ctrl-C or a crash continues where it stopped. ``--jobs N`` renders in N processes.

``--store URL`` renders into a shared store (``file://DIR``, ``s3://bucket/prefix``, any
fsspec URL; renders under ``<URL>/renders``) instead of the local cache directory; machines
sharing it coordinate with lease markers. ``--backend ray [--address auto|ray://HOST:PORT]``
renders on a Ray cluster (one Blender state per actor; needs ``--store`` and
``pip install 't3d-audit[distributed]'``). ``--backend slurm`` submits the renders as Slurm
job arrays through submitit (shards of the plan, one job each; settings from
``[tool.t3d-audit.slurm]`` or the Slurm flags; needs ``--store`` and
``pip install 't3d-audit[slurm]'``); failed shards are listed with the command that retries
only them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from harness.core.paths import default_cache_dir
from harness.core.progress import Progress, progress
from harness.protocol.profiles import get_profile
from harness.run import argtypes


def audit_requests(sset, profile, view_policy: str) -> tuple[list, list[str], int]:
    """The renders the audit measures, read from its own measurement plan
    (:func:`harness.measure.plan.build_plan`, probes applied with the session's seed), and the
    probes that failed to apply (the audit records them as failed measurements). A probe that
    does not apply to a scene (an object scene) or a factor that cannot change it (lighting on
    3D Gaussian splats) has no row there, so nothing is rendered for it. Under
    ``preset:NAME`` the presentation probes' renders follow (:func:`probe_requests`; their
    count is the third value)."""
    from harness.measure.plan import build_plan
    from harness.render.scene_inputs import PROBE_SEED
    from harness.render.service import RenderRequest

    plan = build_plan(sset, profile, probe_seed=PROBE_SEED, view_policy=view_policy)
    root = Path(sset.root)
    requests = [RenderRequest(plan.scenes[key].scene, root, plan.scenes[key].identity, cfg)
                for key, cfg in plan.renders]  # fmt: skip
    failed = [f"scene {row.group}: {row.error}" for row in plan.rows if row.error]
    probes = probe_requests(sset, view_policy, plan.renders)
    return requests + probes, failed, len(probes)


def probe_requests(sset, view_policy: str, planned: list) -> list:
    """The renders of the presentation probes an audit under ``preset:NAME`` runs after its
    plan (the preset's own size; none under another policy), less those in ``planned``."""
    from harness.peers.render_costs import audit_probe_protocols, protocol_batches
    from harness.render.service import RenderRequest

    scenes = {scene.id: scene for scene in sset.scenes}
    root = Path(sset.root)
    return [RenderRequest(scenes[key], root, sset.identity(key), cfg)
            for batch in protocol_batches(sset, audit_probe_protocols(view_policy), planned)
            for key, cfg in batch.keys]  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="default", help="profile name (default: default)")
    parser.add_argument(
        "--jobs", "-j", type=argtypes.jobs, default=None,
        help="worker processes (local, default 1) or render actors (ray, default: cluster CPUs)",
    )  # fmt: skip
    add_backend_arguments(parser)
    parser.add_argument(
        "--cache-dir",
        type=argtypes.output_dir,
        default=None,
        help="audit cache directory; renders go to <dir>/renders "
        "(default: $T3D_AUDIT_CACHE_DIR, else the per-user cache dir)",
    )
    parser.add_argument(
        "--scenes", type=argtypes.input_path, default=None,
        help="scene-set root (default: the bundled set)",
    )
    parser.add_argument(
        "--prompts", type=argtypes.positive_int, default=None,
        help="only the first N prompt ids (default: profile's)",
    )
    parser.add_argument(
        "--view-policy", default="single", type=argtypes.view_policy,
        help="single (default), mean4, max4, sheet4 or preset:NAME: plan every view (docs/formats.md)",
    )
    parser.add_argument("--timeout", type=argtypes.positive_float, default=600.0, help="seconds per render")
    parser.add_argument(
        "--device",
        choices=("cpu", "gpu"),
        default=os.environ.get("T3D_AUDIT_RENDER_DEVICE", "cpu"),
        help="Cycles device (default cpu: deterministic)",
    )


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """``--backend``, ``--address``, ``--store``, ``--cpus-per-actor``, ``--retries`` and the
    Slurm flags (shared by ``warm`` and ``materialize``)."""
    from harness.backends.slurm.cli import add_slurm_arguments

    parser.add_argument(
        "--backend", choices=("local", "ray", "slurm"), default="local",
        help="where renders run: local processes (default), a Ray cluster or Slurm job arrays",
    )  # fmt: skip
    parser.add_argument(
        "--address", type=argtypes.ray_address, default=None,
        help="Ray cluster: auto (this machine's cluster), ray://HOST:10001; default: start a "
        "private one on this machine",
    )  # fmt: skip
    parser.add_argument(
        "--store", type=argtypes.store_url, default=None,
        help="shared store URL for renders and scores (file://DIR, s3://bucket/prefix, any "
        "fsspec URL; a plain path means file://); default: the local --cache-dir",
    )  # fmt: skip
    parser.add_argument("--cpus-per-actor", type=argtypes.jobs, default=1, help="Ray: CPUs (Cycles threads) per render actor")
    parser.add_argument("--retries", type=argtypes.retries, default=2, help="Ray: retries of a render whose worker died")
    add_slurm_arguments(parser)


def store_url(value: str | None) -> str | None:
    """``--store`` as a URL (a plain path becomes ``file://<absolute path>``)."""
    if value is None or "://" in value:
        return value
    return Path(value).expanduser().resolve().as_uri()


def run(args: argparse.Namespace) -> int:
    from harness.backends import warm_on
    from harness.render.scene_inputs import load_profile_scenes

    store = store_url(args.store)
    if args.backend in ("ray", "slurm") and store is None:
        print(f"t3d-audit warm: --backend {args.backend} needs --store URL (a store every node "
              "reaches, e.g. s3://bucket/prefix or file:///shared/dir)", file=sys.stderr)  # fmt: skip
        return 2
    options = backend_options(args)
    if store is not None and args.cache_dir is not None:
        print("t3d-audit warm: give --store or --cache-dir, not both", file=sys.stderr)
        return 2
    profile = get_profile(args.profile)
    if args.prompts is not None:
        profile = replace(profile, prompts=args.prompts)
    sset = load_profile_scenes(profile, args.scenes)
    profile = profile.for_scene_kind(sset.kind)
    requests, skipped, probes = audit_requests(sset, profile, args.view_policy)
    print(
        f"render plan: {len(requests)} renders for {len(sset)} scenes "
        f"(profile {profile.name}, {len(requests) // max(len(sset), 1)} per scene"
        + (f"; {probes} of them for the presentation probes under {args.view_policy}" if probes else "")
        + ")",
        flush=True,
    )
    start = time.monotonic()
    cache_root: Path | str = store or (args.cache_dir or default_cache_dir()) / "renders"
    bar: Progress | None = None

    def on_start(cached: int, to_render: int) -> None:
        nonlocal bar
        print(f"cached: {cached}, to render: {to_render}", flush=True)
        if to_render:
            bar = progress(to_render, verb="rendered", unit="render")

    tick = lambda n: bar.update(n) if bar is not None else None  # noqa: E731
    try:
        result = warm_on(
            args.backend, requests, cache_root, jobs=args.jobs, timeout_s=args.timeout,
            device=args.device, progress=tick, on_start=on_start, **options,
        )  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    result.failures[:0] = skipped
    print(
        f"done in {time.monotonic() - start:.1f} s: {result.rendered} rendered, "
        f"{result.cached} already cached, {len(result.failures)} failed"
        + (f", {result.retries} retried after a worker died" if result.retries else "")
        + f" ({cache_root})"
    )
    for reason in result.failures:
        print(f"  failed: {reason}", file=sys.stderr)
    if failed_shards := getattr(result, "failed_shards", None):
        from harness.backends.slurm.cli import report_failed_shards

        report_failed_shards("render", failed_shards, result.shard_size, args)
    return 1 if result.failures else 0


def backend_options(args: argparse.Namespace) -> dict:
    """``warm_on``'s backend options from the command line (Ray's flags, or the Slurm
    options with ``[tool.t3d-audit.slurm]`` under them)."""
    if args.backend == "ray":
        return {"address": args.address, "cpus_per_actor": args.cpus_per_actor, "retries": args.retries}
    if args.backend == "slurm":
        from harness.backends.slurm.cli import slurm_warm_options
        from harness.backends.slurm.options import require_submitit

        require_submitit()  # one line naming the extra, before the plan is built
        return slurm_warm_options(args)
    return {}
