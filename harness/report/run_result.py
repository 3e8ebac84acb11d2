"""What one audit run produced, typed: the one input of the report writer.

The run side (:func:`harness.run.outputs.run_result`) gathers it from the run's parts; the
writer (:mod:`harness.report.writer`) formats it and never sees the session. Everything here
is a plain value except :attr:`RunResult.panel_result`, computed on demand: a warm report
reuses its derived files (summary, tables, figures) from the report pieces and then never
computes the panel statistics at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.errors import AuditError
from harness.core.jsonout import JSONObject

if TYPE_CHECKING:
    from harness.report.thumbs import ThumbSet
    from harness.stats.audit_stats import AuditResult


def require_evaluators(evaluators: Sequence[str]) -> None:
    """A report covers at least one evaluator (``AuditError`` otherwise)."""
    if not evaluators:
        raise AuditError("no evaluator was audited", where="report", hint="check -k / --audit-evaluators")


@dataclass(frozen=True)
class SceneInputs:
    """The scene set's files the manifest hashes (``manifest.json#/inputs``).

    ``root``: the scene set's directory; ``files``: its scene and asset files (absolute paths);
    ``paraphrases``: whether the profile varies the caption's paraphrase (then the bundled
    paraphrases file is an input too).
    """

    root: Path
    files: tuple[Path, ...]
    paraphrases: bool


@dataclass(frozen=True)
class RunResult:
    """One run's outputs for the report of ``evaluators`` (sorted ids).

    * ``run_id``: the report's directory name (``--audit-run-id`` or derived from the inputs);
    * ``report_dir``: where reports go (``--audit-report-dir``); ``cache_dir``: the cache dir
      holding the report pieces;
    * ``records_files``: evaluator → its verified raw score records (CSV, records format);
    * ``bootstrap``, ``seed``: the resampling the statistics used (draws; RNG seed);
    * ``cards``: evaluator → its Evaluator Configuration Card (JSON-ready, with ``card_id``);
    * ``run_options``: ``manifest.json#/options`` (JSON-ready);
    * ``scene_inputs``: the scene files the manifest hashes; ``weight_files``: evaluator →
      its local weight files;
    * ``render_host``: ``manifest.json#/render_host`` (``None``: nothing rendered here);
    * ``searches``: evaluator → its search document (``search --json``), ``None`` when the
      profile declares no search block;
    * ``search_figures``: evaluator → ``(images, sample)``, what its search figures are drawn
      from (the confirmed worst configuration's render beside c0's, and the flip region's
      sample points; either ``None``), handed in as arrays and numbers;
    * ``thumbnails``: the thumbnails' encoded bytes (``harness.measure.thumbs.Thumbnails``),
      ``None`` when no evaluator scored renders;
    * ``panel_result``: the panel's ``AuditResult`` over ``evaluators`` (computed when called);
    * ``claims``: the claims the run's tests made (``audit_claim``): folder name → the
      ``t3d-audit claim --out`` files as bytes (file name → bytes), written under ``claims/``.
    """

    run_id: str
    evaluators: tuple[str, ...]
    report_dir: Path
    cache_dir: Path
    records_files: Mapping[str, Path]
    bootstrap: int
    seed: int
    cards: Mapping[str, JSONObject]
    run_options: JSONObject
    scene_inputs: SceneInputs
    weight_files: Mapping[str, tuple[Path, ...]]
    render_host: JSONObject | None
    searches: Mapping[str, JSONObject] | None
    search_figures: Mapping[str, tuple[object, object]]
    thumbnails: ThumbSet
    panel_result: Callable[[], AuditResult]
    claims: Mapping[str, Mapping[str, bytes]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        require_evaluators(self.evaluators)
