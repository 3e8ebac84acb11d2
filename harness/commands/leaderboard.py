"""``t3d-audit leaderboard REPORT_DIR... [--allow-mixed] [--json] [--out DIR]``.

Ranks the evaluators of several report directories on the study's headline measures (peak ρ
with its interval, min W, top-1 changes, discrimination, c0 competence, human agreement where
an ``agreement.json`` is present): see :mod:`harness.report.ranking`. Runs over different
scene sets or profiles are refused (exit 2) unless ``--allow-mixed``; so is a run that does
not pass ``t3d-audit validate``'s checks, and one directory named twice. ``--out DIR`` also writes
``leaderboard.md``, ``.csv``, ``.json`` and a self-contained ``leaderboard.html``.
"""

from __future__ import annotations

import argparse
import sys

from harness.run import argtypes

HELP = "rank evaluators across several report directories"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reports", nargs="+", type=argtypes.input_path, metavar="REPORT_DIR",
                        help="report directories (reports/<run-id>/)")
    parser.add_argument("--allow-mixed", action="store_true",
                        help="rank runs over different scene sets or profiles (flagged in the output)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--out", type=argtypes.output_dir, metavar="DIR",
                        help="also write leaderboard.md/.csv/.json/.html to DIR")


def run(args: argparse.Namespace) -> int:
    from harness.core.fileio import json_text
    from harness.report.ranking import build_leaderboard, render_text, write_leaderboard

    board = build_leaderboard(args.reports, allow_mixed=args.allow_mixed)
    if args.out:
        written = write_leaderboard(board, args.out)
        print(f"wrote {', '.join(p.name for p in written)} to {args.out}", file=sys.stderr)
    if args.json:
        sys.stdout.write(json_text(board.to_dict()))
    else:
        print(render_text(board))
    return 0
