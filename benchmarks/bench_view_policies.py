"""Fragility under each view policy: peak ρ, W and discrimination per evaluator and policy.

Runs the audit in-process (Blender renders through the render cache, the evaluators' score
cache) once per view policy on one profile, then prints ``table_view_policies`` (Markdown) and
writes it as Markdown and CSV next to the cache. Renders are shared: mean4, max4 and sheet4
look at the same four views, so only the first multi-view policy renders.

    python benchmarks/bench_view_policies.py --profile smoke \\
        --evaluators ref-vit-clip,ref-rn-clip,ref-siglip,ref-clipiqa --cache-dir /tmp/cache
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from harness.core.fileio import write_text_atomic
from harness.core.paths import default_cache_dir
from harness.protocol.view_policies import VIEW_POLICIES
from harness.report.tables import table_view_policies
from harness.run.session import AuditOptions, AuditSession


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--evaluators", default="ref-vit-clip,ref-rn-clip,ref-siglip,ref-clipiqa")
    parser.add_argument("--policies", default=",".join(VIEW_POLICIES))
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir())
    parser.add_argument("--bootstrap", type=int, default=None)
    args = parser.parse_args()
    evaluators = tuple(e for e in args.evaluators.split(",") if e)
    results = {}
    for policy in args.policies.split(","):
        t = time.perf_counter()
        session = AuditSession(AuditOptions(
            profile=args.profile, evaluators=evaluators, cache_dir=args.cache_dir,
            bootstrap=args.bootstrap, view_policy=policy,
        ))
        results[policy] = session.summary_cache.panel_result()
        print(f"{policy}: {len(session.inputs.plan.renders)} renders planned, audit in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
    table = table_view_policies(results)
    print(table.to_markdown())
    out = args.cache_dir / f"view_policies-{args.profile}"
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / f"{table.key}.md", table.to_markdown())
    write_text_atomic(out / f"{table.key}.csv", table.to_csv())
    print(f"wrote {out / table.key}.md and .csv")


if __name__ == "__main__":
    main()
