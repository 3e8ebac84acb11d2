"""``t3d-audit lighting [--out FILE] [--check FILE]``: Table 8 scalars of the lighting maps.

Reads Blender's eight bundled studio-light world HDRIs through bpy and prints (or writes,
atomically) the fixture document of :mod:`harness.render.light_maps`: per map the file name,
its sha256, the log-average EV and the CCT. ``--check FILE`` recomputes and compares with a
committed file instead (exit 1 on a mismatch), e.g. after a Blender upgrade.
Regenerate the committed fixture with ``t3d-audit lighting --out fixtures/lighting_scalars.json``.
"""

from __future__ import annotations

import argparse
import sys

from harness.core.bounded_input import read_json
from harness.core.errors import AuditError
from harness.core.fileio import json_text, write_json_atomic
from harness.run import argtypes

HELP = "EV and CCT of the lighting maps (study Table 8) from Blender's HDRIs"
EV_TOLERANCE = 5e-4  # stops; the fixture stores 4 decimals
CCT_TOLERANCE = 0.1  # kelvin; the fixture stores 1 decimal


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=argtypes.output_file, metavar="FILE",
                        help="write the JSON document here (default: print it)")
    parser.add_argument("--check", type=argtypes.input_path, metavar="FILE",
                        help="recompute and compare with this committed file; exit 1 if different")


def compare(committed: dict, fresh: dict) -> list[str]:
    """Differences between two fixture documents (empty when they agree within rounding)."""
    problems = []
    if committed.get("schema") != fresh["schema"]:
        problems.append(f"schema {committed.get('schema')!r} != {fresh['schema']!r}")
    old_maps, new_maps = committed.get("maps", {}), fresh["maps"]
    if set(old_maps) != set(new_maps):
        problems.append(f"maps {sorted(old_maps)} != {sorted(new_maps)}")
    for level in sorted(set(old_maps) & set(new_maps)):
        old, new = old_maps[level], new_maps[level]
        if old.get("sha256") != new["sha256"]:
            problems.append(f"{level}: EXR sha256 changed ({new['file']})")
        for conv, vals in new["conventions"].items():
            prev = old.get("conventions", {}).get(conv, {})
            for key, tol in (("ev", EV_TOLERANCE), ("cct", CCT_TOLERANCE)):
                if key not in prev or abs(float(prev[key]) - vals[key]) > tol:
                    problems.append(f"{level} [{conv}] {key}: committed {prev.get(key)!r}, "
                                    f"recomputed {vals[key]!r}")
    return problems


def run(args: argparse.Namespace) -> int:
    from harness.render.light_maps import bundled_lighting_scalars

    doc = bundled_lighting_scalars()  # Blender's maps through bpy (harness.render only)
    if args.check is not None:
        try:
            committed = read_json(args.check)
        except (OSError, ValueError) as exc:
            raise AuditError(f"cannot read lighting scalars: {exc}", where=args.check) from exc
        problems = compare(committed, doc)
        for p in problems:
            print(f"{args.check}: {p}", file=sys.stderr)
        print(f"{args.check}: {'differs' if problems else 'matches'} "
              f"(Blender {doc['blender_version']})")
        return 1 if problems else 0
    if args.out is not None:
        write_json_atomic(args.out, doc, indent=1, sort_keys=False)
        print(f"wrote {args.out}")
        return 0
    sys.stdout.write(json_text(doc, indent=1, sort_keys=False))
    return 0
