"""Throughput of the audit pipeline with the numpy stand-ins (no Blender, no torch).

Measures, on the tiny scene set (3 generators x 2 prompts) under the ``smoke`` profile:
plan building, a cold measurement (render + score every row), a warm one (all scores from the
cache, no model built), per-evaluator statistics, and writing the full report directory.
Prints one line per stage: seconds and rows per second where that applies.

    python benchmarks/bench_audit_pipeline.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from harness.measure.images import MeasureStats, measure
from harness.measure.plan import build_plan
from harness.protocol.profiles import get_profile
from harness.report.writer import write_report
from harness.run.outputs import run_result
from harness.run.session import AuditOptions, AuditSession
from harness.scenes.sceneset import SceneSet
from harness.testing import BoxRasterizer, TinySpec, write_tiny_scene_set


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        scenes = SceneSet.load(write_tiny_scene_set(root / "scenes"))
        t = time.perf_counter()
        plan = build_plan(scenes, get_profile("smoke"))
        print(f"plan: {len(plan.rows)} rows, {len(plan.renders)} renders in {time.perf_counter() - t:.3f} s")
        spec = TinySpec("bench-grid")
        for label in ("cold", "warm"):
            stats = MeasureStats()
            t = time.perf_counter()
            frame = measure(spec, plan, BoxRasterizer(), cache_dir=root / "cache", stats=stats)
            dt = time.perf_counter() - t
            print(
                f"measure ({label}): {dt:.3f} s, {len(frame) / dt:,.0f} rows/s, "
                f"{stats.scored_pairs} scored, {stats.cached_pairs} cached, model built: {stats.model_loaded}"
            )
        options = AuditOptions(
            profile="smoke", evaluators=("bench-*",), scenes=root / "scenes",
            report_dir=root / "reports", cache_dir=root / "cache", bootstrap=200,
        )
        session = AuditSession(
            options, renderer_factory=lambda _: BoxRasterizer(),
            extra_evaluators=[spec, TinySpec("bench-pairs", grid=False)],
        )
        t = time.perf_counter()
        for ev in session.inputs.specs:
            session.summary_cache.summary(ev)
        print(f"statistics (B=200, 2 evaluators): {time.perf_counter() - t:.3f} s")
        t = time.perf_counter()
        written = write_report(run_result(session, sorted(session.inputs.specs)), [])
        files = sum(1 for p in written.directory.rglob("*") if p.is_file())
        print(f"report: {files} files in {time.perf_counter() - t:.3f} s")


if __name__ == "__main__":
    main()
