"""The search beyond the grid for a claim: :func:`harness.search.pipeline.run_search` with the
objective ``pair:A,B`` on the claim's two generators only.

The discovery prompts are the claim's prompts (those of the grid and the presets); the worst
configuration is measured once on the next prompts of the scene set (up to 10, as many as both
generators have; with fewer than 6 the search's confirmation says "not confirmable"), and the
flip region is estimated on the claim's prompts (``flip_on="discovery"``), so its share speaks
of the same prompts as the grid. With no prompt left for a held-out split the search is not
run and the claim says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.claims.inputs import ClaimInputs, ClaimRequest

if TYPE_CHECKING:
    from harness.render.renderer import Renderer
    from harness.render.service import RenderRequest
    from harness.search.pipeline import SearchResult

Prefetch = Callable[[Sequence["RenderRequest"]], object]
MIN_HELD_OUT = 2  # the search's smallest held-out split (an interval needs two prompts)


@dataclass(frozen=True)
class PairSearch:
    """The search of one pair: its ``result`` (``None`` when not run) and, then, ``skipped``
    saying why."""

    a: str
    b: str
    result: SearchResult | None
    skipped: str = ""

    def to_dict(self) -> dict[str, object]:
        if self.result is None:
            return {"ran": False, "skipped": self.skipped}
        return {"ran": True, **self.result.to_dict()}


def search_pair(inputs: ClaimInputs, request: ClaimRequest, a: str, b: str, renderer: Renderer,
                prefetch: Prefetch | None = None) -> PairSearch:  # fmt: skip
    """The search of "``a`` beats ``b``" (module doc)."""
    from harness.search.pipeline import SearchRequest, Split, run_search

    if request.search_budget <= 0:
        return PairSearch(a, b, None, "not run: --search-budget 0")
    if inputs.held_out < MIN_HELD_OUT:
        return PairSearch(a, b, None, f"not run: the scene set has {inputs.held_out} prompts beyond the claim's "
                          f"{len(inputs.prompts)} where both generators have a scene (a held-out confirmation "
                          f"needs at least {MIN_HELD_OUT})")  # fmt: skip
    search = SearchRequest(inputs.spec.id, inputs.profile.name, objective=f"pair:{a},{b}",
                           budget=request.search_budget, seed=request.seed,
                           split=Split(len(inputs.prompts), inputs.held_out),
                           flip_points=request.flip_points, bootstrap=request.bootstrap,
                           generators=(a, b), flip_on="discovery")  # fmt: skip
    result = run_search(search, scenes=inputs.scenes, cache_dir=inputs.cache_dir, renderer=renderer,
                        spec=inputs.spec, prefetch=prefetch, thresholds=inputs.thresholds)  # fmt: skip
    return PairSearch(a, b, result)
