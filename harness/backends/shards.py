"""Cutting a plan into shards (one cluster job each) and naming them on the command line.

Shards are cut from the *whole* plan in plan order, before anything is skipped, so shard
``i`` holds the same renders on every run with the same shard size: a retry command can name
the failed shards (``--shards 3,7``) and a rerun resumes each from the store. A render shard
holds whole scene groups where it can (a scene is built into Blender once per shard); a
group larger than the shard size is split.

The shard size comes from the cost model (:func:`harness.measure.cluster_estimate.renders_per_shard`):
as many renders as fill half the job time limit at the measured seconds per render, so a
shard finishes well inside its limit on a node as fast as the calibration's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from harness.core.errors import AuditError
from harness.measure.cluster_estimate import groups_per_shard, renders_per_shard

__all__ = ["chunks", "format_shards", "groups_per_shard", "parse_shards", "render_shards", "renders_per_shard"]

T = TypeVar("T")


def render_shards(requests: Sequence[T], size: int, identity: object = lambda r: r.identity) -> list[list[T]]:
    """``requests`` cut into shards of at most ``size``, whole scene groups (consecutive equal
    ``identity``) kept together where they fit; plan order is kept, so the cut is stable."""
    if size < 1:
        raise ValueError(f"shard size must be at least 1, got {size}")
    groups: list[list[T]] = []
    for r in requests:
        if groups and identity(groups[-1][-1]) == identity(r):
            groups[-1].append(r)
        else:
            groups.append([r])
    shards: list[list[T]] = []
    for group in groups:
        for start in range(0, len(group), size):
            piece = group[start : start + size]
            if shards and len(shards[-1]) + len(piece) <= size:
                shards[-1].extend(piece)
            else:
                shards.append(list(piece))
    return shards


def chunks(items: Sequence[T], size: int) -> list[list[T]]:
    """``items`` in consecutive chunks of at most ``size`` (score shards of scene groups)."""
    if size < 1:
        raise ValueError(f"shard size must be at least 1, got {size}")
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def parse_shards(text: str) -> frozenset[int]:
    """``--shards``: comma-separated shard numbers and ranges (``3,7,10-12``)."""
    out: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        lo, dash, hi = part.partition("-")
        try:
            first, last = int(lo), int(hi if dash else lo)
        except ValueError:
            raise AuditError(f"not a shard number or range: {part!r}", where="--shards",
                             hint="give numbers and ranges, e.g. --shards 3,7,10-12") from None  # fmt: skip
        if first < 0 or last < first:
            raise AuditError(f"bad shard range {part!r}", where="--shards",
                             hint="ranges go low-high from 0, e.g. 10-12")  # fmt: skip
        out.update(range(first, last + 1))
    if not out:
        raise AuditError("no shard numbers given", where="--shards", hint="e.g. --shards 3,7")
    return frozenset(out)


def format_shards(numbers: Sequence[int]) -> str:
    """Shard numbers as ``--shards`` reads them, runs collapsed (``3,7,10-12``)."""
    nums = sorted(set(numbers))
    parts: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ",".join(parts)
