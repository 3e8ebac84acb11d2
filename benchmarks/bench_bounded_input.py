"""The bounded JSON reader's depth pre-scan on hostile text: time per size, to show it linear.

Texts: escaped quotes in one unterminated string (``"\\"\\"\\"...``, which a string pattern that
could fail restarted at every quote), brackets inside strings, and nesting exactly at the
limit repeated side by side (a scan per level would be ``limit`` times the text). Run:
``python benchmarks/bench_bounded_input.py [max_kib]``; prints the pre-scan's seconds per text and
size (the json parse after it is Python's own). On a 2-core x86_64 CPU the old scan took 25 s on
100 KB of escaped quotes and 104 s on 200 KB.
"""

from __future__ import annotations

import sys
import time

from harness.core import bounded_input


def texts(size: int, limit: int) -> dict[str, str]:
    nested = "[" * limit + "]" * limit
    return {
        "escaped quotes": '"' + '\\"' * (size // 2),
        "brackets in strings": "[" + ",".join(['"[[[{{{"'] * (size // 9)) + "]",
        f"depth {limit} side by side": "[" + ",".join([nested] * max(1, size // (2 * limit + 1))) + "]",
    }


def main(max_kib: int = 1024) -> None:
    limit = bounded_input.DEFAULT_MAX_DEPTH
    sizes = [k * 1024 for k in (max_kib // 16, max_kib // 4, max_kib) if k]
    for size in sizes:
        for name, text in texts(size, limit).items():
            started = time.perf_counter()
            deeper = bounded_input._deeper_than(bounded_input._brackets(text), limit + 1)
            scan = time.perf_counter() - started
            assert not deeper  # every text is within limit + 1 (the outer list): the scan reads all of it
            print(f"{name:<28} {len(text) / 1024:>8.0f} KiB  pre-scan {scan:8.4f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1024)
