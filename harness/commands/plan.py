"""``t3d-audit plan``: a profile's render plan (distinct scene x render-config pairs)."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from harness.protocol import VIEW_POLICIES, get_profile
from harness.render.render_plan import plan_summary, render_plan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="default", help="profile name (default: default)")
    parser.add_argument(
        "--scenes", type=Path, default=None, help="scene-set root (default: the bundled set)"
    )
    parser.add_argument(
        "--prompts", type=int, default=None, help="only the first N prompt ids (default: profile's)"
    )
    parser.add_argument(
        "--view-policy", default="single", choices=VIEW_POLICIES,
        help="single (default), mean4, max4 or sheet4: plan every view (docs/formats.md)",
    )
    parser.add_argument("--json", action="store_true", help="print the full plan as JSON")


def run(args: argparse.Namespace) -> int:
    from harness.render.render_inputs import load_profile_scenes

    profile = get_profile(args.profile)
    if args.prompts is not None:
        profile = replace(profile, prompts=args.prompts)
    sset = load_profile_scenes(profile, args.scenes)
    profile = profile.for_scene_kind(sset.kind)
    scenes = list(sset)
    jobs = render_plan(profile, scenes, view_policy=args.view_policy)
    summary = plan_summary(profile, jobs, args.view_policy)
    if args.json:
        print(json.dumps({**summary, "jobs": [j.to_dict() for j in jobs]}, indent=1))
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
    for scene_id, n in summary["per_scene"].items():
        print(f"  {scene_id}\t{n}")
    return 0
