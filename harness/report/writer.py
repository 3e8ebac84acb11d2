"""Write ``reports/<run-id>/`` for a finished audit run (the controller does this, once),
from its typed :class:`~harness.report.run_result.RunResult` (never the session).

Layout::

    scores/<evaluator>.csv     raw score records, one file per evaluator (records format)
    summary.json               statistics of all evaluators together (docs/formats.md)
    tables/                    every statistics table, Markdown + CSV (harness.report.tables)
    figures/*.png              dispersion heatmap, discrimination bars, peak rho intervals,
                               generator-pair envelopes
    thumbs/                    thumbnails of one or two prompts' renders (harness.report.thumbs)
    report.html                the self-contained page over all of the above (harness.report.html.page)
    cards/<evaluator>.json     Evaluator Configuration Card v1.0 per evaluator
    results.json               every audit test's outcome, estimate, interval, threshold, card;
                               ``complete`` and ``missing`` say whether every collected audit
                               test of the report's evaluators has a result
    manifest.json              source revision, packages, run options, inputs and outputs by
                               sha256, and the render host

The directory is assembled under a temporary name of its writer's own and renamed into place
(the older report renamed aside first, then deleted), under the lock ``.<run-id>.lock``: two
runs of one run id writing to one report directory take turns, the later one merging the
earlier one's results. A writer that fails (a full disk, say) deletes its temporary directory
and publishes nothing. Its content depends
only on the inputs (no timestamps, no environment values), so equal inputs give equal bytes
whatever the number of xdist workers, with one exception: ``manifest.json#/render_host`` names
the machine (CPU model, Blender build, Cycles device and kernel), because Cycles output differs
slightly across CPUs. The contract (docs/report-format.md): with one shared render and score
cache, equal inputs give a byte-identical report apart from ``render_host``; from empty caches
the model scores may differ in their last float32 bits, and across machines with their own
renders the numbers can move. Every file but ``manifest.json``
is derived from ``scores/`` and ``manifest.json#/options`` (``t3d-audit validate --deep``
recomputes them).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock

from harness.captions import paraphrase
from harness.cards.card_format import write_card
from harness.cards.provenance import build_manifest, file_entry, portable_label, write_manifest
from harness.core.bounded_input import read_report_json as read_json
from harness.core.errors import AuditError
from harness.core.fileio import write_json_atomic
from harness.core.paths import FIXTURES, PACKAGE_DIR, PROFILES_FILE, REPO_ROOT

if TYPE_CHECKING:
    from harness.report.run_result import RunResult
    from harness.stats.audit_stats import AuditResult


@dataclass
class WrittenReport:
    """Where the report went and what the terminal table shows.

    ``missing``: collected audit tests of the report's evaluators without a result (empty when
    the report is complete); ``kept``: results kept from the previous report of the same run
    id because this run did not re-run those tests (``-k``, ``--lf``, ``-x``).
    """

    directory: Path
    run_id: str
    terminal_rows: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    kept: int = 0
    complete: bool = True


def previous_results(directory: Path) -> tuple[list[dict[str, object]], bool]:
    """The results of an earlier report in ``directory`` and whether it was complete
    (``([], False)`` when absent or unreadable)."""
    path = directory / "results.json"
    try:
        data = read_json(path)
        results = data["results"]
    except (OSError, ValueError, KeyError, TypeError):
        return [], False
    if not isinstance(results, list):
        return [], False
    kept = [r for r in results if isinstance(r, dict) and isinstance(r.get("test"), str)]
    return kept, data.get("complete") is True


def merge_results(
    new: Sequence[dict[str, object]], previous: Sequence[dict[str, object]], expected: set[str]
) -> tuple[list[dict[str, object]], int]:
    """This run's results plus the previous report's results of expected tests it did not run.

    A report's id is derived from every input of the run, so an earlier report with the same
    id measured the same thing: a partial rerun (``-k``, ``--lf``) completes it instead of
    replacing it. Returns ``(results sorted by test, number kept from previous)``.
    """
    merged = {r["test"]: r for r in previous if r["test"] in expected}
    kept = len(merged.keys() - {r["test"] for r in new})
    merged.update({r["test"]: r for r in new})
    return [merged[k] for k in sorted(merged)], kept


def _inputs(result: RunResult) -> list[dict[str, str]]:
    """``manifest.json#/inputs``: every input file of the run, hashed, with its role."""
    scenes = result.scene_inputs
    bases = {"scenes": scenes.root, "fixtures": FIXTURES, "repo": REPO_ROOT}
    entries = []
    for path in scenes.files:
        role = "asset" if path.suffix.lower() not in (".json",) else "scene"
        entries.append(file_entry(path, label=portable_label(path, bases), role=role))
    manifest = scenes.root / "manifest.json"
    if manifest.is_file():
        entries.append(file_entry(manifest, label=portable_label(manifest, bases), role="scene-manifest"))
    para = paraphrase.bundled_file()
    if para is not None and scenes.paraphrases:
        entries.append(file_entry(para, label=portable_label(para, bases), role="paraphrases"))
    lighting = FIXTURES / "lighting_scalars.json"
    if lighting.is_file():
        entries.append(file_entry(lighting, label=portable_label(lighting, bases), role="lighting-scalars"))
    profiles = PROFILES_FILE
    if profiles.is_file():
        entries.append(file_entry(profiles, label=portable_label(profiles, bases), role="profiles"))
    for ev in result.evaluators:
        for weights in result.weight_files.get(ev, ()):
            entries.append(file_entry(weights, label=portable_label(weights, bases), role=f"weights:{ev}"))
    return entries


def write_derived(result: AuditResult, directory: Path, *, figures: bool = True) -> tuple[dict[str, object], list[str]]:
    """``summary.json``, ``tables/`` and (with ``figures``) ``figures/`` of an ``AuditResult``
    under ``directory``; returns the summary and notes. The one writer of these files, used by
    :func:`write_report` and by ``t3d-audit validate --deep`` to recompute them."""
    from harness.report.figures import write_figures

    notes: list[str] = []
    summary = json.loads(json.dumps(result.to_summary(), allow_nan=False))
    write_json_atomic(directory / "summary.json", summary)
    try:
        from harness.report.tables import write_tables  # needs the optional table extras

        write_tables(result, directory / "tables")
    except ImportError as exc:
        notes.append(f"tables not written: {exc}")
    if figures:
        write_figures(summary, directory / "figures")
    return summary, notes


def add_repeatability(summary: dict[str, object], card_facts: Mapping[str, object] | None, directory: Path) -> dict[str, object]:
    """``summary`` with each evaluator's repeatability check (its card fact, ``manifest.json#/
    options/card_facts/evaluators/<id>/repeatability``) under ``evaluators.<id>.repeatability``,
    rewritten to ``directory/summary.json``; the summary as it was when no card fact has one.
    The report writer and ``validate --deep`` both add it this way, from the same facts."""
    facts = (card_facts or {}).get("evaluators") or {}
    found = {ev: f["repeatability"] for ev, f in facts.items() if isinstance(f, Mapping) and "repeatability" in f}
    if not found:
        return summary
    entries = summary.get("evaluators") or {}
    summary = {**summary, "evaluators": {ev: ({**entry, "repeatability": found[ev]} if ev in found else entry)
                                         for ev, entry in entries.items()}}  # fmt: skip
    write_json_atomic(directory / "summary.json", summary)
    return summary


#: What :func:`write_derived` writes (report-relative): the ``derived`` report piece.
DERIVED_FILES = ("summary.json", "tables", "figures")
#: Libraries whose versions can change the derived files' bytes (numbers, CSV/Markdown, PNG).
DERIVED_PACKAGES = ("matplotlib", "numpy", "pandas", "pillow")


def derived_key(result: RunResult) -> str:
    """The ``derived`` piece's cache key: everything ``summary.json``, ``tables/`` and
    ``figures/`` of the result's evaluators are computed from. The records files' sha256 (the panel
    result's data), bootstrap and seed, the lighting scalars file (Table 8), the sources of the
    statistics, the caption grammar (template slots), the lighting-scalars reader, the records
    reader and every report module (tables, figures, this writer), and the versions of
    :data:`DERIVED_PACKAGES`."""
    import harness.captions as captions
    import harness.stats as stats
    from harness.core.code_identity import package_versions, source_hash
    from harness.core.hashing import sha256_file
    from harness.measure import audit_inputs
    from harness.report.pieces import piece_key, report_sources

    lighting = audit_inputs.DEFAULT_LIGHTING_SCALARS
    stats_dir, captions_dir = Path(stats.__file__).parent, Path(captions.__file__).parent
    code = [*sorted(stats_dir.glob("*.py")), *sorted(captions_dir.glob("*.py")),
            *sorted(captions_dir.glob("*.json")), *report_sources(),
            PACKAGE_DIR / "measure" / "audit_inputs.py",  # template slots, default template, lighting scalars
            PACKAGE_DIR / "render" / "light_maps.py"]  # reads the lighting scalars
    return piece_key("derived", {
        "records": {ev: sha256_file(result.records_files[ev]) for ev in sorted(result.evaluators)},
        "bootstrap": result.bootstrap,
        "seed": result.seed,
        "lighting": sha256_file(lighting) if lighting.is_file() else None,
        "code": source_hash(code),
        "packages": package_versions(DERIVED_PACKAGES),
    })


def write_derived_cached(result: RunResult, directory: Path) -> tuple[dict[str, object], list[str]]:
    """:func:`write_derived` of the run's panel result, reused from the
    ``derived`` report piece (:mod:`harness.report.pieces`) when :func:`derived_key` finds one:
    then the panel result is not computed and no table or figure is drawn. A write that left a
    note (a missing optional extra) is not stored."""
    from harness.report.pieces import (
        pack_files,
        piece_entries,
        read_files,
        unpack_files,
        write_files,
    )

    key = derived_key(result)
    entries = piece_entries(result.cache_dir, "derived")
    payload = entries.get(key)
    if payload is not None:
        try:
            files = unpack_files(payload)
        except ValueError:
            files = None
        if files is not None and "summary.json" in files:
            write_files(directory, files)
            return json.loads(files["summary.json"]), []
    summary, notes = write_derived(result.panel_result(), directory)
    if not notes:
        names: list[str] = []
        for name in DERIVED_FILES:
            path = directory / name
            found = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
            names += [p.relative_to(directory).as_posix() for p in found]
        entries.put(key, pack_files(read_files(directory, names)))
    return summary, notes


def write_report(
    run: RunResult,
    results: Sequence[dict[str, object]],
    expected: set[str] | None = None,
    selection: str | None = None,
) -> WrittenReport:
    """Write the report of the run's evaluators with the audit ``results``; returns where it went.

    ``expected``: the test keys the report should cover (every collected audit test of these
    evaluators, before ``-k``/``--lf`` deselection); default: the tests in ``results``.
    ``selection``: how the run chose a subset of the suite (``-k pitch``, ``--lf``), if it did.
    Such a run completes an earlier complete report of the same run id; on its own (pytest
    may not even collect the files it skips) it is marked partial.
    """
    run_id = run.run_id
    if "/" in run_id or run_id in ("", ".", ".."):
        raise AuditError(f"run id {run_id!r} is not a plain directory name", where="--audit-run-id")
    base = run.report_dir
    base.mkdir(parents=True, exist_ok=True)
    # Runs of one run id (two pytest sessions on one --audit-report-dir) take turns: each reads
    # the results the previous one published, merges, and publishes; a writer's temp directory
    # is its own, so none deletes another's half-written files.
    with FileLock(str(base / f".{run_id}.lock")):
        return _write_locked(run, results, expected, selection, base, run_id)


def _write_locked(
    run: RunResult,
    results: Sequence[dict[str, object]],
    expected: set[str] | None,
    selection: str | None,
    base: Path,
    run_id: str,
) -> WrittenReport:
    """:func:`write_report` for a caller holding the run id's lock."""
    from harness.report.terminal import rows_from

    final = base / run_id
    for stale in [*base.glob(f".tmp-{run_id}-*"), *base.glob(f".old-{run_id}-*"), base / f".tmp-{run_id}"]:
        shutil.rmtree(stale, ignore_errors=True)  # left by a killed writer (we hold the lock)
    earlier, earlier_complete = previous_results(final)
    expected = set(expected or ()) | {r["test"] for r in results}
    if earlier_complete:
        expected |= {r["test"] for r in earlier}
    merged, kept = merge_results(results, earlier, expected)
    missing = sorted(expected - {r["test"] for r in merged})
    complete = not missing and (earlier_complete or not selection)
    tmp = base / f".tmp-{run_id}-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    try:
        summary, notes = _fill(run, merged, complete, missing, selection, tmp)
        _publish(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # nothing partial is left, let alone served
        raise
    return WrittenReport(final, run_id, rows_from(summary, merged, dict(run.cards)), notes, missing, kept, complete)


def _publish(tmp: Path, final: Path) -> None:
    """Replace ``final`` by the finished ``tmp`` (renames only: never a half-deleted report)."""
    old = final.with_name(f".old-{final.name}-{uuid.uuid4().hex[:12]}")
    if final.exists():
        os.rename(final, old)
    try:
        os.rename(tmp, final)
    except OSError:
        if old.exists() and not final.exists():
            os.rename(old, final)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _write_searches(run: RunResult, tmp: Path) -> None:
    """Under a profile's search block: ``search/<evaluator>.json`` (the search's ``--json``
    document), ``search/<evaluator>_trace.png`` (:func:`search_figures.trace_figure`), and,
    from what the run result hands in, ``_worst_vs_c0.png`` (a discovery scene at c0 beside the
    confirmed worst configuration) and ``_flip_region.png`` (the flip region's sample) for the
    report's search section; nothing otherwise (such reports keep their files)."""
    if run.searches is None:
        return
    from harness.report import search_figures

    folder = tmp / "search"
    folder.mkdir(parents=True, exist_ok=True)
    for ev in run.evaluators:
        doc = run.searches.get(ev)
        if doc is None:
            continue
        write_json_atomic(folder / f"{ev}.json", doc)
        search_figures.trace_figure(doc, folder / f"{ev}_trace.png")
        images, sample = run.search_figures.get(ev, (None, None))
        if images is not None:
            search_figures.worst_vs_c0_figure(images.c0, images.worst, images.scene, images.text,
                                              folder / f"{ev}_worst_vs_c0.png")  # fmt: skip
        if sample is not None:
            search_figures.flip_region_figure(sample.points, sample.x, sample.y, sample.title,
                                              folder / f"{ev}_flip_region.png")  # fmt: skip


def _write_claims(run: RunResult, tmp: Path, earlier: Path | None) -> None:
    """The claims the run's tests made (``audit_claim``): ``claims/<name>/`` holds each one's
    ``t3d-audit claim --out`` files (``claim.json``, ``claim.md``, ``claim.tex``,
    ``claim.html``, ``card.json`` and the figures) for the report's claims section; nothing
    without claims. ``earlier``: the report a selecting run (``-k``, ``--lf``) completes; its
    claims this run did not make again are kept, as its results are."""
    if earlier is not None and (earlier / "claims").is_dir():
        for folder in sorted(p for p in (earlier / "claims").iterdir() if p.is_dir() and not p.is_symlink()):
            if folder.name not in run.claims:  # a claim's folder is flat: its plain files only
                (tmp / "claims" / folder.name).mkdir(parents=True)
                for file in sorted(f for f in folder.iterdir() if f.is_file() and not f.is_symlink()):
                    shutil.copyfile(file, tmp / "claims" / folder.name / file.name)
    for name, files in sorted(run.claims.items()):
        folder = tmp / "claims" / name
        folder.mkdir(parents=True, exist_ok=True)
        for file_name, data in sorted(files.items()):
            (folder / file_name).write_bytes(data)


def _fill(
    run: RunResult,
    merged: list[dict[str, object]],
    complete: bool,
    missing: list[str],
    selection: str | None,
    tmp: Path,
) -> tuple[dict[str, object], list[str]]:
    """Write every file of the report into ``tmp``; returns the summary and its notes."""
    from harness.report.html.page import write_html
    from harness.report.thumbs import write_thumbs

    evaluators = list(run.evaluators)
    for ev in evaluators:
        target = tmp / "scores" / f"{ev}.csv"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run.records_files[ev], target)

    summary, notes = write_derived_cached(run, tmp)
    summary = add_repeatability(summary, run.run_options.get("card_facts"), tmp)
    for ev in evaluators:
        card_path = tmp / "cards" / f"{ev}.json"
        card_path.parent.mkdir(parents=True, exist_ok=True)
        write_card(run.cards[ev], card_path)
    write_json_atomic(
        tmp / "results.json",
        {
            "run_id": run.run_id,
            "evaluators": evaluators,
            "complete": complete,
            "missing": missing,
            "selection": None if complete else selection,
            "results": merged,
        },
    )
    if run.thumbnails is not None:  # some evaluator scored renders
        write_thumbs(run.thumbnails, tmp)
    _write_searches(run, tmp)
    _write_claims(run, tmp, run.report_dir / run.run_id if selection else None)
    manifest = build_manifest(
        run_id=run.run_id,
        options=run.run_options,
        inputs=_inputs(run),
        report_dir=tmp,
        render_host=run.render_host,
    )
    write_manifest(manifest, tmp)
    # reads the finished directory; adds report.html to the manifest's outputs
    write_html(tmp, run.cache_dir)
    return summary, notes
