"""Platform-stable seeded randomness for generators and probes.

Streams come from :class:`random.Random` seeded with the first 8 bytes of a sha256 and are
consumed through ``random()`` only (its Mersenne Twister output is fixed across Python
versions and platforms, unlike NumPy ``Generator`` method streams or ``random.sample``).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def rng_for(*parts: object) -> random.Random:
    """A :class:`random.Random` seeded from sha256 of the ``|``-joined ``str`` of ``parts``."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def pick(rng: random.Random, n: int) -> int:
    """A uniform index in ``range(n)``."""
    return min(n - 1, int(rng.random() * n))


def sample(rng: random.Random, items: Sequence[T], k: int) -> list[T]:
    """``k`` distinct items in draw order (partial Fisher–Yates)."""
    pool = list(items)
    for i in range(k):
        j = i + pick(rng, len(pool) - i)
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


def normal(rng: random.Random, sigma: float) -> float:
    """A draw from N(0, sigma²) (Box–Muller)."""
    u1 = max(rng.random(), 1e-12)
    u2 = rng.random()
    return sigma * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
