"""Each evaluator's raw score records, measured once across workers and runs.

The records CSV lives under ``<cache dir>/records/<key>.csv``, keyed by the plan, the
evaluator's identity and the renderer, written under a file lock (temp file + rename) and
sealed by ``<key>.csv.seal`` (:mod:`harness.core.cacheseal`); a file that fails the check is
discarded, reported and measured again. :class:`harness.run.session.AuditSession` owns one :class:`RecordsCache` (``session.record_cache``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core import cacheseal
from harness.core.errors import AuditError
from harness.core.fileio import write_bytes_atomic
from harness.core.hashing import sha256_json

if TYPE_CHECKING:
    import pandas as pd

    from harness.core.progress import Progress
    from harness.evaluators.base import EvaluatorSpec
    from harness.measure.images import MeasureStats
    from harness.run.inputs import RunInputs


def _records_ok(path: Path, key: str, *, discard: bool = False) -> bool:
    """Whether the records CSV at ``path`` matches its sidecar seal for ``key``.

    With ``discard`` (call it holding the entry's lock) a bad file and its seal are deleted
    and reported; a missing file is just a miss.
    """
    if not path.is_file():
        return False
    try:
        cacheseal.check_sidecar(path, key)
    except cacheseal.CorruptEntry as exc:
        if discard:
            path.unlink(missing_ok=True)
            cacheseal.sidecar(path).unlink(missing_ok=True)
            cacheseal.discarded("records", path, str(exc))
        return False
    return True


def measuring_line(evaluator_id: str, rows: int) -> str:
    """The line a measurement starts with (renders missing from the cache are made now)."""
    return (f"t3d-audit: measuring {evaluator_id}: {rows} records (renders missing from the "
            "render cache are rendered now; this can take minutes)")


def measured_line(evaluator_id: str, stats: MeasureStats, seconds: float) -> str:
    """The line a measurement ends with: its counts and wall time."""
    return (f"t3d-audit: measured {evaluator_id} in {seconds:.0f} s: {stats.images} images "
            f"({stats.renders} rendered), {stats.scored_pairs} pairs scored")


class RecordsCache:
    """The run's records by evaluator: cache files, their frames, and the measurement counts."""

    def __init__(self, inputs: RunInputs, load_evaluator: Callable[[object], object] | None = None):
        self.inputs = inputs
        self._load_evaluator = load_evaluator
        self.files: dict[str, Path] = {}  # evaluator → its verified records file
        self.frames: dict[str, pd.DataFrame] = {}
        self.measure_stats: dict[str, MeasureStats] = {}
        self.store_gaps: dict[str, Exception] = {}  # evaluator → what --audit-store lacked
        # where a measurement's start and end lines go (the plugin points it at the terminal,
        # past pytest's capture: a run without the warm step measures for minutes in silence)
        self.announce: Callable[[str], None] = lambda line: None

    def key(self, evaluator_id: str) -> str:
        spec = self.inputs.specs[evaluator_id]
        return sha256_json(
            {"plan": self.inputs.plan.key, "evaluator": spec.identity_hash,
             "renderer": self.inputs.renderer_identity}
        )

    def file(self, evaluator_id: str) -> Path:
        """The evaluator's records, measured once across workers and runs (lock + rename).

        The CSV is sealed by ``<key>.csv.seal`` (``harness.core.cacheseal``); a file that fails the
        check is discarded, reported and measured again.
        """
        if evaluator_id in self.files:
            return self.files[evaluator_id]
        if evaluator_id in self.store_gaps:  # found once: every test of it reports the same
            raise self.store_gaps[evaluator_id]
        from filelock import FileLock

        from harness.measure.images import MeasureStats, measure
        from harness.protocol.records import write_records

        options = self.inputs.options
        key = self.key(evaluator_id)
        path = options.cache_dir / "records" / f"{key}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _records_ok(path, key):
            with FileLock(str(path) + ".lock"):
                if not _records_ok(path, key, discard=True):
                    stats = self.measure_stats.setdefault(evaluator_id, MeasureStats())
                    missing_before = stats.missing_pairs
                    started = time.monotonic()
                    self.announce(measuring_line(evaluator_id, len(self.inputs.plan.rows)))
                    bar = self._progress(evaluator_id)
                    try:
                        frame = measure(
                            self.inputs.specs[evaluator_id],
                            self.inputs.plan,
                            self.inputs.renderer,
                            cache_dir=options.cache_dir,
                            load_evaluator=self.build_evaluator,
                            stats=stats,
                            score_cache=self.inputs.score_cache(),
                            fill=options.store_fill == "local" or not options.store,
                            progress=bar,
                        )
                    finally:
                        if bar is not None:
                            bar.close()
                    if options.store:
                        try:
                            self.inputs.check_store_complete(evaluator_id, stats.missing_pairs - missing_before)
                        except AuditError as exc:
                            self.store_gaps[evaluator_id] = exc
                            raise
                    self.announce(measured_line(evaluator_id, stats, time.monotonic() - started))
                    write_records(frame, path)  # atomic: temp file + rename
                    write_bytes_atomic(cacheseal.sidecar(path), cacheseal.seal(key, path.read_bytes()))
        self.files[evaluator_id] = path
        return path

    def _progress(self, evaluator_id: str) -> Progress | None:
        """Plain progress lines of the evaluator's renders through :attr:`announce` (one every
        ``T3D_AUDIT_PROGRESS_INTERVAL`` seconds, default 30); ``None`` for an evaluator that
        reads scenes (it renders nothing)."""
        from harness.core.progress import progress
        from harness.measure.images import measurement_kind, render_total

        if measurement_kind(self.inputs.specs[evaluator_id]) != "image":
            return None
        return progress(render_total(self.inputs.plan), verb="fetched", unit="render",
                        write=self.announce, label=f"t3d-audit: measuring {evaluator_id}")  # fmt: skip

    def cached(self, evaluator_id: str) -> bool:
        """Whether the evaluator's records are in the cache and intact (measures nothing; a
        verified file is then what :meth:`file` returns, without checking it again)."""
        if evaluator_id in self.files:
            return True
        key = self.key(evaluator_id)
        path = self.inputs.options.cache_dir / "records" / f"{key}.csv"
        if not _records_ok(path, key):
            return False
        self.files[evaluator_id] = path
        return True

    def build_evaluator(self, spec: EvaluatorSpec) -> object:
        if self._load_evaluator is not None:
            return self._load_evaluator(spec)
        options = self.inputs.options
        return spec.build(device=options.device, batch_size=options.batch_size)

    def records(self, evaluator_id: str) -> pd.DataFrame:
        """The evaluator's tidy records (always as read back from the cache file)."""
        if evaluator_id not in self.frames:
            from harness.protocol.records import read_records

            self.frames[evaluator_id] = read_records(self.file(evaluator_id))
        return self.frames[evaluator_id]
