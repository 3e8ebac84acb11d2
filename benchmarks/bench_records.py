"""Records throughput at paper scale: validate, write and read one evaluator's score file.

One evaluator in the study scores 300 scenes under 398 configurations (387 shared + 11
paraphrase levels) ≈ 119k rows, plus probe rows. Run: ``python benchmarks/bench_records.py
[rows]``; prints seconds per step and file sizes.
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.protocol.profiles import get_profile
from harness.protocol.records import (
    read_records,
    records_from_rows,
    validate_records,
    write_records,
)


def make_table(n_rows: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    configs = get_profile("paper").configurations()
    n_scenes = max(1, math.ceil(n_rows / len(configs)))
    rows = []
    for s in range(n_scenes):
        sha = f"{s:064x}"
        for c in configs:
            if len(rows) == n_rows:
                break
            failed = rng.random() < 0.01
            rows.append(
                {
                    "evaluator": "clip-vit-l14",
                    "generator": f"gen{s % 6}",
                    "prompt_id": f"prompt-{s // 6:02d}",
                    "scene_sha256": sha,
                    "factor": c.factor,
                    "level": c.level,
                    "caption": f"A top-down view of scene {s} ({c.id})",
                    "score": math.nan if failed else float(rng.normal(0.25, 0.05)),
                    "status": "failed" if failed else "ok",
                    "error": "render timeout" if failed else "",
                }
            )
    return records_from_rows(rows)


def main() -> None:
    n_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 119_400
    t = time.perf_counter()
    df = make_table(n_rows)
    print(f"rows: {len(df)}  (built in {time.perf_counter() - t:.2f} s)")
    t = time.perf_counter()
    validate_records(df)
    print(f"validate_records: {time.perf_counter() - t:.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        for suffix in (".csv", ".parquet"):
            path = Path(tmp) / f"records{suffix}"
            t = time.perf_counter()
            write_records(df, path)
            w = time.perf_counter() - t
            t = time.perf_counter()
            read_records(path)
            r = time.perf_counter() - t
            size = path.stat().st_size / 2**20
            print(f"{suffix:8s} write {w:.2f} s  read+validate {r:.2f} s  size {size:.1f} MiB")


if __name__ == "__main__":
    main()
