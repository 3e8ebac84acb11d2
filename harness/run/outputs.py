"""Typed views of a run for its consumers, gathered from the session's parts.

* :func:`run_result`: a finished run's :class:`~harness.report.run_result.RunResult`; the
  controller (``harness.run.aggregate``) hands it to :func:`harness.report.writer.write_report`;
* :func:`gated_run`: the :class:`GatedRun` the release gate (``harness.release.gate``) compares
  with its baseline while the run's tests run.

Neither consumer sees the session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from harness.report.run_result import RunResult, SceneInputs, require_evaluators
from harness.vocab.factors import PARAPHRASE

if TYPE_CHECKING:
    import pandas as pd
    import pytest

    from harness.evaluators.base import EvaluatorSpec
    from harness.run.session import AuditSession


def weight_files(spec: EvaluatorSpec) -> tuple[Path, ...]:
    """Local weight files of ``spec`` where known (hashed into the manifest)."""
    ckpt = str(getattr(spec, "checkpoint", "") or "")
    return (Path(ckpt),) if ckpt and Path(ckpt).is_file() else ()


def run_result(session: AuditSession, evaluators: Sequence[str],
               claims: Mapping[str, Mapping[str, bytes]] | None = None) -> RunResult:  # fmt: skip
    """What the run produced for the report of ``evaluators``: records measured (once, cached),
    cards built, thumbnails encoded, searches run, in that order; the panel statistics are left
    to :attr:`RunResult.panel_result` (the writer may reuse its derived files instead).
    ``claims``: :attr:`RunResult.claims` (the tests' claims' files, made by the caller).
    Raises ``AuditError`` for an empty ``evaluators`` and whatever the parts raise."""
    from harness.measure.thumbs import needs_renders, thumb_images
    from harness.report.pieces import thumb_entries

    chosen = tuple(sorted(evaluators))
    require_evaluators(chosen)
    inputs, options = session.inputs, session.options
    run_id = session.run_id(chosen)
    records_files = {ev: session.record_cache.file(ev) for ev in chosen}
    cards = {ev: session.cards.card(ev) for ev in chosen}
    thumbnails = None
    if needs_renders([inputs.specs[ev] for ev in chosen]):
        thumbnails = thumb_images(inputs.plan, inputs.renderer, cache=thumb_entries(options.cache_dir))
    searches = None
    if session.searches.declared:
        found = {ev: session.searches.result(ev) for ev in chosen}
        searches = {ev: doc for ev, doc in found.items() if doc is not None}
    figures = {ev: session.searches.figure_inputs(ev) for ev in (searches or {})}
    run_options = session.cards.run_options(chosen)
    scenes = inputs.scene_set
    scene_inputs = SceneInputs(Path(scenes.root), tuple(scenes.input_files()), PARAPHRASE in inputs.profile.levels)
    return RunResult(
        run_id=run_id,
        evaluators=chosen,
        report_dir=Path(options.report_dir),
        cache_dir=Path(options.cache_dir),
        records_files=records_files,
        bootstrap=inputs.bootstrap,
        seed=inputs.seed,
        cards=cards,
        run_options=run_options,
        scene_inputs=scene_inputs,
        weight_files={ev: weight_files(inputs.specs[ev]) for ev in chosen},
        render_host=inputs.render_host(),
        searches=searches,
        search_figures=figures,
        thumbnails=thumbnails,
        panel_result=lambda: session.summary_cache.panel_result(list(chosen)),
        claims=dict(claims or {}),
    )


@dataclass(frozen=True)
class GatedRun:
    """What the release gate (``--audit-baseline``) reads of the run it gates.

    * ``specs``: the run's evaluator specs by id (pairing with the baseline's evaluators);
    * ``bootstrap``, ``seed``: the run's resampling (draws; RNG seed);
    * ``records``: evaluator → its tidy records (measured on first ask, then cached);
    * ``human_means``: ``(generator, prompt_id) → mean rating`` of ``--audit-human``, ``None``
      without it (read when asked);
    * ``note_baseline_cards``: hands the run evaluator → baseline card id pairs to the run's
      cards, which record them; the gate calls it at configure time, before a card is built.

    Frozen all the way down: ``specs`` is a read-only view, and the one thing the gate gives
    back to the run goes through ``note_baseline_cards``, not a shared dict.
    """

    specs: Mapping[str, EvaluatorSpec]
    bootstrap: int
    seed: int
    records: Callable[[str], pd.DataFrame]
    human_means: Callable[[], dict[tuple[str, str], float] | None]
    note_baseline_cards: Callable[[Mapping[str, str]], None]


def gated_run(config: pytest.Config) -> GatedRun:
    """The :class:`GatedRun` of the run on ``config`` (its session's parts; specs, bootstrap
    and seed resolved now: ``AuditError`` when they cannot be)."""
    from harness.run.session import audit_session_of

    session = audit_session_of(config)
    inputs = session.inputs
    return GatedRun(specs=MappingProxyType(dict(inputs.specs)), bootstrap=inputs.bootstrap,
                    seed=inputs.seed, records=session.record_cache.records,
                    human_means=session.human.means,
                    note_baseline_cards=session.baseline_card_ids.update)  # fmt: skip
