"""``t3d-audit reproduce --evaluator ID (--score X [--margin M] [--generator G] | --ordering A>B>C)``.

Reproduction forensics (docs/protocols.md): scores the profile's frozen scenes under every
preset (``--presets``, default all) and each preset's one-parameter neighbours, and prints
the candidates consistent with the reported number (each with its prompt-bootstrap interval)
and the parameters that move a preset's number by more than the margin, undisclosed ones
first. ``--margin`` defaults to half a unit in the reported score's last digit. ``--json``:
``{"evaluator", "reported", "margin", "consistent", "candidates", "sensitive"}``.
"""

from __future__ import annotations

import argparse
import time

from harness.core.jsonout import print_json

HELP = "find the protocol presets and nearby protocols consistent with a reported score or ordering"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.peers.inputs import add_common_arguments
    from harness.run import argtypes

    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--score", type=argtypes.reported_number, default=None,
                      help="the reported score (as printed, e.g. 27.23; a finite number)")
    what.add_argument("--ordering", default=None, help="a reported generator ordering, best first: A>B>C")
    parser.add_argument("--margin", type=argtypes.real(0.0), default=None,
                        help="how far from --score still counts (default: half its last digit)")
    parser.add_argument("--generator", default=None, help="the reported score is this generator's (default: all scenes)")
    parser.add_argument("--presets", default=None, help="comma-separated presets to start from (default: all)")
    add_common_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from harness.core.errors import ProtocolError
    from harness.peers.forensics import (
        neighbours,
        ordering_outcome,
        parse_ordering,
        reported_margin,
        score_outcome,
        sensitivities,
        weights_for,
    )  # fmt: skip
    from harness.peers.inputs import resolve
    from harness.peers.rank_concordance import score_array
    from harness.protocol.presets import PRESETS, get_preset, preset_names

    start = time.monotonic()
    ordering = parse_ordering(args.ordering) if args.ordering is not None else None
    score = None
    if args.score is not None:
        margin_default = reported_margin(args.score)
        score = float(args.score)
    margin = args.margin if args.margin is not None else (margin_default if score is not None else 0.0)
    names = preset_names(args.presets, repeats=True) if args.presets is not None else list(PRESETS)
    inputs = resolve(args)
    candidates = [c for n in names for c in neighbours(inputs.scaled(get_preset(n), args))]
    measured = [c.protocol for c in candidates]
    table = inputs.measure(measured)
    scores, generators, prompts = score_array(table, tuple(c.protocol.name for c in candidates))
    for g in (*(ordering or ()), *([args.generator] if args.generator is not None else [])):
        if g not in generators:
            raise ProtocolError(f"generator {g!r} is not in the scored scenes", where="--ordering/--generator",
                                hint=f"use some of {', '.join(generators)}")  # fmt: skip
    weights = weights_for(len(prompts), args.bootstrap, args.seed)
    outcomes = [
        ordering_outcome(c, scores[i], generators, weights, ordering, 0.95) if ordering is not None
        else score_outcome(c, scores[i], generators, weights, score=score, margin=margin,
                           generator=args.generator, level=0.95)
        for i, c in enumerate(candidates)
    ]  # fmt: skip
    sens = sensitivities(outcomes, margin) if ordering is None else []
    payload = {
        "evaluator": inputs.spec.id, "profile": inputs.profile,
        "reported": {"score": score, "generator": args.generator} if ordering is None else {"ordering": list(ordering)},
        "margin": margin,
        "consistent": [o.candidate.label for o in outcomes if o.consistent],
        "candidates": [o.to_dict() for o in outcomes],
        "sensitive": [{"preset": s.preset, "parameter": s.parameter, "shift": s.shift, "disclosed": s.disclosed}
                      for s in sorted(sens, key=lambda s: (s.disclosed, s.preset, -s.shift))],
        "protocols": {c.protocol.name: c.protocol.to_dict() for c in candidates if not c.parameter},
    }  # fmt: skip
    if args.json:
        print_json(payload, ensure_ascii=True)
        return 0
    what = f"score {args.score} ± {margin:g}" + (f" ({args.generator})" if args.generator else "") \
        if ordering is None else "ordering " + " > ".join(ordering)  # fmt: skip
    print(f"{inputs.spec.id} on {inputs.profile}: {what}; {len(candidates)} candidate protocols "
          f"from {len(names)} presets, {time.monotonic() - start:.1f} s")  # fmt: skip
    consistent = [o for o in outcomes if o.consistent]
    print(f"consistent: {len(consistent)}" + ("" if consistent else " (none: the number is not reproduced here)"))
    for o in consistent:
        extra = f", support {o.support:.2f}" if o.support is not None else ""
        print(f"  {o.candidate.label:<40} {o.value:.4f} [{o.lo:.4f}, {o.hi:.4f}]{extra}")
    if sens:
        print(f"parameters moving a preset's number by more than {margin:g}:")
        for s in payload["sensitive"]:
            print(f"  {s['preset']:<16} {s['parameter']:<12} {s['shift']:.4f}  "
                  f"{'disclosed' if s['disclosed'] else 'UNDISCLOSED'}")  # fmt: skip
    return 0
