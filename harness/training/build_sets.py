"""Build the training sets that are missing, side by side: one spawned process per set.

A set is a :class:`harness.training.data.DataRecipe` (plain scenes) or a
:class:`harness.training.negatives.NegativesRecipe` (hard-negative groups) with the directory it
is built into. A directory that already holds ``data.npz`` is skipped. Every set renders
through its own content-addressed render cache (``<dir>/renders``), so a build that fails or is
interrupted resumes where it stopped when run again.

Each set is one Blender process because rendering at training size is dominated by per-render
work in one thread (scene set-up, a few Cycles samples at 64 px): two sets on a 2-core machine
render about twice as fast as one.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from harness.core.errors import EvaluatorError

BuildJob = tuple[object, Path]  # (DataRecipe | NegativesRecipe, directory to build it into)


def missing(jobs: Sequence[BuildJob]) -> list[BuildJob]:
    """The jobs whose directory holds no ``data.npz`` yet."""
    return [(recipe, Path(d)) for recipe, d in jobs if not (Path(d) / "data.npz").is_file()]


def build_one(recipe: object, data_dir: Path, log: Callable[[str], None] = print) -> Path:
    """Build one set into ``data_dir`` (hard-negative groups or plain scenes, by recipe type)."""
    from harness.training.data import build_dataset
    from harness.training.negatives import NegativesRecipe, build_negatives

    if isinstance(recipe, NegativesRecipe):
        log(f"building the hard-negative set in {data_dir} ({recipe.n_groups} groups)")
        return build_negatives(recipe, data_dir, log=log)
    log(f"building the training set in {data_dir} ({recipe.n_scenes} scenes x {recipe.views} views)")
    return build_dataset(recipe, data_dir, log=log)


def _build_in_worker(recipe: object, data_dir: Path) -> Path:
    name = data_dir.name
    try:
        return build_one(recipe, data_dir, log=lambda line: print(f"[{name}] {line}", flush=True))
    except Exception as exc:
        # the parent gets the exception pickled: keep its type name and message in one that
        # survives the round trip whatever its constructor takes
        raise EvaluatorError(f"{type(exc).__name__}: {exc}") from None


def build_missing(jobs: Sequence[BuildJob], workers: int = 1, log: Callable[[str], None] = print) -> list[Path]:
    """Build every set of ``jobs`` whose directory lacks ``data.npz``; return the built directories.

    ``workers`` > 1 builds up to that many sets at once, each in a fresh (spawned) process with
    an equal share of the cores for Cycles. A set that fails does not stop the others; once they
    are done, an :class:`EvaluatorError` names every failed directory (their renders so far stay
    cached, so running the command again resumes them)."""
    from harness.render.cache_warmer import init_render_process
    from harness.render.settings import core_share

    todo = missing(jobs)
    if not todo:
        return []
    if workers <= 1 or len(todo) == 1:
        return [build_one(recipe, d, log) for recipe, d in todo]
    n = min(workers, len(todo))
    log(f"building {len(todo)} training sets, {n} at a time")
    failed: list[tuple[Path, BaseException]] = []
    ctx = mp.get_context("spawn")  # a fresh interpreter per set: bpy state is per process
    with ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=init_render_process,
                             initargs=(core_share(n),)) as pool:  # fmt: skip
        futures = {pool.submit(_build_in_worker, recipe, d): d for recipe, d in todo}
        for fut in as_completed(futures):
            try:
                fut.result()
            except Exception as exc:  # every failure is reported below, after the others finish
                failed.append((futures[fut], exc))
                log(f"[{futures[fut].name}] failed: {exc}")
    if failed:
        names = ", ".join(str(d) for d, _ in failed)
        raise EvaluatorError(
            f"{len(failed)} of {len(todo)} training sets failed to build: {names}",
            where=failed[0][0],
            hint=f"first error: {failed[0][1]}; fix it and run the "
                 "command again: finished sets are kept and the failed ones resume from their cached renders",
        ) from failed[0][1]
    return [d for _, d in todo]
