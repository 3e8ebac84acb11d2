"""One search, end to end: discovery search, held-out confirmation, optional flip region.

:func:`run_search` is what ``t3d-audit search`` and :func:`harness.api.search` call:

1. the scene set is cut into a *discovery* split (the profile's first prompts, the prompts a
   grid audit of the profile sees, so their c0 renders are cached already) and a *held-out*
   split (the next prompts), every generator in both;
2. the optimiser (:mod:`~harness.search.optimiser`) proposes batches of points; each is
   measured on the discovery split against c0 (:mod:`~harness.search.evaluate`) and its
   effect (:mod:`~harness.search.objectives`) appended to the trial log
   (:mod:`~harness.search.trial_log`) before the optimiser is told;
3. the point with the largest discovery effect is measured once on the held-out split and
   confirmed or not (:mod:`~harness.search.confirm`);
4. with ``flip_points``, a Sobol sample of the space on both splits (``flip_on="discovery"``:
   on the discovery split only) gives the flip region (:mod:`~harness.search.flip_region`).

``generators`` limits the search to some of the scene set's generators (``t3d-audit claim``
measures its pair only); the search key covers the selection, so its trial log is its own.

The budget is in configurations (``budget``) and in seconds (``wall_time``: no new batch is
started past it). Everything measured is cached, and the trial log replays, so a killed
search rerun with the same arguments continues where it stopped.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.errors import AuditError
from harness.core.hashing import sha256_json
from harness.core.numbers import finite_or_none
from harness.protocol.search_limits import check_int, check_wall_time
from harness.search.attribution import Attribution, ablation_points, attribute
from harness.search.confirm import MIN_PROMPTS, Confirmation, confirm
from harness.search.evaluate import Measured, PointScorer, Prefetch
from harness.search.flip_region import FlipRegion, flip_region, flipped, sobol_points
from harness.search.objectives import Objective, parse_objective
from harness.search.space import Point, Space, space_for
from harness.search.trial_log import Trial, TrialLog, TrialLogError, check_log_target

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec

SEARCH_VERSION = 1
HELD_OUT = 10  # the default held-out prompts (docs/search.md "Confirmation": measured rates)


class SearchError(AuditError):
    """A search that cannot run as asked (a split larger than the scene set, c0 failing...)."""


@dataclass(frozen=True)
class Split:
    """How many prompts the search sees (``discovery``) and confirms on (``held_out``)."""

    discovery: int
    held_out: int

    def __post_init__(self) -> None:
        for name in ("discovery", "held_out"):
            try:
                check_int(name, getattr(self, name), where="split")
            except AuditError as exc:
                raise SearchError(exc.what, where="split",
                                  hint="a held-out interval needs at least two prompts to resample") from None  # fmt: skip


@dataclass(frozen=True)
class SearchRequest:
    """What to search: one evaluator on one profile, an objective, a budget and a seed."""

    evaluator: str
    profile: str
    objective: str = "shift"
    budget: int = 40
    seed: int = 0
    batch: int = 8
    wall_time: float | None = None
    split: Split | None = None  # None: discovery = the profile's prompts, held-out as many, >= HELD_OUT
    axes: tuple[str, ...] | None = None
    flip_points: int = 0
    bootstrap: int | None = None  # None: the profile's
    attribute: bool = True  # take the worst point apart one axis at a time (search/attribution.py)
    generators: tuple[str, ...] | None = None  # None: the profile's (a claim measures its pair only)
    flip_on: str = "all"  # the flip region's prompts: "all" (both splits) or "discovery"


@dataclass
class SearchResult:
    """Everything a search found (:meth:`to_dict` is ``search --json``'s object)."""

    request: SearchRequest
    space: Space
    objective: Objective
    discovery_prompts: tuple[str, ...]
    held_out_prompts: tuple[str, ...]
    trials: list[Trial]
    stopped: str
    worst: Point | None
    worst_trial: int | None
    discovery_effect: float
    held_out: Confirmation | None
    flip: FlipRegion | None
    log_path: Path
    key: str
    seconds: float
    measure_seconds: float
    renders: dict[str, int] = field(default_factory=dict)
    attribution: Attribution | None = None

    @property
    def confirmed(self) -> bool:
        return bool(self.held_out is not None and self.held_out.confirmed)

    @property
    def optimism(self) -> float:
        if self.held_out is None:
            return math.nan
        return self.discovery_effect - self.held_out.estimate

    def worst_configuration(self) -> dict[str, object]:
        """The worst point's fields: numbers for float axes (``pitch`` in degrees), text for
        choice axes."""
        assert self.worst is not None
        return {a.name: (float(v) if a.domain.kind == "float" else v)
                for a, v in zip(self.space.axes, self.worst, strict=True)}  # fmt: skip

    def to_dict(self) -> dict[str, object]:
        ok = [t for t in self.trials if t.status == "ok"]
        worst = None
        if self.worst is not None:
            cfg = self.space.configuration(self.worst)
            worst = {"configuration": self.worst_configuration(), "text": self.space.text(self.worst),
                     "trial": self.worst_trial, "render": cfg.render.to_dict(),
                     "background": cfg.background, "template": cfg.template}  # fmt: skip
        return {
            "version": SEARCH_VERSION,
            "evaluator": self.request.evaluator,
            "profile": self.request.profile,
            "objective": self.objective.text,
            "objective_label": self.objective.label,
            "budget": self.request.budget,
            "batch": self.request.batch,
            "seed": self.request.seed,
            "space": self.space.to_dict(),
            "split": {"discovery": list(self.discovery_prompts), "held_out": list(self.held_out_prompts)},
            "trials": len(self.trials),
            "failed_trials": len(self.trials) - len(ok),
            "stopped": self.stopped,
            "worst": worst,
            "discovery": {"estimate": finite_or_none(self.discovery_effect), "prompts": len(self.discovery_prompts)},
            "held_out": None if self.held_out is None else self.held_out.to_dict(),
            "optimism": finite_or_none(self.optimism),
            "confirmed": self.confirmed,
            "flip_region": None if self.flip is None else self.flip.to_dict(),
            "attribution": None if self.attribution is None else self.attribution.to_dict(),
            "trace": [finite_or_none(t.value) for t in self.trials],
            "log": str(self.log_path),
            "key": self.key,
            "timing": {"wall_s": round(self.seconds, 3), "measure_s": round(self.measure_seconds, 3),
                       "overhead_share": round(max(self.seconds - self.measure_seconds, 0.0)
                                               / self.seconds, 4) if self.seconds > 0 else None},
            "renders": dict(self.renders),
        }  # fmt: skip



Progress = Callable[[int, float, int], None]  # (trials done, best effect so far, budget)


def objective_threshold(name: str, thresholds: Mapping[str, float] | None) -> float:
    """The value of threshold ``name`` (a search objective's): the project's ``thresholds`` first,
    else the registry's default."""
    from harness.vocab.metrics import THRESHOLDS

    if thresholds and name in thresholds:
        return float(thresholds[name])
    default = THRESHOLDS.get(name).default
    return 0.0 if default is None else float(default)


def search_key(request: SearchRequest, spec_identity: str, space: Space, objective: Objective,
               split: Split, selection: str) -> str:  # fmt: skip
    """The identity of a search: what its trial log must have been written for."""
    return sha256_json({
        "version": SEARCH_VERSION, "evaluator": spec_identity, "profile": request.profile,
        "scenes": selection, "objective": objective.text, "budget": request.budget,
        "batch": request.batch, "seed": request.seed,
        "split": [split.discovery, split.held_out], "space": space.to_dict(),
    })  # fmt: skip


def check_request(request: SearchRequest) -> None:
    """:class:`SearchError` naming the first number of ``request`` outside its range
    (:mod:`harness.protocol.search_limits`), before any work."""
    try:
        for name in ("budget", "batch", "seed", "flip_points"):
            check_int(name, getattr(request, name), where=f"search {name}")
        if request.wall_time is not None:
            check_wall_time(request.wall_time, where="search wall_time")
        if request.bootstrap is not None:
            check_int("bootstrap", request.bootstrap, where="search bootstrap")
    except SearchError:
        raise
    except AuditError as exc:
        raise SearchError(exc.what, where=exc.where) from None
    if request.flip_on not in ("all", "discovery"):
        raise SearchError(f"flip_on must be 'all' or 'discovery', got {request.flip_on!r:.40}", where="search flip_on")


def run_search(
    request: SearchRequest,
    *,
    scenes: Path | None = None,
    cache_dir: Path,
    log_path: Path | None = None,
    renderer: object = None,
    spec: EvaluatorSpec = None,
    prefetch: Prefetch | None = None,
    progress: Progress | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> SearchResult:
    """Run ``request`` (module doc). ``spec``: the evaluator spec (default: the registry's
    ``request.evaluator``); ``renderer``: default the Blender render service on
    ``cache_dir/renders``; ``log_path``: default ``cache_dir/search/<key>.jsonl``."""
    from harness.evaluators import registry
    from harness.protocol.profiles import get_profile
    from harness.render.renderer import default_renderer
    from harness.scenes.scene_source import load_scene_set

    started = time.perf_counter()
    check_request(request)
    if log_path is not None:
        check_log_target(Path(log_path))  # a FIFO, symlink or foreign file: before any work
    spec = spec if spec is not None else registry.get(request.evaluator)
    named = get_profile(request.profile)
    full = load_scene_set(scenes, cache_dir)
    split = request.split or Split(named.prompts or 1, max(named.prompts or 1, HELD_OUT))
    needed = split.discovery + split.held_out
    if len(full.prompt_ids) < needed:
        raise SearchError(
            f"the split needs {needed} prompts, the scene set has {len(full.prompt_ids)}",
            where="split", hint="lower the split's discovery or held-out count",
        )  # fmt: skip
    chosen = (full.select(needed, request.generators) if request.generators
              else full.select_for_profile(needed, named.generators))
    prompts = tuple(sorted(chosen.prompt_ids))
    discovery_ids, held_ids = prompts[: split.discovery], prompts[split.discovery :]
    profile = named.for_scene_kind(chosen.kind)
    space = space_for(profile, request.axes)
    objective = parse_objective(request.objective, tuple(sorted(chosen.generators)))
    key = search_key(request, spec.identity_hash, space, objective, split, chosen.selection_sha256())
    log_path = Path(log_path) if log_path else Path(cache_dir) / "search" / f"{key[:16]}.jsonl"
    renderer = renderer if renderer is not None else default_renderer(Path(cache_dir) / "renders")
    bootstrap = request.bootstrap or named.bootstrap

    def scorer(prompt_ids: Sequence[str]) -> PointScorer:
        return PointScorer(spec, chosen.with_prompts(prompt_ids), renderer, Path(cache_dir), prefetch)

    disc = scorer(discovery_ids)
    c0 = space.base
    base = disc.measure([c0])[0]
    if not base.ok:
        raise SearchError(f"c0 could not be measured on the discovery prompts: {base.error}",
                          where="c0", hint="fix the failure (a render or score error) first")  # fmt: skip

    from harness.search.optimiser import BatchOptimiser

    header = {"evaluator": request.evaluator, "profile": request.profile, "objective": objective.text,
              "budget": request.budget, "batch": request.batch, "seed": request.seed,
              "split": {"discovery": list(discovery_ids), "held_out": list(held_ids)},
              "space": space.to_dict()}  # fmt: skip
    opt = BatchOptimiser(space, request.budget, request.batch, request.seed)
    stopped = "budget"
    with TrialLog(log_path, key, header) as log:
        logged = list(log.trials)
        done = 0
        batch_no = 0
        best = -math.inf
        ran_fresh = False
        while done < request.budget:
            # the clock stops only new work, and never before this run's first fresh batch
            if (request.wall_time is not None and ran_fresh
                    and time.perf_counter() - started > request.wall_time):  # fmt: skip
                stopped = "wall time"
                break
            asked = opt.ask(min(request.batch, request.budget - done))
            replay = [logged[done + i] for i in range(len(asked)) if done + i < len(logged)]
            for trial, (_, point) in zip(replay, asked, strict=False):
                if trial.point != space.text(point):
                    raise TrialLogError(
                        f"trial {trial.n} does not replay: the log has {trial.point!r}, the "
                        f"optimiser proposes {space.text(point)!r}", where=str(log_path),
                        hint="the log was written by another nevergrad version; delete it to start afresh",
                    )  # fmt: skip
            fresh = asked[len(replay):]
            ran_fresh = ran_fresh or bool(fresh)
            t0 = time.perf_counter()
            measured = disc.measure([space.configuration(p) for _, p in fresh])
            each = (time.perf_counter() - t0) / max(len(fresh), 1)
            new_trials = [_trial(done + len(replay) + i, batch_no, space.text(p), objective, base, m, each)
                          for i, ((_, p), m) in enumerate(zip(fresh, measured, strict=True))]  # fmt: skip
            for t in new_trials:
                log.append(t)
            trials = replay + new_trials
            opt.tell([c for c, _ in asked], [t.value for t in trials])
            done += len(asked)
            batch_no += 1
            finite = [t.value for t in trials if math.isfinite(t.value)]
            best = max([best, *finite])
            if progress is not None:
                progress(done, best, request.budget)
        trials_all = list(log.trials[:done])  # what this search asked for: never a line past it

    ok = [t for t in trials_all if t.status == "ok" and math.isfinite(t.value)]
    worst_trial = max(ok, key=lambda t: (t.value, -t.n)) if ok else None
    worst = space.parse(worst_trial.point) if worst_trial else None
    attribution = None
    if worst is not None and worst_trial is not None and request.attribute:
        attribution = _attribution(space, objective, disc, base, worst, worst_trial.value)
    disc.close()  # one model in memory at a time: the held-out scorer loads its own
    held_conf: Confirmation | None = None
    held = scorer(held_ids)
    if worst is not None:
        hb, hm = held.measure([c0, space.configuration(worst)])
        if hb.ok and hm.ok:
            held_conf = confirm(objective, hb.scores, hm.scores,
                                threshold=objective_threshold(objective.threshold, thresholds),
                                bootstrap=bootstrap, seed=request.seed, min_prompts=MIN_PROMPTS)  # fmt: skip
        else:
            print(f"t3d-audit search: held-out measurement failed: {hb.error or hm.error}", file=sys.stderr)
    held.close()
    flip = None
    measure_seconds = disc.seconds + held.seconds
    if request.flip_points > 0:
        flip_prompts = discovery_ids if request.flip_on == "discovery" else prompts
        flip, secs = _flip(space, objective, scorer(flip_prompts), request, c0)
        measure_seconds += secs
    renders = {"fetched": disc.stats.images + held.stats.images,
               "rendered": disc.stats.renders + held.stats.renders}  # fmt: skip
    return SearchResult(request, space, objective, discovery_ids, held_ids, trials_all, stopped, worst,
                        worst_trial.n if worst_trial else None,
                        worst_trial.value if worst_trial else math.nan, held_conf, flip, log_path, key,
                        time.perf_counter() - started, measure_seconds, renders, attribution)  # fmt: skip


def _attribution(space: Space, objective: Objective, scorer: PointScorer, base: Measured, worst: Point,
                 effect: float) -> Attribution:  # fmt: skip
    """The worst point taken apart one axis at a time on the discovery prompts (module
    :mod:`~harness.search.attribution`); a point that fails to measure counts as not measured."""
    points = ablation_points(space, worst)
    measured = scorer.measure([space.configuration(p) for _, alone, without in points for p in (alone, without)])

    def value(m: Measured) -> float:
        return objective.effect(base.scores, m.scores) if m.ok else math.nan

    alone = [value(m) for m in measured[0::2]]
    without = [value(m) for m in measured[1::2]]
    return attribute(space, worst, effect, alone, without, objective.label)


def _trial(n: int, batch: int, point: str, objective: Objective, base: Measured, m: Measured,
           seconds: float) -> Trial:  # fmt: skip
    if not m.ok:
        return Trial(n, batch, point, math.nan, "failed", m.error, seconds)
    value = objective.effect(base.scores, m.scores)
    if not math.isfinite(value):
        return Trial(n, batch, point, math.nan, "failed", "the objective is undefined here", seconds)
    return Trial(n, batch, point, value, "ok", "", seconds)


def _flip(space: Space, objective: Objective, scorer: PointScorer, request: SearchRequest,
          c0: object) -> tuple[FlipRegion, float]:  # fmt: skip
    """The flip region from ``request.flip_points`` Sobol points on ``scorer``'s prompts."""
    points = sobol_points(space, request.flip_points, request.seed)
    base = scorer.measure([c0])[0]
    outcomes: list[bool | None] = []
    for i in range(0, len(points), request.batch):
        chunk = points[i : i + request.batch]
        for m in scorer.measure([space.configuration(p) for p in chunk]):
            outcomes.append(flipped(objective.generators, objective.pair, base.scores, m.scores)
                            if base.ok and m.ok else None)  # fmt: skip
    verdict = f"order of {objective.pair[0]} and {objective.pair[1]}" if objective.pair else "c0 winner"
    scorer.close()
    return flip_region(space, points, outcomes, verdict), scorer.seconds
