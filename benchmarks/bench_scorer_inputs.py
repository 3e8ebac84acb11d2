"""Cost of handing a user Scorer read-only copies of its images (harness/evaluators/scorer_thread.py).

Run: ``python benchmarks/bench_scorer_inputs.py [--size 512] [--batch 32] [--repeat 200]``.

Prints, per batch of ``--batch`` distinct ``(size, size, 3)`` uint8 images: the time to make
the read-only copies (:func:`frozen_inputs`), the time of the after-call check that nothing
was changed (:func:`changed_inputs`), and one persistent-thread round trip of an empty call.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from harness.evaluators.scorer_thread import ScorerThread, changed_inputs, frozen_inputs


def _per_call_ms(fn, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    batch = [rng.integers(0, 256, (args.size, args.size, 3), dtype=np.uint8) for _ in range(args.batch)]
    texts = ["a caption"] * args.batch
    handed = frozen_inputs(batch)
    thread = ScorerThread("bench")
    copy_ms = _per_call_ms(lambda: frozen_inputs(batch), args.repeat)
    check_ms = _per_call_ms(lambda: changed_inputs(batch, handed, list(handed), texts, list(texts)), args.repeat)
    hop_ms = _per_call_ms(lambda: thread.call(lambda: None, 5.0), args.repeat * 10)
    thread.stop()
    print(json.dumps({
        "image": f"{args.size}x{args.size}x3 uint8", "batch": args.batch,
        "copy_ms_per_batch": round(copy_ms, 3), "copy_ms_per_image": round(copy_ms / args.batch, 4),
        "check_ms_per_batch": round(check_ms, 3), "thread_round_trip_ms": round(hop_ms, 4),
    }, indent=1))


if __name__ == "__main__":
    main()
