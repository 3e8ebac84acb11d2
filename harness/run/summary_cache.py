"""The run's statistics: each evaluator's summary and the panel's, computed once.

Summaries are disk-cached under ``<cache dir>/summaries/<key>.json`` (sealed, written under a
file lock), keyed by the sha256 of the records files, bootstrap, seed and the statistics'
sources, so every worker and every rerun reuses them. :class:`harness.run.session.AuditSession`
owns one :class:`SummaryCache` (``session.summary_cache``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core import cacheseal
from harness.core.fileio import write_bytes_atomic
from harness.core.hashing import sha256_file, sha256_json

if TYPE_CHECKING:
    import pandas as pd

    from harness.run.inputs import RunInputs
    from harness.run.record_cache import RecordsCache
    from harness.stats.audit_stats import AuditResult
    from harness.stats.summary import EvaluatorSummary, PanelSummary


def _stats_code_hash() -> str:
    """Hash of the statistics sources: cached summaries are invalid once the maths changes.

    The pure statistics (``stats/`` and the human-agreement statistics of ``human/``, whose
    draws the metric engine reads), the typed summary that serialises them, the number reader
    and the metric registry (which statistics exist, their keys)."""
    import harness.stats as stats_pkg

    root = Path(stats_pkg.__file__).parent
    harness_dir = root.parent
    files = [
        *sorted(root.glob("*.py")), *sorted((harness_dir / "human").glob("*.py")),
        harness_dir / "core" / "numbers.py", harness_dir / "vocab" / "metrics.py",
    ]
    return sha256_json({str(p.relative_to(harness_dir)): sha256_file(p) for p in files})


def registered_identity() -> list[str] | None:
    """What the registered statistics are (``module:qualname`` of each ``compute``, by metric
    name), or ``None`` when none is: a summary computed without a statistic registered later
    must not be served for a run that has it."""
    from harness.vocab.metrics import computed_metrics

    specs = computed_metrics()
    if not specs:
        return None
    out = []
    for spec in specs:
        fn = spec.compute
        path = getattr(fn, "path", None)  # a LazyCompute names its "module:function"
        where = path if isinstance(path, str) else (
            f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', '?')}"
        )
        out.append(f"{spec.name}={where}")
    return out


def _read_summary(path: Path, key: str, *, discard: bool = False) -> dict[str, object] | None:
    """The summary sealed in ``path`` for ``key``; ``None`` if absent or bad.

    With ``discard`` (call it holding the entry's lock) a bad file is deleted and reported.
    """
    if not path.is_file():
        return None
    try:
        found = json.loads(cacheseal.read_sealed(path, key))
        if not isinstance(found, dict):
            raise cacheseal.CorruptEntry("summary is not a JSON object")
    except (cacheseal.CorruptEntry, ValueError) as exc:
        if discard:
            path.unlink(missing_ok=True)
            cacheseal.discarded("summaries", path, str(exc))
        return None
    return found


class SummaryCache:
    """Summaries of the run's records (per evaluator and per panel), disk-cached."""

    def __init__(self, inputs: RunInputs, records: RecordsCache):
        self.inputs = inputs
        self.records = records
        self._summaries: dict[str, dict[str, object]] = {}
        self._panel_results: dict[tuple[str, ...], AuditResult] = {}

    def cached(
        self, files: list[Path], compute: Callable[[], dict[str, object]], extra: dict[str, object] | None = None
    ) -> dict[str, object]:
        """``compute()`` once for the records ``files`` (and ``extra`` inputs), as read back."""
        inputs: dict[str, object] = {
            "records": [sha256_file(f) for f in files],
            "bootstrap": self.inputs.bootstrap,
            "seed": self.inputs.seed,
            "stats": _stats_code_hash(),
        }
        if extra is not None:  # only for other documents, so summary keys stay as they were
            inputs["extra"] = extra
        registered = registered_identity()
        if registered is not None:  # only then, so the study's summary keys stay as they were
            inputs["registered"] = registered
        key = sha256_json(inputs)
        path = self.inputs.options.cache_dir / "summaries" / f"{key}.json"
        found = _read_summary(path, key)
        if found is not None:
            return found
        from filelock import FileLock

        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            found = _read_summary(path, key, discard=True)
            if found is not None:
                return found
            summary = compute()
            # store and return what a reader gets, so every process sees identical values
            text = json.dumps(summary, sort_keys=True, allow_nan=True)
            write_bytes_atomic(path, cacheseal.sealed(key, text.encode("utf-8")))
            return json.loads(text)

    def summary(self, evaluator_id: str) -> dict[str, object]:
        """The evaluator's entry of the audit summary (statistics of its own records)."""
        if evaluator_id not in self._summaries:
            from harness.measure.audit_inputs import audit_result
            from harness.stats.audit_stats import summary_with_intervals

            full = self.cached(
                [self.records.file(evaluator_id)],
                lambda: summary_with_intervals(
                    audit_result(self.records.records(evaluator_id), self.inputs.bootstrap, self.inputs.seed)
                ),
            )
            self._summaries[evaluator_id] = full["evaluators"][evaluator_id]
        return self._summaries[evaluator_id]

    def evaluator_summary(self, evaluator_id: str) -> EvaluatorSummary:
        """:meth:`summary`, typed (the ``audit_summary`` fixture)."""
        from harness.stats.summary import EvaluatorSummary

        return EvaluatorSummary.from_entry(evaluator_id, self.summary(evaluator_id))

    def panel(self, evaluator_ids: list[str] | None = None) -> PanelSummary:
        """:meth:`panel_summary`, typed (the ``audit_panel_summary`` fixture)."""
        from harness.stats.summary import PanelSummary

        return PanelSummary.from_summary(self.panel_summary(evaluator_ids))

    def panel_records(self, evaluator_ids: list[str] | None = None) -> pd.DataFrame:
        import pandas as pd

        ids = sorted(evaluator_ids or self.inputs.specs)
        return pd.concat([self.records.records(e) for e in ids], ignore_index=True)

    def panel_result(self, evaluator_ids: list[str] | None = None) -> AuditResult:
        """The ``AuditResult`` over the evaluators, computed once per process."""
        from harness.measure.audit_inputs import audit_result

        ids = tuple(sorted(evaluator_ids or self.inputs.specs))
        if ids not in self._panel_results:
            self._panel_results[ids] = audit_result(
                self.panel_records(list(ids)), self.inputs.bootstrap, self.inputs.seed
            )
        return self._panel_results[ids]

    def panel_summary(self, evaluator_ids: list[str] | None = None) -> dict[str, object]:
        """The full summary over the evaluators (simultaneous band, reversals), disk-cached."""
        from harness.stats.audit_stats import summary_with_intervals

        ids = sorted(evaluator_ids or self.inputs.specs)
        return self.cached(
            [self.records.file(e) for e in ids],
            lambda: summary_with_intervals(self.panel_result(ids)),
        )
