"""``t3d-audit compare``: gate a release of an evaluator against its previous release.

Exit status: 0 when no metric is a confirmed regression, 1 when at least one is (or when a
metric is inconclusive and ``--fail-on-inconclusive`` is given, or when an evaluator present on
only one side was left unpaired without ``--allow-unpaired``), 2 on a usage error or a release
directory whose manifest or cards do not verify.
See docs/release-gate.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from harness.core.errors import AuditError
from harness.run import argtypes

DEFAULT_CONFIG = Path("pyproject.toml")

HELP = "compare an evaluator release with its previous release (paired, with margins)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("baseline", type=argtypes.input_path, metavar="BASELINE",
                        help="report directory (scores/ inside) or score file of the previous release")
    parser.add_argument("candidate", type=argtypes.input_path, metavar="CANDIDATE",
                        help="report directory or score file of the new release")
    parser.add_argument("--pair", action="append", metavar="BASE_ID=CAND_ID",
                        help="evaluators to compare (repeatable; default: the single alignment "
                        "evaluator of each side, else equal ids)")
    parser.add_argument("--margin", action="append", metavar="METRIC=DELTA",
                        help="margin of a metric kind (rho=0.1) or of one factor/probe "
                        "(rho.pitch=0.2); repeatable; overrides [tool.t3d-audit.compare]")
    parser.add_argument("--bootstrap", type=int, default=2000, metavar="B",
                        help="paired prompt-block bootstrap draws (default 2000)")
    parser.add_argument("--seed", type=argtypes.seed, default=42, metavar="S", help="bootstrap seed (default 42)")
    parser.add_argument("--fail-on-inconclusive", action="store_true",
                        help="exit 1 when a metric is inconclusive, not only on a regression")
    parser.add_argument("--evidence", choices=("confirmed", "descriptive"), default="confirmed",
                        help="what a verdict rests on: confirmed (default: the simultaneous interval of "
                        "each difference beyond its margin) or descriptive (the point difference)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument("--out", type=argtypes.output_dir, metavar="DIR",
                        help="also write comparison.md and comparison.json to DIR")
    parser.add_argument("--human", type=argtypes.input_path, metavar="FILE",
                        help="human ratings keyed by generator, prompt_id (docs/formats.md 'Human "
                        "ratings'): agreement with their mean becomes a metric (human_agreement, "
                        "human_agreement_drop)")
    parser.add_argument("--human-scale", metavar="LOW-HIGH",
                        help="the declared scale of --human (a .json format declares its own)")
    parser.add_argument("--human-dimension", metavar="NAME",
                        help="the rating dimension of --human (default: overall, or the only one)")
    parser.add_argument("--config", type=argtypes.input_path, metavar="PYPROJECT", default=None,
                        help="pyproject.toml with [tool.t3d-audit.compare] (default: ./pyproject.toml "
                        "when present; a named file must exist)")
    parser.add_argument("--allow-unpaired", action="store_true",
                        help="pass the gate although an evaluator present on only one side is "
                        "not compared (default: that fails the gate)")


def run(args: argparse.Namespace) -> int:
    from harness.core.fileio import json_text, write_text_atomic
    from harness.release.baselines import (
        comparison_document,
        exit_code,
        gate_line,
        load_margins,
        load_release,
        parse_pairs,
        render_markdown,
        unpaired,
    )
    from harness.release.comparison import auto_pairs, compare_records
    from harness.release.margins import parse_margin_args
    from harness.stats.bootstrap import MAX_BOOTSTRAP

    if not 2 <= args.bootstrap <= MAX_BOOTSTRAP:
        raise AuditError(
            f"--bootstrap must be in [2, {MAX_BOOTSTRAP}], got {args.bootstrap}", where="--bootstrap"
        )
    t0 = time.perf_counter()
    cli_margins = parse_margin_args(args.margin)
    margins = load_margins(args.config or DEFAULT_CONFIG, required=args.config is not None)
    pairs = parse_pairs(args.pair)
    baseline = load_release(args.baseline, role="baseline")
    candidate = load_release(args.candidate, role="candidate")
    pairs = pairs or auto_pairs(baseline.records, candidate.records)
    human = _human_means(args) if args.human else None
    comparisons = [
        compare_records(
            baseline.records,
            candidate.records,
            baseline_evaluator=b,
            candidate_evaluator=c,
            margins=margins.for_evaluator(c, cli_margins),
            bootstrap=args.bootstrap,
            seed=args.seed,
            human=human,
            evidence=args.evidence,
        )
        for b, c in pairs
    ]
    left_out = unpaired(
        sorted(set(baseline.records["evaluator"])), sorted(set(candidate.records["evaluator"])), pairs
    )
    gating = None if args.allow_unpaired else left_out
    document = comparison_document(
        comparisons, baseline, candidate, fail_on_inconclusive=args.fail_on_inconclusive,
        unpaired_evaluators=left_out, allow_unpaired=args.allow_unpaired,
    )  # fmt: skip
    markdown = render_markdown(document)
    text = json_text(document).rstrip("\n")
    if args.out:
        write_text_atomic(Path(args.out) / "comparison.json", text + "\n")
        write_text_atomic(Path(args.out) / "comparison.md", markdown)
    print(text if args.json else markdown)
    if not args.json:
        print(f"compared {len(comparisons)} evaluator pair(s) in {time.perf_counter() - t0:.1f} s")
        print(gate_line(comparisons, fail_on_inconclusive=args.fail_on_inconclusive, unpaired_evaluators=gating))
    return exit_code(
        comparisons, fail_on_inconclusive=args.fail_on_inconclusive, unpaired_evaluators=gating
    )


def _human_means(args: argparse.Namespace) -> dict[tuple[str, str], float]:
    """(generator, prompt_id) → mean rating of ``--human`` (validated; scene-keyed only)."""
    from harness.core.errors import HumanDataError
    from harness.human.audit import HumanInput, load_ratings, scene_means

    means = scene_means(*load_ratings(HumanInput(args.human, args.human_scale, args.human_dimension,
                                                 "--human-scale")))
    if means is None:
        raise HumanDataError("compare needs ratings keyed by generator and prompt_id", where=args.human,
                             hint="give the ratings table the columns generator, prompt_id")
    return means
