"""``t3d-audit protocol --profile P [--json] [--shared]``: list a profile's configurations.

Text output: one line per configuration, ``factor<TAB>level<TAB>id<TAB>hash`` after a header
line; the baseline comes first. ``--shared`` keeps only the shared family (baseline + the seven
shared factors; paraphrase excluded): 387 rows for the ``paper`` profile. ``--json``: a list of
``{"factor", "level", "id", "hash", "shared", "configuration"}`` objects.

``--preset NAME`` lists a protocol preset instead (docs/protocols.md): its settings, then one
line per view, ``index<TAB>elevation<TAB>azimuth<TAB>fov<TAB>shown``; ``--json`` prints the
preset object (``views``: ``{"elevation", "azimuth", "fov"?}`` in degrees).
"""

from __future__ import annotations

import argparse

from harness.core.jsonout import print_json

HELP = "list a profile's configuration family"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="default", help="profile name (smoke, default, paper)")
    parser.add_argument("--json", action="store_true", help="print JSON objects")
    parser.add_argument(
        "--shared",
        action="store_true",
        help="only the shared family (baseline + shared factors, no paraphrase levels)",
    )
    parser.add_argument("--preset", default=None, help="list this protocol preset instead (gpteval3d, t3bench, ...)")


def run(args: argparse.Namespace) -> int:
    from harness.protocol.configurations import BASELINE
    from harness.protocol.profiles import get_profile
    from harness.vocab.factors import shared_factor_names

    if args.preset is not None:
        return _preset(args)
    profile = get_profile(args.profile)
    configs = profile.shared_configurations() if args.shared else profile.configurations()
    if args.json:
        payload = [
            {
                "factor": c.factor,
                "level": c.level,
                "id": c.id,
                "hash": c.hash,
                "shared": c.factor == BASELINE or c.factor in shared_factor_names(),
                "configuration": c.to_dict(),
            }
            for c in configs
        ]
        print_json(payload)
        return 0
    print("factor\tlevel\tconfiguration_id\tconfig_hash")
    for c in configs:
        print(f"{c.factor}\t{c.level}\t{c.id}\t{c.hash}")
    return 0


def _preset(args: argparse.Namespace) -> int:
    from harness.protocol.presets import get_preset

    preset = get_preset(args.preset)
    if args.json:
        print_json(preset.to_dict())
        return 0
    d = preset.to_dict()
    print(f"{preset.name}: {preset.title}")
    print(f"source: {preset.source}")
    for key in ("resolution_px", "lighting", "ambient", "background", "normal_background", "passes", "texture",
                "tiling", "aggregation", "samples", "frame", "framing", "disclosed"):
        print(f"{key}: {d[key]}")
    print("view\televation\tazimuth\tfov\tshown")
    shown = set(preset.shown) if preset.shown else set(range(len(preset.views)))
    for i, v in enumerate(preset.views):
        fov = "" if v.fov_deg is None else f"{v.fov_deg:g}"
        print(f"{i}\t{v.elevation_deg:g}\t{v.azimuth_deg:g}\t{fov}\t{'yes' if i in shown else 'no'}")
    return 0
