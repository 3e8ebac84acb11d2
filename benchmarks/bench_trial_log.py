"""Cost of the sealed trial log (``harness.search.trial_log``): appending a trial (seal, write,
flush, fsync) and reading a whole log back verified, per trial, against the plain JSON-lines
read it replaced (``json.loads`` per line, no seal). Run:
``python benchmarks/bench_trial_log.py [trials]`` (default 2000; the largest budget is 100000).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from harness.search.trial_log import Trial, TrialLog, read_log

POINT = ("resolution=224,focal_length=50,lighting=city,background=255,pitch=52,yaw=0,"
         "template=a.top-down.view.of.-,framing_margin=0.15,light_rotation=0,light_strength=1.00,"
         "colour_temperature=3400")  # fmt: skip
KEY = "0" * 64


def main(trials: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.jsonl"
        start = time.perf_counter()
        with TrialLog(path, KEY, {"bench": True}) as log:
            for n in range(trials):
                log.append(Trial(n, n // 8, POINT, 0.001 * n, seconds=0.4))
        write_s = time.perf_counter() - start
        start = time.perf_counter()
        assert len(read_log(path, KEY)) == trials
        read_s = time.perf_counter() - start
        start = time.perf_counter()
        plain = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        plain_s = time.perf_counter() - start
        size = path.stat().st_size
    print(f"trials: {trials}, log: {size / trials:.0f} bytes per trial")
    print(f"append (seal, write, fsync): {write_s / trials * 1e3:.3f} ms per trial")
    print(f"read verified: {read_s / trials * 1e6:.1f} us per trial ({read_s:.2f} s in all)")
    print(f"read unverified (json.loads per line): {plain_s / len(plain) * 1e6:.1f} us per trial")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
