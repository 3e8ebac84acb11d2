"""One claim end to end (:func:`run_claim`; ``t3d-audit claim`` and :func:`harness.api.claim`):

1. the inputs checked (:mod:`~harness.claims.inputs`): every bad input is one error, before
   any render;
2. the grid and the presets measured for the claim's generators (:mod:`~harness.claims.measuring`);
3. the evidence of each claimed pair (:mod:`~harness.claims.evidence`), one simultaneous band
   over every pair and protocol;
4. the search beyond the grid per pair (:mod:`~harness.claims.searching`);
5. the verdict per pair (:mod:`~harness.claims.verdict`), with ``--all-pairs`` the partial
   order (:mod:`~harness.claims.all_pairs`), the card (:mod:`~harness.claims.card`) and the
   paper block (:mod:`~harness.claims.paper`).

:func:`write_out` writes ``--out`` (:mod:`~harness.claims.outputs`: all files or none).
"""

from __future__ import annotations

import itertools
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from harness.claims.all_pairs import PartialOrder, partial_order
from harness.claims.evidence import (
    GeneratorScore,
    PairEvidence,
    generator_scores,
    pair_evidence,
    preset_concordance,
    weights_for,
)
from harness.claims.inputs import ClaimInputs, ClaimRequest, ProjectConfig, resolve
from harness.claims.paper import PaperBlock, paper_block
from harness.claims.searching import PairSearch, Prefetch, search_pair
from harness.claims.verdict import Verdict, decide, search_facts
from harness.core.numbers import finite_or_none

if TYPE_CHECKING:
    from harness.render.renderer import Renderer

CLAIM_VERSION = 1


@dataclass(frozen=True)
class PairOutcome:
    """One claimed pair: its evidence, its search and its verdict."""

    evidence: PairEvidence
    search: PairSearch
    verdict: Verdict

    def to_dict(self) -> dict[str, object]:
        return {"a": self.evidence.a, "b": self.evidence.b, "verdict": self.verdict.to_dict(),
                "evidence": self.evidence.to_dict(), "search": self.search.to_dict()}  # fmt: skip


@dataclass(frozen=True)
class ClaimResult:
    """Everything a claim found; :meth:`to_dict` is ``claim --json``'s object (``claim.json``)."""

    request: ClaimRequest
    inputs: ClaimInputs
    order: tuple[str, ...]
    card: dict[str, object]
    scores: tuple[GeneratorScore, ...]
    pairs: tuple[PairOutcome, ...]
    concordance: dict[str, object] | None
    partial: PartialOrder | None
    grid_protocols: int
    failed: dict[str, int]
    bootstrap: int
    seconds: float

    @property
    def card_id(self) -> str:
        return str(self.card["card_id"])

    @property
    def verdict(self) -> Verdict:
        """The verdict of the (first) claimed pair."""
        return self.pairs[0].verdict

    def configuration(self) -> str:
        """The evaluator configuration in words (the paper block's last line)."""
        presets = ", ".join(p.name for p in self.inputs.presets) or "none"
        scaled = "as published" if self.request.as_published else (
            f"scaled to at most {self.request.max_views} views at the profile's c0 resolution")
        return (f"evaluator {self.inputs.spec.id} (card {self.card_id}); profile {self.inputs.profile.name}, "
                f"{len(self.inputs.prompts)} prompts, {self.grid_protocols} grid protocols; presets {presets} "
                f"({scaled}); search beyond the grid: {self.request.search_budget} configurations, "
                f"{self.request.flip_points} flip-region points, seed {self.request.seed}; "
                f"{self.bootstrap} prompt-bootstrap draws.")  # fmt: skip

    def paper(self) -> PaperBlock:
        """The paper-ready block (deterministic bytes)."""
        if self.partial is not None:
            title = self.partial.sentence(self.inputs.spec.id)
            sentences = [p.verdict.scope for p in self.pairs]
        else:
            title = self.verdict.line
            sentences = [self.verdict.scope]
        return paper_block(title, self.scores, self.card_id, sentences, self.configuration())

    def to_dict(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "version": CLAIM_VERSION,
            "evaluator": self.inputs.spec.id,
            "profile": self.inputs.profile.name,
            "scenes": "bundled" if self.inputs.scenes is None else self.inputs.scenes.name,
            "prompts": len(self.inputs.prompts),
            "generators": list(self.order),
            "presets": [p.name for p in self.inputs.presets],
            "card_id": self.card_id,
            "bootstrap": self.bootstrap,
            "seed": self.request.seed,
            "search_budget": self.request.search_budget,
            "flip_points": self.request.flip_points,
            "scores": [{"generator": s.generator, "mean": finite_or_none(s.mean),
                        "interval": [finite_or_none(s.lo), finite_or_none(s.hi)]} for s in self.scores],
            "pairs": [p.to_dict() for p in self.pairs],
            "concordance": self.concordance,
            "failed": dict(self.failed),
            "timing": {"wall_s": round(self.seconds, 3)},
        }  # fmt: skip
        if self.partial is not None:
            doc["partial_order"] = {**self.partial.to_dict(), "sentence": self.partial.sentence(self.inputs.spec.id)}
        else:
            doc["verdict"] = self.verdict.to_dict()
        return doc

    def text(self) -> str:
        """The terminal summary: the verdict line(s), their details, the Markdown block."""
        head = (f"claim {self.inputs.spec.id} on {self.inputs.profile.name}: {', '.join(self.order)}; "
                f"{len(self.inputs.prompts)} prompts, {self.grid_protocols} grid protocols, "
                f"{len(self.inputs.presets)} presets, search {self.request.search_budget} configurations "
                f"(seed {self.request.seed}), {self.seconds:.1f} s")  # fmt: skip
        lines = [head]
        if self.partial is not None:
            lines.append(self.partial.sentence(self.inputs.spec.id))
        for p in self.pairs:
            lines.append(f"verdict: {p.verdict.line}")
            lines += [f"  {d}" for d in p.verdict.details]
        if self.concordance:
            lines.append(f"  presets: {self.concordance.get('answer', '')}")
        lines += ["", self.paper().markdown]
        return "\n".join(lines)


def _c0_order(generators: tuple[str, ...], c0: np.ndarray) -> tuple[str, ...]:
    """The generators by c0 mean, best first (ties by name)."""
    means = np.nanmean(c0, axis=1)
    return tuple(g for _, g in sorted(zip(-means, generators, strict=True)))


def run_claim(request: ClaimRequest, *, cache_dir: Path, renderer: Renderer | None = None,
              prefetch: Prefetch | None = None, config: ProjectConfig | None = None,
              offered: list[object] | None = None) -> ClaimResult:  # fmt: skip
    """The claim of ``request`` (module doc). ``renderer``: default the Blender render service
    on ``cache_dir/renders``; ``prefetch``: renders a batch's missing renders first (a
    backend's); ``config``: the project's ``[tool.t3d-audit]``; ``offered``: the project's
    ``pytest_audit_evaluators`` specs."""
    from harness.claims.card import claim_card
    from harness.claims.measuring import measure_grid, measure_presets
    from harness.render.renderer import default_renderer

    started = time.perf_counter()
    inputs = resolve(request, cache_dir=Path(cache_dir), config=config, offered=offered)
    renderer = renderer if renderer is not None else default_renderer(Path(cache_dir) / "renders")
    grid = measure_grid(inputs, renderer, prefetch)
    presets = measure_presets(inputs, renderer, prefetch)
    bootstrap = request.bootstrap or inputs.profile.bootstrap
    weights = weights_for(len(grid.prompts), bootstrap, request.seed)
    if request.all_pairs:
        order = request.generators or _c0_order(inputs.generators, grid.scores[:, :, 0])
    else:
        order = inputs.generators
    index = [inputs.generators.index(g) for g in order]
    scores = grid.scores[index]
    preset_scores = None if presets is None else presets.scores[:, index, :]
    pairs = list(itertools.combinations(range(len(order)), 2))
    evidence = pair_evidence(order, pairs, grid.protocols, scores, presets.names if presets else (),
                             preset_scores, weights=weights)  # fmt: skip
    outcomes = []
    for ev in evidence:
        found = search_pair(inputs, request, ev.a, ev.b, renderer, prefetch)
        outcomes.append(PairOutcome(ev, found, decide(ev, search_facts(found.to_dict()), inputs.spec.id)))
    partial = None
    if request.all_pairs:
        partial = partial_order(order, [(o.evidence.a, o.evidence.b, o.verdict) for o in outcomes])
    concordance = None
    if presets is not None:
        concordance = preset_concordance(preset_scores, presets.names, order, bootstrap=bootstrap, seed=request.seed)
    failed = {"grid": grid.failed, "presets": presets.failed if presets is not None else 0}
    return ClaimResult(request, inputs, tuple(order), claim_card(inputs, renderer, bootstrap, request.seed),
                       generator_scores(scores[:, :, 0], order, weights), tuple(outcomes), concordance, partial,
                       len(grid.protocols), failed, bootstrap, time.perf_counter() - started)  # fmt: skip


def output_files(result: ClaimResult, renderer: Renderer | None = None) -> dict[str, bytes]:
    """Every file of ``--out`` as bytes (:data:`harness.claims.outputs.OUT_NAMES`); the figures
    are drawn in a scratch folder. The worst configuration's render beside c0's only for an
    evaluator that reads renders (a scene evaluator's scores never saw one)."""
    from harness.claims import figures
    from harness.claims.page import build_page
    from harness.core.fileio import json_text
    from harness.core.jsonout import strict

    doc = result.to_dict()
    block = result.paper()
    files: dict[str, bytes] = {
        "claim.json": json_text(strict(doc), indent=1).encode("utf-8"),
        "claim.md": block.markdown.encode("utf-8"),
        "claim.tex": block.latex.encode("utf-8"),
        "card.json": json_text(result.card).encode("utf-8"),
    }
    with tempfile.TemporaryDirectory(prefix="t3d-claim-figures-") as scratch:
        folder = Path(scratch)
        drawn: list[Path | None] = []
        if result.partial is not None:
            drawn.append(figures.matrix_figure(result.partial, folder / "claim_matrix.png"))
        else:
            ev = result.pairs[0].evidence
            drawn.append(figures.envelope_figure(ev, folder / "claim_envelope.png"))
            drawn.append(figures.presets_figure(ev, folder / "claim_presets.png"))
            drawn.append(_worst_figure(result, renderer, folder / "claim_worst_vs_c0.png"))
        images = {p.name: p.read_bytes() for p in drawn if p is not None}
    files.update(images)
    files["claim.html"] = build_page(doc, block.markdown, block.latex, images).encode("utf-8")
    return files


def _worst_figure(result: ClaimResult, renderer: Renderer | None, path: Path) -> Path | None:
    from harness.measure.images import measurement_kind

    search = result.pairs[0].search.result
    if search is None or search.worst is None or renderer is None or measurement_kind(result.inputs.spec) != "image":
        return None
    from harness.report.search_figures import worst_vs_c0_figure
    from harness.search.figure_inputs import worst_images

    images = worst_images(search, renderer, result.inputs.full)
    if images is None:
        return None
    return worst_vs_c0_figure(images.c0, images.worst, images.scene, images.text, path)


def write_out(result: ClaimResult, out: Path, renderer: Renderer | None = None) -> list[Path]:
    """Write ``--out`` (all files or none; :mod:`harness.claims.outputs`)."""
    from harness.claims.outputs import write_all

    return write_all(Path(out), output_files(result, renderer))
