"""``t3d-audit concordance --evaluator ID --presets A,B,... [--profile P] [--json] [--out DIR]``.

Scores the profile's frozen scenes under each protocol preset (docs/protocols.md) and prints,
for the evaluator: the generator ranking under each preset, Kendall's τ between every two
presets with a prompt-bootstrap interval, and the generator pairs whose order depends on the
preset (confirmed by the study's simultaneous band). ``--json``: ``{"evaluator", "profile",
"protocols": {name: protocol}, "rankings", "kendall_tau", "disagreements", ...}``.
``--out DIR`` also writes ``concordance.json``, ``scores.csv`` and the figure
``concordance.png`` there, each replaced atomically (a link already at one of those names is
replaced by the file, its target untouched; a name taken by a folder is refused before any
render). ``--max-views``/``--resolution``/``--samples`` scale every preset
down (the protocols in the output are the scaled ones).

``--probes all|NAME,...`` also runs the presentation probes around the first preset
(``harness.peers.presentation_probes``: untextured, normal_map, tiled, points) and exits 1 when
the evaluator's verdict depends on the presentation alone (agreement below the threshold).
"""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

from harness.core.jsonout import print_json
from harness.run import argtypes

HELP = "rank generators under several protocol presets and find where their winners disagree"
OUTPUT_NAMES = ("concordance.json", "scores.csv", "concordance.png")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.peers.inputs import add_common_arguments

    parser.add_argument("--presets", required=True, help="comma-separated preset names (two or more)")
    add_common_arguments(parser)
    parser.add_argument("--out", type=argtypes.output_dir, default=None, help="write JSON, scores and the figure here")
    parser.add_argument("--probes", default=None,
                        help="presentation probes around the first preset: all, or some of untextured,normal_map,tiled,points")
    parser.add_argument("--config", type=argtypes.input_path, metavar="PYPROJECT", default=None,
                        help="pyproject.toml whose [tool.t3d-audit.thresholds] sets min_presentation_agreement "
                        "(default: ./pyproject.toml when present; a named file must exist)")


def run(args: argparse.Namespace) -> int:
    from harness.core.csvcells import neutral
    from harness.core.fileio import write_bytes_atomic, write_json_atomic, write_text_atomic
    from harness.core.jsonout import strict
    from harness.peers.inputs import presentation_threshold, resolve
    from harness.peers.presentation_probes import parse_probes, probe_result
    from harness.peers.rank_concordance import (
        SHOWN_DISAGREEMENTS,
        answer,
        concordance,
        figure,
        score_array,
    )
    from harness.protocol.presets import parse_presets
    from harness.stats.bootstrap import prompt_weights

    start = time.monotonic()
    if args.out is not None:
        check_output_names(args.out, OUTPUT_NAMES)  # before any render: a name taken by a folder
    inputs = resolve(args)
    protocols = tuple(inputs.scaled(p, args) for p in parse_presets(args.presets))
    probes = parse_probes(args.probes) if args.probes is not None else ()
    probe_protocols = [q for probe in probes for q in probe.protocols(protocols[0])]
    measured = (*protocols, *probe_protocols)
    table = inputs.measure(measured)
    names = tuple(p.name for p in protocols)
    scores, generators, prompts = score_array(table[table["preset"].isin(names)], names)
    result = concordance(scores, names, generators, n_draws=args.bootstrap, seed=args.seed)
    payload = {"evaluator": inputs.spec.id, "profile": inputs.profile,
               "protocols": {p.name: p.to_dict() for p in protocols},
               "failed_scenes": int((table["status"] == "failed").sum()), **result.to_dict(),
               "answer": answer(result)}  # fmt: skip
    probe_results = []
    if probes:
        probe_names = tuple(q.name for q in probe_protocols)
        probe_scores, _, _ = score_array(table[table["preset"].isin(probe_names)], probe_names)
        weights = prompt_weights(len(prompts), args.bootstrap, args.seed)
        threshold = presentation_threshold(args.config, inputs.spec.id)
        probe_results = [probe_result(probe, probe_scores[2 * i], probe_scores[2 * i + 1], weights,
                                      threshold=threshold) for i, probe in enumerate(probes)]  # fmt: skip
        payload["presentation_probes"] = {"preset": protocols[0].name, "results": [r.to_dict() for r in probe_results]}
    rc = 1 if any(not r.passed for r in probe_results) else 0
    if args.out is not None:
        # each file replaced atomically: a link already at the name is replaced, never written
        # through to its target; generator names, prompt ids and a user scorer's failure
        # reasons are user text, written inert for a spreadsheet
        write_json_atomic(args.out / "concordance.json", strict(payload))
        csv = table.rename(columns=neutral).map(neutral).to_csv(index=False)
        write_text_atomic(args.out / "scores.csv", csv)
        image = io.BytesIO()
        figure(result, image)
        write_bytes_atomic(args.out / "concordance.png", image.getvalue())
    if args.json:
        print_json(payload, ensure_ascii=True)
        return rc
    print(f"{inputs.spec.id} on {inputs.profile}: {len(generators)} generators x {result.n_prompts} prompts, "
          f"{payload['failed_scenes']} failed scenes, {time.monotonic() - start:.1f} s")  # fmt: skip
    for r in result.rankings:
        print(f"  {r.preset:<20} " + " > ".join(f"{g} ({r.means[g]:.3f})" for g in r.order))
    for t in result.taus:
        print(f"  tau({t.a}, {t.b}) = {t.tau:+.2f}  [{t.lo:+.2f}, {t.hi:+.2f}]")
    if result.reason:
        print(f"  {result.reason}: no generator pair's order is called preset-dependent")
    elif not result.disagreements:
        print("  no generator pair's order is confirmed to depend on the preset")
    for d in result.disagreements[:SHOWN_DISAGREEMENTS]:
        print(f"  {d.first} above {d.second} under {d.a} (gap {d.gap_a[0]:+.3f} [{d.gap_a[1]:+.3f}, "
              f"{d.gap_a[2]:+.3f}]), below under {d.b} (gap {d.gap_b[0]:+.3f} [{d.gap_b[1]:+.3f}, {d.gap_b[2]:+.3f}])")  # fmt: skip
    if len(result.disagreements) > SHOWN_DISAGREEMENTS:
        where = f"{args.out}/concordance.json" if args.out is not None else "--json"
        print(f"  ... and {len(result.disagreements) - SHOWN_DISAGREEMENTS} more confirmed reversals ({where})")
    for r in probe_results:
        print(f"  probe {r.probe:<11} agreement {r.agreement:.2f} [{r.lo:.2f}, {r.hi:.2f}] "
              f"(min {r.threshold:g}): {'passed' if r.passed else 'FAILED: the verdict depends on the presentation'}")  # fmt: skip
    if args.out is not None:
        print(f"  -> {args.out}/concordance.json, scores.csv, concordance.png")
    print(answer(result))
    return rc


def check_output_names(folder: Path, names: tuple[str, ...]) -> None:
    """Refuse, in one line, an output name already taken by a folder (or anything but a file
    or a link) in ``folder``; a link is fine (it is replaced, its target untouched)."""
    from harness.core.errors import AuditError

    for name in names:
        target = folder / name
        if target.is_symlink() or not target.exists() or target.is_file():
            continue
        raise AuditError(f"{name} is taken by a folder (or a device) in the output folder",
                         where=str(target), hint="move it away, or give another --out")  # fmt: skip
