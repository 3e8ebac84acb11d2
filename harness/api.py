"""Python API for notebooks and scripts: score, audit, compare, agreement — no pytest needed
to call them (``audit`` runs the audit suite with pytest in this process).

    from harness.api import score, audit, compare, agreement

    results = score("clip-vit-b32", ["a.png", "b.png"], ["a red chair", "a blue sofa"])
    run = audit(evaluators=["redness"], profile="smoke")
    run.panel.evaluators["redness"].peak_rho
    found = claim("ref-vit-clip", "faithful", "gridded")   # does A beat B, and where?

Every function raises a typed :class:`~harness.core.errors.AuditError` on bad input. Heavy
libraries (torch, bpy) load only when an evaluator or a render needs them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.bounded_input import read_json
from harness.core.errors import AuditError, EvaluatorError
from harness.evaluators.image_input import as_rgb

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec, ScoreResult
    from harness.evaluators.scorer import Scorer
    from harness.stats.summary import EvaluatorSummary, PanelSummary

__all__ = ["AuditRun", "Comparison", "agreement", "audit", "claim", "compare", "score", "search"]


# ----------------------------------------------------------------------------- score


def _spec_and_loader(evaluator: object) -> tuple[EvaluatorSpec, object]:
    """``(spec, build(device, batch_size))`` for an id, a spec, a Scorer class or instance."""
    from harness.evaluators import registry
    from harness.evaluators.base import EvaluatorSpec
    from harness.evaluators.scorer import Scorer, ScorerEvaluator, scorer_spec

    if isinstance(evaluator, str):
        spec = registry.get(evaluator)
        return spec, lambda device, batch_size: spec.build(device=device, batch_size=batch_size)
    if isinstance(evaluator, EvaluatorSpec):
        return evaluator, lambda device, batch_size: evaluator.build(device=device, batch_size=batch_size)
    if isinstance(evaluator, Scorer):
        spec = scorer_spec(type(evaluator))
        return spec, lambda device, batch_size: ScorerEvaluator(spec, evaluator, batch_size)
    if isinstance(evaluator, type) and issubclass(evaluator, Scorer):
        cls: type[Scorer] = evaluator
        spec = scorer_spec(cls)
        return spec, lambda device, batch_size: ScorerEvaluator(
            spec, cls(device), batch_size
        )
    raise EvaluatorError(
        f"score() needs an evaluator id, an EvaluatorSpec or a Scorer, got {type(evaluator).__name__}",
        hint="run 't3d-audit evaluators' for the ids",
    )


def score(
    evaluator: str | EvaluatorSpec | Scorer | type[Scorer],
    images: Sequence[object],
    texts: Sequence[str] | str | None = None,
    *,
    device: str = "auto",
    batch_size: int = 32,
    cache: bool | str | Path = True,
) -> list[ScoreResult]:
    """Score ``images[i]`` against ``texts[i]`` with one evaluator.

    ``evaluator``: a registered id, an :class:`~harness.evaluators.base.EvaluatorSpec`, or a
    :class:`~harness.evaluators.scorer.Scorer` class or instance (need not be registered).
    ``images``: PIL images, ``(H, W, 3)`` uint8 arrays or image file paths. ``texts``: one
    caption per image, one caption for all, or ``None`` for a prompt-free evaluator.
    ``cache``: ``True`` (the score cache at ``$T3D_AUDIT_CACHE_DIR`` or the per-user cache), a
    cache directory, or ``False``. Returns one
    :class:`~harness.evaluators.base.ScoreResult` per image: ``score`` on the evaluator's
    scale, or NaN with ``status == "failed"`` and the reason in ``error``.
    """
    from harness.core.paths import default_cache_dir
    from harness.evaluators.cache import CachedEvaluator, ScoreCache

    if batch_size < 1:
        raise EvaluatorError(f"batch_size must be >= 1, got {batch_size}")
    spec, load = _spec_and_loader(evaluator)
    arrays = [as_rgb(im, i) for i, im in enumerate(images)]
    if texts is None:
        if spec.needs_text:
            raise EvaluatorError(f"evaluator {spec.id!r} needs texts", hint="pass one caption per image")
        captions = [""] * len(arrays)
    elif isinstance(texts, str):
        captions = [texts] * len(arrays)
    else:
        captions = [str(t) for t in texts]
    if not spec.needs_text:
        captions = [""] * len(captions)
    if len(captions) != len(arrays):
        raise EvaluatorError(f"{len(arrays)} images but {len(captions)} texts",
                             hint="give one text per image, or one text for all")  # fmt: skip
    if not arrays:
        return []
    loaded = load(device, batch_size)
    if cache is not False:
        root = default_cache_dir() if cache is True else Path(cache)
        loaded = CachedEvaluator(loaded, ScoreCache(root))
    try:
        return list(loaded.score(arrays, captions))
    finally:
        loaded.close()


# ----------------------------------------------------------------------------- audit


@dataclass(frozen=True)
class AuditRun:
    """One audit run: pytest's ``exit_code`` (0 every assertion held, 1 some failed), the
    ``report`` directory, its ``run_id``, the typed ``panel``
    (:class:`~harness.stats.summary.PanelSummary`, what the ``audit_panel_summary`` fixture
    gives) and ``results`` (``results.json``: every check with estimate and threshold)."""

    exit_code: int
    report: Path
    run_id: str
    panel: PanelSummary
    results: Mapping[str, object] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def summary(self, evaluator: str) -> EvaluatorSummary:
        """The :class:`~harness.stats.summary.EvaluatorSummary` of ``evaluator`` (the
        ``audit_summary`` fixture's value)."""
        try:
            return self.panel.evaluators[evaluator]
        except KeyError:
            raise AuditError(f"evaluator {evaluator!r} is not in this run",
                             where=str(self.report)) from None  # fmt: skip


def read_report(report: str | Path, exit_code: int = 0) -> AuditRun:
    """An :class:`AuditRun` read back from a report directory (``summary.json``,
    ``results.json``)."""

    from harness.stats.summary import PanelSummary

    report = Path(report)
    path = report / "summary.json"
    if not path.is_file():
        raise AuditError("no summary.json", where=str(report), hint="is this a report directory?")
    summary = read_json(path)
    results_path = report / "results.json"
    results = read_json(results_path) if results_path.is_file() else {}
    return AuditRun(exit_code, report, str(results.get("run_id") or report.name),
                    PanelSummary.from_summary(summary), results)  # fmt: skip


def audit(
    evaluators: Iterable[str] | str | None = None,
    *,
    scenes: str | Path | None = None,
    profile: str = "default",
    profile_file: str | Path | None = None,
    workers: int | str = 0,
    report_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    paths: Iterable[str | Path] = (),
    pytest_args: Sequence[str] = (),
) -> AuditRun:
    """Run the audit suite (``audit_tests/``) with pytest in this process and read the typed
    results back.

    ``evaluators``: ids or globs (default: the suite's default panel). ``scenes``: a scene set
    directory (default: the bundled scenes). ``profile``: ``smoke``, ``default``, ...
    ``profile_file``: a profile file of your own (``t3d-audit search --save-level NAME --into
    FILE`` writes one): its saved levels become ``test_saved_level`` checks, a regression check
    for the next release.
    ``workers``: pytest-xdist workers (``0``: this process; scoring code registered only in
    this process, e.g. in a notebook, is seen only with ``0`` — with workers, register it in a
    ``conftest.py`` or an entry point). ``paths``: your own audit files or folders, run beside
    the study's suite (relative to the working folder, as ``t3d-audit audit -- audits``).
    ``pytest_args``: any further pytest arguments (``-p my_plugin``, ``--audit-bootstrap=200``).
    Raises :class:`AuditError` when the audit did not complete (a usage error, a crash,
    nothing collected) or a path does not exist.
    """
    import os

    import pytest

    from harness.run.suite_argv import SuiteRun, latest_report, pytest_argv, reports_dir

    if isinstance(evaluators, str):
        evaluators = [evaluators]
    if isinstance(paths, str | Path):
        paths = [paths]
    own = [str(p) for p in paths]
    for path in own:
        if not Path(path).exists():
            raise AuditError("audit path not found", where=path,
                             hint="give audit files or folders relative to the working folder")  # fmt: skip
    run = SuiteRun(profile=profile, workers=str(workers), evaluators=",".join(evaluators or ()) or None,
                   report_dir=report_dir, cache_dir=cache_dir, profile_file=profile_file,
                   pytest_args=(*own, *pytest_args))  # fmt: skip
    argv = pytest_argv(run)
    if scenes is not None:
        argv.append(f"--audit-scenes={scenes}")
    argv.append("-q")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.time()
    code = int(pytest.main(argv))
    if code not in (0, 1):
        raise AuditError(f"the audit did not complete (pytest exit code {code})",
                         hint="pytest " + " ".join(argv))  # fmt: skip
    # pytest's rootdir for this folder: the report is under the invoking project, as with pytest
    report = latest_report(reports_dir(report_dir), started)
    return read_report(report, code)


# ----------------------------------------------------------------------------- compare


@dataclass(frozen=True)
class Comparison:
    """A release comparison: ``document`` (what ``compare --json`` prints; see
    docs/release-gate.md), ``markdown``, and the gate's ``exit_code`` (0 pass, 1 regression)."""

    document: Mapping[str, object]
    markdown: str
    exit_code: int

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


def compare(
    baseline: str | Path,
    candidate: str | Path,
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    margins: Mapping[str, float] | None = None,
    config: str | Path | None = None,
    bootstrap: int = 2000,
    seed: int = 42,
    fail_on_inconclusive: bool = False,
    allow_unpaired: bool = False,
    evidence: str = "confirmed",
) -> Comparison:
    """Compare a candidate release with its baseline (``t3d-audit compare``'s logic).

    ``baseline``/``candidate``: report directories or score files. ``pairs``:
    ``(baseline id, candidate id)`` (default: the single alignment evaluator of each side, else
    equal ids). ``margins``: ``{"rho": 0.1, "rho.pitch": 0.2}`` over ``config``'s
    ``[tool.t3d-audit.compare]`` (default ``./pyproject.toml`` when present). ``evidence``:
    ``confirmed`` (verdicts from the simultaneous intervals) or ``descriptive`` (from the point
    differences).
    """
    from harness.release.baselines import (
        comparison_document,
        exit_code,
        load_margins,
        load_release,
        render_markdown,
        unpaired,
    )
    from harness.release.comparison import auto_pairs, compare_records
    from harness.release.margins import parse_margin_args
    from harness.stats.bootstrap import MAX_BOOTSTRAP

    if not 2 <= bootstrap <= MAX_BOOTSTRAP:
        raise AuditError(f"bootstrap must be in [2, {MAX_BOOTSTRAP}], got {bootstrap}")
    cli_margins = parse_margin_args([f"{k}={v}" for k, v in (margins or {}).items()])
    loaded_margins = load_margins(config or Path("pyproject.toml"), required=config is not None)
    base = load_release(baseline, role="baseline")
    cand = load_release(candidate, role="candidate")
    chosen = list(pairs or auto_pairs(base.records, cand.records))
    comparisons = [
        compare_records(base.records, cand.records, baseline_evaluator=b, candidate_evaluator=c,
                        margins=loaded_margins.for_evaluator(c, cli_margins),
                        bootstrap=bootstrap, seed=seed, evidence=evidence)
        for b, c in chosen
    ]
    left_out = unpaired(sorted(set(base.records["evaluator"])),
                        sorted(set(cand.records["evaluator"])), chosen)  # fmt: skip
    document = comparison_document(
        comparisons, base, cand, fail_on_inconclusive=fail_on_inconclusive,
        unpaired_evaluators=left_out, allow_unpaired=allow_unpaired,
    )  # fmt: skip
    code = exit_code(comparisons, fail_on_inconclusive=fail_on_inconclusive,
                     unpaired_evaluators=None if allow_unpaired else left_out)  # fmt: skip
    return Comparison(document, render_markdown(document), code)


# ----------------------------------------------------------------------------- agreement


def agreement(
    human: str | Path,
    scores: Sequence[str | Path] = (),
    *,
    scale: str | None = None,
    human_format: str = "auto",
    dimension: str | None = None,
    votes: str | Path | None = None,
    group_by: str | None = None,
    bootstrap: int = 2000,
    seed: int = 42,
    allow_unjoined: bool = False,
) -> dict[str, object]:
    """Agreement of evaluator scores with human ratings (``t3d-audit agreement``'s document).

    ``human``: a ratings table (needs ``scale`` such as ``"1-5"``) or a public format file.
    ``scores``: records files or tables with ``item_id, evaluator, score``, or the scores a
    public format publishes (a TIFA JSON, DSG VQA answers). ``votes``: a votes table or a
    GPTEval3D ``comparisons.json`` with one criterion. Returns the
    agreement document (docs/human-agreement.md): ``human`` (panel reliability, noise ceiling),
    ``evaluators`` (Pearson, Spearman, Kendall τ, pairwise accuracy with 95 % prompt-block
    intervals), ``join``, ``bradley_terry`` with ``votes``.
    """
    from harness.core.errors import HumanDataError
    from harness.human.data import file_sha256, parse_scale, validate_ratings
    from harness.human.document import agreement_document
    from harness.human.importers import SCALES, detect_format, import_human, read_votes_file
    from harness.stats.bootstrap import MAX_BOOTSTRAP

    if not 2 <= bootstrap <= MAX_BOOTSTRAP:
        raise HumanDataError(f"bootstrap must be in [2, {MAX_BOOTSTRAP}]", where="bootstrap")
    path = Path(human)
    fmt = human_format
    if fmt == "auto":
        fmt = detect_format(path) if path.is_file() else "table"
    if scale:
        parsed = parse_scale(scale)
    elif fmt in SCALES:
        parsed = SCALES[fmt]
    else:
        raise HumanDataError("a ratings table needs its scale", where="scale", hint="e.g. scale='1-5'")
    if not path.is_file():
        raise HumanDataError("file not found", where=path)
    ratings = validate_ratings(import_human(path, fmt), parsed, str(path), file_sha256(path))
    return agreement_document(ratings, scores=[Path(s) for s in scores], dimension=dimension,
                              group_by=group_by, allow_unjoined=allow_unjoined, bootstrap=bootstrap,
                              seed=seed, votes=read_votes_file(Path(votes)) if votes else None)  # fmt: skip


# ----------------------------------------------------------------------------- search


def search(
    evaluator: str,
    *,
    profile: str = "smoke",
    objective: str | None = None,
    budget: int | None = None,
    seed: int | None = None,
    batch: int = 8,
    wall_time: float | None = None,
    split: tuple[int, int] | None = None,
    axes: Sequence[str] | None = None,
    flip_points: int | None = None,
    scenes: str | Path | None = None,
    cache_dir: str | Path | None = None,
    log: str | Path | None = None,
    backend: str = "inline",
    jobs: int | None = None,
    store: str | None = None,
) -> dict[str, object]:
    """Search the protocol space beyond the grid (``t3d-audit search``'s logic and its
    ``--json`` document; docs/search.md).

    ``objective``: ``shift``, ``ranking`` or ``pair:A,B``. ``budget``: configurations;
    ``objective``, ``budget``, ``seed``, ``split`` and ``flip_points`` left ``None`` come from
    the profile's ``search`` block, else the command's defaults (shift, 40, 0, 0);
    ``wall_time``: seconds after which no new batch starts. ``split``: (discovery, held-out)
    prompt counts (default: the profile's prompts and as many again, at least 10 held-out; with
    fewer than 6 held-out prompts the result is not confirmable). The document has
    ``worst.configuration`` (``pitch`` in degrees among its fields), ``discovery``,
    ``held_out`` (estimate, interval, ``confirmable`` and ``reason``), ``optimism`` and
    ``confirmed``. ``backend``: where a batch's missing renders are made first: ``inline``
    (here, one by one), ``local`` (``jobs`` processes), ``ray`` or ``slurm`` (both need
    ``store``, a render store every node reaches; slurm reads ``[tool.t3d-audit.slurm]`` of
    ``./pyproject.toml``).
    """
    from harness.backends.prefetch import prefetch_for
    from harness.core.paths import default_cache_dir
    from harness.render.renderer import default_renderer
    from harness.run.evaluator_selection import search_evaluator
    from harness.search.pipeline import Split, run_search
    from harness.search.requests import profile_request, project_thresholds

    split, axes = _search_split_and_axes(split, axes)
    spec = search_evaluator(evaluator)
    request = profile_request(profile, spec.id, objective=objective, budget=budget, seed=seed, batch=batch,
                              wall_time=wall_time, split=Split(*split) if split else None,
                              axes=tuple(axes) if axes else None, flip_points=flip_points)  # fmt: skip
    if backend in ("ray", "slurm") and not store:
        raise AuditError(f"backend {backend!r} needs store, a render store every node reaches", where="store")
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    cache_root: Path | str = store or cache / "renders"
    result = run_search(request, scenes=Path(scenes) if scenes else None, cache_dir=cache,
                        log_path=Path(log) if log else None, spec=spec,
                        renderer=default_renderer(cache_root),
                        prefetch=prefetch_for(backend, cache_root, jobs),
                        thresholds=project_thresholds(Path("pyproject.toml")).for_evaluator(spec.id))  # fmt: skip
    return result.to_dict()


def _search_split_and_axes(split: object, axes: object) -> tuple[tuple[int, int] | None, tuple[str, ...] | None]:
    """``search``'s ``split`` as a (discovery, held-out) pair and ``axes`` as distinct non-empty
    names, or an :class:`AuditError` naming the argument (the counts' ranges are checked by
    ``Split`` itself, the axis names against the space by the search)."""
    if split is not None:
        pair = tuple(split) if isinstance(split, list | tuple) else ()
        if len(pair) != 2:
            raise AuditError(f"split must be (discovery, held_out) prompt counts, e.g. (2, 4); got {split!r:.60}",
                             where="split")  # fmt: skip
        split = pair
    if axes is not None:
        names = tuple(axes) if isinstance(axes, list | tuple) else None
        if names is None or not all(isinstance(n, str) and n.strip() for n in names):
            raise AuditError(f"axes must be a list of axis names, e.g. ['pitch']; got {axes!r:.60}", where="axes")
        twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if twice is not None:
            raise AuditError(f"axis {twice!r:.40} is named twice", where="axes")
        axes = names
    return split, axes  # type: ignore[return-value]


# ----------------------------------------------------------------------------- claim


def claim(
    evaluator: str | EvaluatorSpec | None = None,
    a: str | None = None,
    b: str | None = None,
    *,
    profile: str | None = None,
    scenes: str | Path | None = None,
    presets: str | Sequence[str] = "all",
    search_budget: int = 16,
    flip_points: int = 32,
    seed: int = 0,
    bootstrap: int | None = None,
    max_views: int = 4,
    presets_as_published: bool = False,
    all_pairs: bool = False,
    generators: Sequence[str] | None = None,
    out: str | Path | None = None,
    cache_dir: str | Path | None = None,
    backend: str = "inline",
    jobs: int | None = None,
    project: str | Path | None = None,
) -> dict[str, object]:
    """Does generator ``a`` beat ``b`` under ``evaluator``, and under which protocols
    (``t3d-audit claim``'s logic and its ``--json`` document; docs/claims.md).

    ``evaluator``: an id (the registry, the project's ``conftest.py`` scorers, the known-answer
    evaluators) or an :class:`~harness.evaluators.base.EvaluatorSpec`; ``None``: the one entry
    of ``evaluators`` in the project's ``[tool.t3d-audit]``. ``profile`` and ``scenes`` left
    ``None`` come from that table too, else ``default`` and the bundled scenes. ``presets``:
    ``"all"``, ``"none"`` or names. ``search_budget``: configurations searched beyond the grid
    (0: none); ``flip_points``: Sobol points of the flip region. ``all_pairs``: every pairwise
    claim of ``generators`` (the claimed order, best first; default c0's order). ``out``: also
    write ``claim.json``, ``claim.md``, ``claim.tex``, ``card.json``, ``claim.html`` and the
    figures there (all or none). ``project``: the folder whose ``pyproject.toml`` and
    ``conftest.py`` are read (default: the working folder). The document has ``verdict``
    (``kind``, ``line``, ``evidence``, ``scope``; with ``all_pairs`` ``partial_order``),
    ``pairs`` (each pair's evidence and search), ``scores``, ``card_id`` and ``concordance``.
    """
    from dataclasses import replace

    from harness.backends.prefetch import prefetch_for
    from harness.claims.inputs import ClaimRequest, project_config, resolve_spec
    from harness.claims.outputs import check_out
    from harness.claims.pipeline import run_claim, write_out
    from harness.core.paths import default_cache_dir
    from harness.render.renderer import default_renderer
    from harness.run.project_evaluators import project_specs

    if out is not None:
        check_out(Path(out))
    folder = Path(project) if project is not None else None
    names = presets if isinstance(presets, str) else ",".join(presets)
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    renderer = default_renderer(cache / "renders")
    spec_or_id = evaluator if evaluator is not None else ""
    request = ClaimRequest("", a, b, profile, Path(scenes) if scenes else None, names, search_budget, flip_points,
                           seed, bootstrap, max_views, as_published=presets_as_published, all_pairs=all_pairs,
                           generators=tuple(generators) if generators else None)  # fmt: skip
    config = project_config(folder)
    offered = project_specs(folder)
    if spec_or_id or not config.evaluators:  # else the project's one evaluator (resolve reads it)
        spec = resolve_spec(spec_or_id, offered)
        request = replace(request, evaluator=spec.id)
        if not isinstance(spec_or_id, str):  # a spec of the caller's: offered like a conftest's
            offered = [spec, *offered]
    result = run_claim(request, cache_dir=cache, renderer=renderer, prefetch=prefetch_for(backend, cache / "renders", jobs),
                       config=config, offered=offered)  # fmt: skip
    if out is not None:
        write_out(result, Path(out), renderer)
    return result.to_dict()
