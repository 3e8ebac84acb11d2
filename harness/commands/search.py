"""``t3d-audit search``: search the protocol space beyond the grid for where a verdict breaks.

    t3d-audit search --evaluator ID --profile P --objective shift|ranking|pair:A,B \\
        --budget N --seed S [--wall-time SEC] [--batch B] [--flip-region N] [--json]

Searches the continuous protocol space around the profile's c0 (docs/search.md) on the
discovery prompts for the configuration that most changes the objective, then measures it
once on the held-out prompts: the discovery effect, the held-out estimate with its paired
prompt-bootstrap interval (expanded percentile), the optimism (their difference) and whether it
is *confirmed* (the held-out lower bound clears the objective's threshold; with fewer than 6
held-out prompts it is "not confirmable"). ``--flip-region N`` adds the
share of the space (N Sobol points) where the pair's order, or the c0 winner, flips.

The trial log (``--log``, default under the cache) makes a killed search resumable: rerun the
same command. ``--backend ray`` renders each batch's missing renders on a Ray cluster (the
store given by ``--store``), ``--backend slurm`` as Slurm jobs through submitit (the same
store; Slurm flags or ``[tool.t3d-audit.slurm]``), ``--backend local --jobs N`` in N local
processes.

Exit status: 0 searched (confirmed or not; ``--json``'s ``confirmed`` says which), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.backends.prefetch import prefetch_for
from harness.core.errors import AuditError
from harness.run import argtypes
from harness.run.evaluator_selection import search_evaluator
from harness.search.requests import profile_request, project_thresholds

HELP = "search the protocol space beyond the grid for where a verdict breaks"


def _split(text: str) -> object:
    from harness.search.pipeline import Split

    discovery, plus, held = str(text).partition("+")
    if not (plus and _ascii_digits(discovery) and _ascii_digits(held)):
        raise argparse.ArgumentTypeError(
            f"{_shown(text)}: write DISCOVERY+HELD_OUT prompt counts, e.g. 2+4")  # fmt: skip
    try:
        return Split(int(discovery), int(held))
    except AuditError as exc:
        raise argparse.ArgumentTypeError(f"{_shown(text)}: {exc.what}") from None


def _ascii_digits(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 30  # the range check speaks of size


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37] + "...")


def _ranged(name: str) -> object:
    """The argparse type of whole-number option ``name`` (range: harness.protocol.search_limits)."""
    from harness.protocol.search_limits import INT_RANGES, range_text

    low, high = INT_RANGES[name]

    def check(text: str) -> int:
        value = int(text) if _ascii_digits(str(text).strip()) else None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{_shown(text)}: must be {range_text(name)}")
        return value

    check.__name__ = "integer"
    return check


def _axes(text: str) -> tuple[str, ...]:
    """``--axes``: comma-separated axis names, each once (checked against the space later)."""
    names = tuple(part.strip() for part in str(text).split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"{_shown(text)}: an empty axis name; write names joined by commas, "
                                         "e.g. pitch,colour_temperature")  # fmt: skip
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise argparse.ArgumentTypeError(f"{_shown(text)}: axis {_shown(twice)} is named twice")
    return names


def _seconds(text: str) -> float:
    from harness.protocol.search_limits import MAX_WALL_TIME_S

    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= MAX_WALL_TIME_S:  # NaN and inf fail too
        raise argparse.ArgumentTypeError(
            f"{_shown(text)}: must be a number of seconds in (0, {MAX_WALL_TIME_S:g}]")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--evaluator", required=True, help="evaluator id (see 't3d-audit evaluators')")
    parser.add_argument("--profile", default="smoke", help="profile whose c0, scenes and generators to use")
    parser.add_argument("--objective", default=None,
                        help="shift, ranking or pair:A,B (default: the profile's search block, else shift)")
    parser.add_argument("--budget", type=_ranged("budget"), default=None,
                        help="configurations to evaluate (default: the profile's search block, else 40)")
    parser.add_argument("--seed", type=_ranged("seed"), default=None,
                        help="optimiser and bootstrap seed (default: the profile's search block, else 0)")
    parser.add_argument("--wall-time", type=_seconds, default=None, help="start no batch after SEC seconds")
    parser.add_argument("--batch", type=_ranged("batch"), default=8, help="points asked per batch (default 8)")
    parser.add_argument("--split", type=_split, default=None,
                        help="DISCOVERY+HELD_OUT prompt counts (default: the profile's prompts + as many, "
                        "at least 10; fewer than 6 held-out prompts: not confirmable)")
    parser.add_argument("--axes", type=_axes, default=None, help="comma-separated axes to search (default: all)")
    parser.add_argument("--no-attribution", action="store_true",
                        help="skip taking the worst point apart one axis at a time (2 configurations "
                        "per changed axis, on the discovery prompts)")
    parser.add_argument("--flip-region", type=_ranged("flip_points"), default=None, metavar="N",
                        help="also estimate the flip region from N Sobol points (default: the profile's "
                        "search block, else 0: skip)")
    parser.add_argument("--scenes", type=argtypes.input_path, default=None, help="scene set (default: bundled)")
    parser.add_argument("--cache-dir", type=argtypes.output_dir, default=None, help="audit cache directory")
    parser.add_argument("--log", type=argtypes.output_file, default=None,
                        help="trial log (default: <cache>/search/<search key>.jsonl)")
    parser.add_argument("--backend", choices=("inline", "local", "ray", "slurm"), default="inline",
                        help="where a batch's renders run: inline (here), local (--jobs processes), ray, slurm")
    parser.add_argument("--jobs", type=argtypes.jobs, default=None, help="local processes or Ray actors")
    parser.add_argument("--store", default=None, help="render store URL every Ray node reaches")
    parser.add_argument("--address", type=argtypes.ray_address, default=None, help="Ray cluster address")
    from harness.backends.slurm.cli import add_slurm_arguments

    add_slurm_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", type=argtypes.output_dir, default=None,
                        help="also write search.json and the figures (trace, worst beside c0, flip region) here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--save-level", default=None, metavar="NAME",
                        help="save a confirmed worst configuration as level NAME (needs --into)")
    parser.add_argument("--into", type=argtypes.output_file, default=None, metavar="FILE",
                        help="profile file of your own that --save-level writes (docs/search.md)")


def run(args: argparse.Namespace) -> int:
    from harness.core.paths import default_cache_dir
    from harness.core.progress import LineProgress
    from harness.core.progress import progress as progress_bar
    from harness.render.renderer import default_renderer
    from harness.search.pipeline import run_search

    if args.backend in ("ray", "slurm") and not args.store:
        print(f"t3d-audit search: --backend {args.backend} needs --store URL (a store every node reaches)",
              file=sys.stderr)  # fmt: skip
        return 2
    if (args.save_level is None) != (args.into is None):
        print("t3d-audit search: --save-level NAME and --into FILE go together", file=sys.stderr)
        return 2
    if args.save_level is not None:  # a bad name or target is refused before the search, not after
        from harness.search.saved_levels import check_save_target

        check_save_target(args.into, args.profile, args.save_level)
    if args.out is not None:
        check_out(Path(args.out))
    cache_dir = Path(args.cache_dir or default_cache_dir())
    cache_root: Path | str = args.store or cache_dir / "renders"
    spec = search_evaluator(args.evaluator)
    request = profile_request(args.profile, spec.id, objective=args.objective, budget=args.budget,
                              seed=args.seed, batch=args.batch, wall_time=args.wall_time, split=args.split,
                              axes=args.axes, flip_points=args.flip_region,
                              attribute=not args.no_attribution)  # fmt: skip
    bar: object = None

    def progress(done: int, best: float, budget: int) -> None:
        # a bar on a terminal, one plain line every 30 s in a log (harness.core.progress)
        nonlocal bar
        if args.no_progress:
            return
        if bar is None:
            bar = progress_bar(budget, verb="searched", unit="configuration")
        if isinstance(bar, LineProgress):
            bar.note = f"best {best:.4g}"
        else:
            bar.set_postfix_str(f"best {best:.4g}", refresh=False)
        bar.update(done - bar.n)

    try:
        result = run_search(request, scenes=args.scenes, cache_dir=cache_dir, log_path=args.log,
                            renderer=default_renderer(cache_root), spec=spec,
                            prefetch=prefetch_for(args.backend, cache_root, args.jobs, args.address,
                                                  _slurm_options(args)),
                            progress=progress,
                            thresholds=project_thresholds(Path("pyproject.toml")).for_evaluator(spec.id))  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    doc = result.to_dict()
    if args.out is not None:
        write_outputs(result, Path(args.out), default_renderer(cache_root), args.scenes)
    if args.save_level is not None:
        if not result.confirmed or result.worst is None:
            print("t3d-audit search: no confirmed worst configuration to save (--save-level)", file=sys.stderr)
            return 1
        from harness.search.saved_levels import save_level

        save_level(args.into, request.profile, args.save_level, result.space.text(result.worst), result.objective.text)
        print(f"t3d-audit search: saved {args.save_level!r} into {args.into} (profile {request.profile}); "
              f"audit it with --audit-profile={request.profile} --audit-profile-file={args.into}",
              file=sys.stderr)  # fmt: skip
    if args.json:
        print(json.dumps(doc, indent=1, sort_keys=True, allow_nan=False))
        return 0
    print(render_text(doc))
    return 0


#: The files ``--out`` writes (each replaced atomically: a symlink there is replaced, never
#: written through).
OUT_NAMES = ("search.json", "search_trace.png", "search_worst_vs_c0.png", "search_flip_region.png")


def check_out(out: Path) -> None:
    """:class:`AuditError` when one of :data:`OUT_NAMES` in ``out`` is taken by something other
    than a plain file (a folder, a symlink, a FIFO or device): checked before the search."""
    from harness.core.fileio import not_a_plain_file

    for name in OUT_NAMES:
        try:
            kind = not_a_plain_file(out / name)
        except NotADirectoryError:
            raise AuditError(f"{out} is not a folder", where="--out", hint="name a folder") from None
        if kind is not None:
            raise AuditError(f"{out / name} is {kind}; the search writes a file there", where="--out",
                             hint="remove it, or give --out another folder")  # fmt: skip


def write_outputs(result: object, out: Path, renderer: object, scenes: Path | None = None) -> list[Path]:
    """``search.json`` and the search figures (:mod:`harness.report.search_figures`) in
    ``out``: the trace; the first discovery scene rendered at c0 beside the worst
    configuration; the flip region's points on the axes that carry the flips."""
    from harness.core.fileio import write_json_atomic
    from harness.report import search_figures
    from harness.scenes.scene_source import load_scene_set
    from harness.search.figure_inputs import flip_sample, worst_images

    check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    doc = result.to_dict()
    written = [out / "search.json"]
    write_json_atomic(written[0], doc)
    written.append(search_figures.trace_figure(doc, out / "search_trace.png"))
    sample = flip_sample(result)
    if result.worst is not None:
        images = worst_images(result, renderer, load_scene_set(scenes))
        if images is not None:
            written.append(search_figures.worst_vs_c0_figure(images.c0, images.worst, images.scene, images.text,
                                                             out / "search_worst_vs_c0.png"))  # fmt: skip
    if sample is not None:
        written.append(search_figures.flip_region_figure(sample.points, sample.x, sample.y, sample.title,
                                                         out / "search_flip_region.png"))  # fmt: skip
    return written


def render_text(doc: dict[str, object]) -> str:
    """The human summary of a search document."""
    lines = [f"search {doc['evaluator']} on {doc['profile']}: {doc['objective']} "
             f"({doc['objective_label']}), {doc['trials']} of {doc['budget']} configurations "
             f"(stopped: {doc['stopped']}), seed {doc['seed']}"]  # fmt: skip
    worst = doc.get("worst")
    if worst is None:
        lines.append("no configuration could be measured")
        return "\n".join(lines)
    held = doc.get("held_out") or {}
    interval = held.get("interval") or [None, None]
    fmt = lambda x: "-" if x is None else f"{x:.4g}"  # noqa: E731
    lines += [
        f"worst: {worst['text']}",
        f"discovery effect {fmt(doc['discovery']['estimate'])} on {doc['discovery']['prompts']} prompts; "
        f"held-out {fmt(held.get('estimate'))} [{fmt(interval[0])}, {fmt(interval[1])}] on "
        f"{held.get('prompts', '-')} prompts; optimism {fmt(doc['optimism'])}",
        held.get("reason") or (("CONFIRMED" if doc["confirmed"] else "not confirmed")
                               + f": held-out lower bound vs {held.get('threshold', {}).get('name', '-')} = "
                               f"{fmt(held.get('threshold', {}).get('value'))}"),
    ]
    attribution = doc.get("attribution")
    if attribution:
        lines.append(f"what breaks it: {attribution['text']}")
    flip = doc.get("flip_region")
    if flip:
        fi = flip["interval"]
        lines.append(f"flip region ({flip['verdict']}): {fmt(flip['share'])} of the space "
                     f"[{fmt(fi[0])}, {fmt(fi[1])}]; {flip['where']}")  # fmt: skip
    t = doc["timing"]
    lines.append(f"wall {t['wall_s']:.1f} s, measuring {t['measure_s']:.1f} s; trial log {doc['log']}")
    return "\n".join(lines)


def _slurm_options(args: argparse.Namespace) -> dict[str, object] | None:
    """The Slurm options of ``--backend slurm`` (``None`` for the other backends)."""
    if args.backend != "slurm":
        return None
    from harness.backends.slurm.cli import slurm_warm_options
    from harness.backends.slurm.options import require_submitit

    require_submitit()
    return {**slurm_warm_options(args), "only_shards": None}
