"""Cost of a search beyond the grid through real Blender renders and pixel scoring.

Runs ``run_search`` for a pixel-only scorer (the image's warmth) on the smoke scenes over the
whole space and prints: wall time, the time spent measuring (rendering and scoring, cached or
not), the search's own overhead (everything else: optimiser, trial log, objectives, the
held-out bootstrap) as a share of the wall time, renders fetched and rendered, and how many
trials coincided with an earlier point (their renders came from the cache).

    python benchmarks/bench_search.py [--budget 200] [--split 1+2] [--batch 8] [--jobs N] [--rerun]

``--rerun`` then runs the same search again on the same caches with its trial log deleted (every
point measured again): the render reuse when configurations coincide, as a wall time and a
count of renders made (0 when every render came from the cache).

``--jobs N`` renders each batch's missing renders in N local processes first (``warm_on``,
the local twin of the Ray backend). The render cache is a fresh temporary directory unless
``--cache-dir`` is given, so the first run renders everything.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.evaluators import registry
from harness.evaluators.scorer import Scorer, scorer_spec
from harness.search.pipeline import SearchRequest, Split, run_search


class Warmth(Scorer):
    """Mean (red − blue) / 255 of the image: a pixel statistic, blind to the configuration."""

    name = "bench-search-warmth"
    needs_text = False
    score_range = (-1.0, 1.0)

    def score_batch(self, images, texts):
        return [float(np.mean(im[..., 0].astype(np.float64) - im[..., 2])) / 255.0 for im in images]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--split", default="1+2", help="DISCOVERY+HELD_OUT prompts")
    parser.add_argument("--jobs", type=int, default=0, help="local render processes per batch (0: inline)")
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--rerun", action="store_true", help="search again on the same caches, log deleted")
    args = parser.parse_args()
    registry.register(Warmth, replace=True)
    spec = scorer_spec(Warmth)
    discovery, _, held = args.split.partition("+")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(args.cache_dir or tmp)
        prefetch = None
        if args.jobs:
            from harness.backends import warm_on

            def prefetch(requests):  # the local twin of --backend ray
                warm_on("local", requests, cache / "renders", jobs=args.jobs)

        request = SearchRequest(spec.id, "smoke", "shift", budget=args.budget, seed=0, batch=args.batch,
                                split=Split(int(discovery), int(held)))  # fmt: skip
        t = time.perf_counter()
        res = run_search(request, cache_dir=cache, spec=spec, log_path=cache / "log.jsonl", prefetch=prefetch)
        wall = time.perf_counter() - t
        doc = res.to_dict()
        points = [tr.point for tr in res.trials]
        repeats = len(points) - len(set(points))
        overhead = wall - res.measure_seconds
        print(f"budget {args.budget}, batch {args.batch}, split {args.split}, {len(res.trials)} trials")
        print(f"wall {wall:.1f} s; measuring (render + score) {res.measure_seconds:.1f} s; "
              f"search overhead {overhead:.1f} s = {overhead / wall:.1%} of wall")  # fmt: skip
        print(f"renders: {doc['renders']['fetched']} fetched, {doc['renders']['rendered']} rendered; "
              f"{repeats} trials repeated an earlier point (all their renders cached)")  # fmt: skip
        renders = [res.space.configuration(res.space.parse(p)).render for p in points]
        shared = len(renders) - len(set(renders))
        print(f"{shared} trials share their render configuration with an earlier trial (a repeat, or a "
              f"background or caption template change only: their renders are reused)")  # fmt: skip
        print(f"per configuration: {wall / max(len(res.trials), 1):.2f} s wall")
        print("worst:", doc["worst"]["text"] if doc["worst"] else None)
        print("result:", json.dumps({k: doc[k] for k in ("discovery", "held_out", "optimism", "confirmed")}))
        if args.rerun:
            (cache / "log.jsonl").unlink()
            t = time.perf_counter()
            again = run_search(request, cache_dir=cache, spec=spec, log_path=cache / "log.jsonl", prefetch=prefetch)
            again_doc = again.to_dict()
            print(f"rerun on the same caches, trial log deleted: wall {time.perf_counter() - t:.1f} s; renders "
                  f"{again_doc['renders']['fetched']} fetched, {again_doc['renders']['rendered']} rendered; "
                  f"same worst: {again_doc['worst'] == doc['worst']}")  # fmt: skip


if __name__ == "__main__":
    main()
