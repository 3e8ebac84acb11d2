"""What one xdist worker tells the controller (builtins only): the audit tests it collected,
the records files it resolved, its measurement counts and the cache entries it discarded."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core import cacheseal

if TYPE_CHECKING:
    from harness.measure.images import MeasureStats


def worker_facts(
    collected: Mapping[str, str],
    records_files: Mapping[str, Path],
    measure_stats: Mapping[str, MeasureStats],
    discarded_before: Mapping[str, int],
) -> dict[str, object]:
    """Per-worker facts for the controller; ``discarded_before``: the cache entries discarded
    before this session (an earlier run in the same process), left out of the counts."""
    return {
        "collected": dict(sorted(collected.items())),
        "records": {e: str(p) for e, p in sorted(records_files.items())},
        "measure": {
            e: {
                "images": s.images,
                "renders": s.renders,
                "scored_pairs": s.scored_pairs,
                "cached_pairs": s.cached_pairs,
                "reused_pairs": s.reused_pairs,
                "failed_rows": s.failed_rows,
                "model_loaded": s.model_loaded,
            }
            for e, s in sorted(measure_stats.items())
        },
        "cache_discarded": {
            kind: n - discarded_before.get(kind, 0)
            for kind, n in sorted(cacheseal.discarded_counts().items())
            if n > discarded_before.get(kind, 0)
        },
    }
