"""``t3d-audit validate reports/<run-id>``: re-verify a report directory.

Checks, each reported as one line naming the file: the manifest (every output present, its
sha256 unchanged, nothing unlisted); every card (schema v1.0, id matches content, one card per
raw score file, ids quoted in results.json match); the coverage of the raw score files (every
evaluator × scene × level of the run's profile present, no duplicate measurement, the same
measurement keys for every evaluator); prompts consistent (one baseline caption per prompt
across generators and evaluators); caption sets deduplicated (templates and paraphrases of
a scene never repeat a caption); and failures recorded as failures (NaN score, status failed).
A malformed manifest (missing keys, wrong types) gives one line per bad field.

``--deep`` also recomputes summary.json, the tables, the cards and (with the matplotlib that
wrote them) the figures from the raw score files and the run options in manifest.json, and
compares them with the files on disk (:mod:`harness.report.rebuild`): the hashes alone cannot
catch an edit whose author also rehashed the manifest.

``--rescore N`` re-measures a seeded random sample of N raw score records from the scenes and
the evaluators, in an empty cache (:mod:`harness.run.rescore`), and reports each record that does
not reproduce within ``--tolerance``: the trust root is then the scenes and the models, not
the score files or any cache.
Exit status 0 when the report is valid, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.report.validation import check_report
from harness.run import argtypes

HELP = "re-verify a report directory (manifest hashes, cards, coverage; --deep: recompute)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("report", type=argtypes.input_path, help="a report directory, e.g. reports/<run-id>")
    parser.add_argument("--deep", action="store_true",
                        help="also recompute summary.json, tables, cards and figures from scores/ "
                        "and the manifest's run options, and compare them with the files on disk")
    parser.add_argument("--skip-figures", action="store_true",
                        help="with --deep: do not redraw and compare the figures (faster)")
    parser.add_argument("--rescore", type=argtypes.positive_int, default=None, metavar="N",
                        help="re-render and re-score a random sample of N records from the scenes "
                        "and evaluators (empty cache) and report every mismatch")
    parser.add_argument("--rescore-seed", type=argtypes.seed, default=0, metavar="S",
                        help="with --rescore: the sample's seed (default 0)")
    parser.add_argument("--scenes", type=argtypes.input_path, default=None, metavar="DIR",
                        help="with --rescore: the report's scene set (default: the bundled scenes)")
    parser.add_argument("--tolerance", type=argtypes.non_negative_float, default=None, metavar="T",
                        help="with --rescore: largest accepted |score difference| relative to "
                        "max(1, |score|) (default 1e-6, docs/report-format.md)")


def _rescore_options(args: argparse.Namespace) -> float:
    """The tolerance of ``--rescore``; raises :class:`AuditError` on options that only apply with
    it (each value was checked while parsing, by :mod:`harness.run.argtypes`)."""
    from harness.core.errors import AuditError
    from harness.run.rescore import DEFAULT_TOLERANCE

    if args.rescore is None:
        given = [flag for flag, on in (("--rescore-seed", args.rescore_seed != 0),
                                       ("--scenes", args.scenes is not None),
                                       ("--tolerance", args.tolerance is not None)) if on]  # fmt: skip
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise AuditError(f"{', '.join(given)} {verb} only with --rescore N", where=given[0])
        return DEFAULT_TOLERANCE
    tolerance = DEFAULT_TOLERANCE if args.tolerance is None else args.tolerance
    if args.scenes is not None and not args.scenes.exists():
        raise AuditError("scene set not found", where=str(args.scenes), hint="pass the report's scene set")
    return tolerance


def run(args: argparse.Namespace) -> int:
    tolerance = _rescore_options(args)
    problems, notes = check_report(args.report, deep=args.deep, figures=not args.skip_figures)
    if args.rescore is not None and Path(args.report).is_dir():
        from harness.run.rescore import rescore_report

        rescored = rescore_report(args.report, args.rescore, seed=args.rescore_seed,
                                  scenes=args.scenes, tolerance=tolerance)  # fmt: skip
        problems += rescored.problems
        per = ", ".join(f"{ev} {k}" for ev, k in sorted(rescored.sampled.items()))
        notes.append(f"rescored {rescored.n_sampled} record(s) from the scenes (seed "
                     f"{args.rescore_seed}, tolerance {tolerance:g}){': ' + per if per else ''}")  # fmt: skip
    for line in notes:
        print(f"{args.report}: note: {line}")
    if problems:
        for line in problems:
            print(f"{args.report}: {line}")
        print(f"t3d-audit validate: {len(problems)} problem(s)")
        return 1
    how = [w for w, on in (("recomputed from scores/", args.deep),
                           ("sample re-scored from the scenes", args.rescore is not None)) if on]  # fmt: skip
    print(f"t3d-audit validate: {args.report} is valid" + (f" ({'; '.join(how)})" if how else ""))
    return 0
