"""Cost of the repeatability check (harness/measure/repeatability.py) on the smoke profile.

Run: ``python benchmarks/bench_repeatability.py [--evaluators companion,planted-robust,ref-vit-clip]``.

Measures each evaluator's repeatability on the bundled scenes under the smoke profile, in a
fresh cache directory (nothing cached), and prints per evaluator the largest difference, where
it was, and the wall time of the in-process passes (one build: batches of 1, then a batch of N)
and of the fresh process (interpreter start, imports, the evaluator's build, one batch).
Images come from the box rasterizer (``harness.testing.BoxRasterizer``), so the numbers are the
check's own cost without Blender's renders (which the audit's records have already made).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--evaluators", default="companion,planted-robust,ref-vit-clip,ref-clipiqa")
    args = parser.parse_args()
    from harness.run.session import AuditOptions, AuditSession
    from harness.testing import BoxRasterizer

    ids = [e for e in args.evaluators.split(",") if e]
    out = {}
    with tempfile.TemporaryDirectory(prefix="t3d-bench-repeat-") as tmp:
        options = AuditOptions(profile="smoke", evaluators=tuple(ids), cache_dir=Path(tmp) / "cache",
                               report_dir=Path(tmp) / "reports", bootstrap=0, device="cpu")
        session = AuditSession(options, renderer_factory=lambda _: BoxRasterizer())
        for ev in ids:
            started = time.monotonic()
            found = session.repeatability.result(ev)
            out[ev] = {"max_abs_diff": found.max_abs_diff, "where": found.where, "error": found.error,
                       "inputs": found.inputs, **{f"{k}_s": v for k, v in found.seconds.items()},
                       "total_s": round(time.monotonic() - started, 3)}
            started = time.monotonic()
            AuditSession(options, renderer_factory=lambda _: BoxRasterizer()).repeatability.result(ev)
            out[ev]["warm_s"] = round(time.monotonic() - started, 4)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
