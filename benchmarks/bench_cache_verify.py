"""Cost of verifying cache reads (``harness.core.cacheseal`` and the render cache's meta checks).

Builds, in a temp dir, the caches of the README's main job at its size: 1,188 renders of
224 px (noisy gradients, so PNG sizes are like 8-sample Cycles renders), one records file per
evaluator at paper scale (119,400 rows), a summary, and one score segment per render. Then
times each read verified (as the harness does it) against the same read unverified (bytes
plus decode/parse only). Run: ``python benchmarks/bench_cache_verify.py [renders] [rows]``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.core import cacheseal
from harness.core.hashing import sha256_bytes
from harness.evaluators.cache import ScoreCache
from harness.protocol.configurations import RenderConfig
from harness.protocol.records import read_records, write_records
from harness.render.cache import META, RenderCache, decode_png
from harness.run.record_cache import _records_ok
from harness.run.summary_cache import _read_summary


def render_like(seed: int, size: int = 224) -> np.ndarray:
    """(size, size, 4) uint8: a lit gradient with per-pixel noise, opaque."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size] / size
    base = np.stack([x, y, (x + y) / 2], axis=-1) * rng.uniform(120, 230, 3)
    rgb = np.clip(base + rng.normal(0, 6, base.shape), 0, 255).astype(np.uint8)
    return np.dstack([rgb, np.full((size, size), 255, np.uint8)])


def timed(fn, repeat: int = 3) -> float:
    """Best of ``repeat`` wall times (s): the machine may be shared."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def bench_render(root: Path, n: int) -> None:
    cache = RenderCache(root / "renders")
    keys = [cache.key(f"{i:064x}", RenderConfig(resolution_px=224, samples=8)) for i in range(n)]
    for i, key in enumerate(keys):
        cache.put(key, render_like(i), {"scene_id": f"s{i}", "inputs": {"i": i}})
    size = sum((cache.entry_dir(k) / "image.png").stat().st_size for k in keys) / n

    def unverified() -> None:
        for key in keys:
            entry = cache.entry_dir(key)
            json.loads((entry / META).read_bytes())
            decode_png((entry / "image.png").read_bytes())

    def verified() -> None:
        for key in keys:
            assert cache.get(key) is not None

    def checks_only() -> None:  # what verification adds: sha256 of the PNG plus the meta checks
        from harness.render.cache import _check_meta

        for key in keys:
            entry = cache.entry_dir(key)
            raw = (entry / META).read_bytes()
            _check_meta(raw, json.loads(raw), key)
            sha256_bytes((entry / "image.png").read_bytes())

    unverified()  # warm the page cache so both runs read from memory
    base, full, checks = timed(unverified), timed(verified), timed(checks_only)
    print(f"render cache: {n} entries, PNG {size / 1024:.0f} KiB on average")
    print(f"  unverified read+decode: {base:.3f} s ({1e3 * base / n:.2f} ms/entry)")
    print(f"  verified get():         {full:.3f} s ({1e3 * full / n:.2f} ms/entry)")
    print(f"  checks alone (sha256 + meta): {checks:.3f} s ({1e3 * checks / n:.3f} ms/entry, "
          f"{100 * checks / base:.1f}% of an unverified read)")


def bench_scores(root: Path, n: int) -> None:
    cache = ScoreCache(root)
    shas = [f"{i:064x}" for i in range(n)]
    captions = [f"a top-down view of a room, template {t}" for t in range(29)]
    for sha in shas:
        cache.put("id", sha, {c: 0.25 + k / 100 for k, c in enumerate(captions)})

    def verified() -> None:
        for sha in shas:
            assert len(cache.get("id", sha, captions)) == 29

    def unverified() -> None:
        for sha in shas:
            for seg in (root / "scores" / "id" / sha[:2] / sha).glob("*.json"):
                json.loads(seg.read_bytes().partition(b"\n")[2])

    unverified()
    base, full = timed(unverified), timed(verified)
    print(f"score cache: {n} images x 29 captions (one segment each)")
    print(f"  unverified: {base:.3f} s; verified get(): {full:.3f} s "
          f"(+{1e3 * (full - base) / n:.3f} ms/image)")


def bench_records(root: Path, rows: int) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_records import make_table

    path = write_records(make_table(rows), root / "records" / "k.csv")
    cacheseal.sidecar(path).write_bytes(cacheseal.seal("k", path.read_bytes()))
    read_records(path)
    check = timed(lambda: _records_ok(path, "k"))
    parse = timed(lambda: read_records(path))
    print(f"records: {rows} rows, {path.stat().st_size / 2**20:.1f} MiB CSV")
    print(f"  seal check: {check:.3f} s; read_records (parse + validate): {parse:.3f} s "
          f"({100 * check / parse:.1f}% added)")


def bench_summary(root: Path) -> None:
    doc = {"evaluators": {f"e{k}": {"rho": {f"f{i}": 0.1 * i for i in range(200)}} for k in range(5)}}
    text = json.dumps(doc, sort_keys=True).encode()
    path = root / "summaries" / "k.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(cacheseal.sealed("k", text))
    reps = 200
    base = timed(lambda: [json.loads(path.read_bytes().partition(b"\n")[2]) for _ in range(reps)])
    full = timed(lambda: [_read_summary(path, "k") for _ in range(reps)])
    print(f"summary: {len(text) / 1024:.0f} KiB; unverified {1e3 * base / reps:.3f} ms, "
          f"verified {1e3 * full / reps:.3f} ms per read")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1188
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 119_400
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench_render(root, n)
        bench_scores(root, n)
        bench_records(root, rows)
        bench_summary(root)


if __name__ == "__main__":
    main()
