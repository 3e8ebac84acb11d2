"""``t3d-audit templates [--json]``: list the 337 caption templates.

Text output: one line per template, ``id<TAB>text`` (no padding; the text keeps the
``{prompt}`` placeholder).
``--json``: a list of ``{"id", "text", "slots": {slot: token or null}}`` in grammar order.
"""

from __future__ import annotations

import argparse

from harness.core.jsonout import print_json

HELP = "list the 337 caption templates"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON (id, text, slot choices)")


def run(args: argparse.Namespace) -> int:
    from harness.captions import templates

    rows = templates()
    if args.json:
        payload = [{"id": t.id, "text": t.text, "slots": t.slots} for t in rows]
        print_json(payload)
        return 0
    for t in rows:
        print(f"{t.id}\t{t.text}")
    return 0
