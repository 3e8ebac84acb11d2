"""``t3d-audit protocol --profile P [--json] [--shared]``: list a profile's configurations.

Text output: one line per configuration, ``factor<TAB>level<TAB>id<TAB>hash`` after a header
line; the baseline comes first. ``--shared`` keeps only the shared family (baseline + the seven
shared factors; paraphrase excluded): 387 rows for the ``paper`` profile. ``--json``: a list of
``{"factor", "level", "id", "hash", "shared", "configuration"}`` objects.
"""

from __future__ import annotations

import argparse
import json
import sys

HELP = "list a profile's configuration family"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="default", help="profile name (smoke, default, paper)")
    parser.add_argument("--json", action="store_true", help="print JSON objects")
    parser.add_argument(
        "--shared",
        action="store_true",
        help="only the shared family (baseline + shared factors, no paraphrase levels)",
    )


def run(args: argparse.Namespace) -> int:
    from harness.protocol import BASELINE, SHARED_FACTORS, get_profile

    profile = get_profile(args.profile)
    configs = profile.shared_configurations() if args.shared else profile.configurations()
    if args.json:
        payload = [
            {
                "factor": c.factor,
                "level": c.level,
                "id": c.id,
                "hash": c.hash,
                "shared": c.factor == BASELINE or c.factor in SHARED_FACTORS,
                "configuration": c.to_dict(),
            }
            for c in configs
        ]
        json.dump(payload, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print("factor\tlevel\tconfiguration_id\tconfig_hash")
    for c in configs:
        print(f"{c.factor}\t{c.level}\t{c.id}\t{c.hash}")
    return 0
