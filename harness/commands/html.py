"""``t3d-audit html REPORT_DIR``: (re)write a report directory's self-contained ``report.html``.

Reads the report directory alone (never the caches), so a copied or downloaded report can be
given its page anywhere. The manifest is verified first: a listed file that was edited or removed
is refused in one line and nothing is written; only the page's own sha256 is updated.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from harness.core.errors import AuditError
from harness.run import argtypes

HELP = "write a report directory's self-contained report.html"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("report", type=argtypes.input_path, metavar="REPORT_DIR", help="a report directory (reports/<run-id>)")


def run(args: argparse.Namespace) -> int:
    from harness.report.html.page import write_html

    if not Path(args.report).is_dir():
        raise AuditError("not a directory", where=args.report, hint="give a report directory, reports/<run-id>")
    t0 = time.perf_counter()
    path = write_html(args.report)
    size = path.stat().st_size
    print(f"wrote {path} ({size / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s")
    return 0
