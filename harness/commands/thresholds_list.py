"""``t3d-audit thresholds [--json]``: list the known thresholds and their built-in values.

The rows come from the threshold registry (:data:`harness.vocab.metrics.THRESHOLDS`, where
the study's thresholds are declared), so a threshold a plugin registers is listed too. Text
output: one row per threshold, ``name direction default scope description`` (default ``-``:
known, but it gates nothing unless a project sets it in ``[tool.t3d-audit.thresholds]``).
``--json``: a list of ``{"name", "direction", "default", "scope", "description"}`` in
registration order (``default`` null when there is none). ``--toml``: the built-in values as
a ``[tool.t3d-audit.thresholds]`` table, one line per threshold with a default (a project's
pyproject.toml may repeat it; every value it repeats must equal the built-in one).
"""

from __future__ import annotations

import argparse

from harness.core.jsonout import print_json

HELP = "list the known thresholds with their built-in values"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="print JSON (name, direction, default, scope, description)")
    parser.add_argument("--toml", action="store_true",
                        help="print the built-in values as a [tool.t3d-audit.thresholds] table")


def rows() -> list[dict[str, object]]:
    """Every registered threshold as a plain row, registration order."""
    from harness.vocab.metrics import THRESHOLDS

    return [{"name": t.name, "direction": t.direction, "default": t.default, "scope": t.scope,
             "description": t.description} for t in THRESHOLDS]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if getattr(args, "toml", False):
        from harness.checks.thresholds import study_table_toml

        print(study_table_toml(), end="")
        return 0
    table = rows()
    if args.json:
        print_json(table)
        return 0
    width = max(len("name"), *(len(r["name"]) for r in table))
    print(f"{'name':<{width}}  dir  {'default':>7}  {'scope':<6}  description")
    for r in table:
        default = "-" if r["default"] is None else f"{r['default']:g}"
        print(f"{r['name']:<{width}}  {r['direction']:<3}  {default:>7}  {r['scope']:<6}  {r['description']}")
    return 0
