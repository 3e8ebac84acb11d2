"""``t3d-audit report``: tables and ``summary.json`` from raw score files alone.

Score files measured under several view policies (the records' ``view_policy`` column) are
split by policy: the main tables and ``summary.json`` are the first policy's (``single`` when
present) and ``table_view_policies`` shows peak ρ, W and discrimination under each.

No renderer and no model are needed: everything is recomputed from the records.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from harness.core.errors import AuditError
from harness.run import argtypes
from harness.stats.bootstrap import MAX_BOOTSTRAP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scores", nargs="+", required=True, type=argtypes.input_path, metavar="FILE",
                        help="raw score files (CSV or Parquet), one or more per evaluator")
    parser.add_argument("--out", required=True, type=argtypes.output_dir, metavar="DIR",
                        help="output directory for tables/ and summary.json")
    parser.add_argument("--bootstrap", type=int, default=2000, metavar="B",
                        help="prompt-block bootstrap draws (default 2000; 0 disables intervals)")
    parser.add_argument("--seed", type=argtypes.seed, default=42, metavar="S",
                        help="bootstrap seed (default 42)")
    parser.add_argument("--se", choices=("bootstrap", "analytic"), default="bootstrap",
                        help="standard error of the simultaneous band (default: bootstrap SD)")
    parser.add_argument("--lighting-scalars", type=argtypes.input_path, metavar="JSON",
                        help="EV/CCT of the lighting maps for Table 8 (t3d-audit lighting output "
                        'or {"map": [EV, CCT_K], ...}; default: fixtures/lighting_scalars.json)')


def load_scores(paths: list[Path]):
    """Read and validate every file, then concatenate (duplicates are caught downstream).

    Scores of registered evaluators must lie in their declared ranges."""
    import pandas as pd

    from harness.core.errors import RecordsError
    from harness.evaluators.registry import declared_score_ranges
    from harness.protocol.records import read_records, validate_records

    frames = []
    for path in paths:
        frame = read_records(path, validate=False)
        if len(frame) == 0:
            raise RecordsError("the file holds no score records (blank or header only)", where=path,
                               hint="pass the raw score files an audit wrote (reports/<run-id>/scores/)")
        # a table without the evaluator column fails validation below, by name
        ids = [e for e in set(frame["evaluator"]) if isinstance(e, str)] if "evaluator" in frame else []
        validate_records(frame, where=path, score_ranges=declared_score_ranges(ids))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def split_by_view_policy(records):
    """``{policy: records}`` in ``harness.protocol.view_policies.VIEW_POLICIES`` order; rows without a
    ``view_policy`` (absent column or ``''``) are ``single``. Each part keeps only the columns
    its rows fill, so a part measured under one policy is an ordinary records table."""
    from harness.protocol.records import VIEW_POLICY, columns_of
    from harness.protocol.view_policies import VIEW_POLICIES

    if VIEW_POLICY not in records.columns:
        return {"single": records}
    cells = records[VIEW_POLICY].fillna("").replace("", "single")
    parts = {}
    for policy in VIEW_POLICIES:
        part = records[cells == policy]
        if len(part):
            part = part.reset_index(drop=True)
            parts[policy] = part[columns_of(part)]
    return parts


def run(args: argparse.Namespace) -> int:
    from harness.measure.audit_inputs import audit_inputs
    from harness.report.summary_json import digest, write_summary
    from harness.report.tables import build_tables, write_tables
    from harness.stats.audit_stats import compute_audit

    if not 0 <= args.bootstrap <= MAX_BOOTSTRAP:
        raise AuditError(
            f"--bootstrap must be in [0, {MAX_BOOTSTRAP}], got {args.bootstrap}", where="--bootstrap"
        )
    from harness.report.tables import table_view_policies

    t0 = time.perf_counter()
    parts = split_by_view_policy(load_scores(list(args.scores)))
    results = {
        policy: compute_audit(
            records,
            bootstrap=args.bootstrap,
            seed=args.seed,
            **audit_inputs(records, lighting=args.lighting_scalars),
            se_method=args.se,
        )
        for policy, records in parts.items()
    }
    # the main tables and summary.json: the first policy present (single when measured)
    result = next(iter(results.values()))
    out = Path(args.out)
    tables = build_tables(result)
    if len(results) > 1:  # scores of several view policies: how fragility moves between them
        tables.append(table_view_policies(results))
        print(f"view policies: {', '.join(results)}; the main tables are {next(iter(results))}'s")
    paths = write_tables(tables, out / "tables")
    summary = write_summary(result, out / "summary.json")
    print(digest(result))
    print(f"wrote {summary} and {len(paths)} table files under {out / 'tables'} "
          f"in {time.perf_counter() - t0:.1f} s")
    return 0
