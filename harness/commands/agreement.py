"""``t3d-audit agreement --human FILE [--scores FILE...] [--group-by COLUMN] [--standardize-raters] [--json] [--out DIR]``.

Measures how well each evaluator's scores agree with human ratings (Pearson, Spearman, Kendall
τ-b and τ-c, tie-calibrated pairwise accuracy), with prompt-block bootstrap intervals, beside
the human panel's own reliability (Krippendorff's α, noise ceiling). Formats and definitions:
docs/formats.md "Human ratings" and docs/human-agreement.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.human.document import agreement_document
from harness.run import argtypes

HELP = "agreement of evaluator scores with human ratings (with the raters' noise ceiling)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--human", type=argtypes.input_path, metavar="FILE",
                     help="ratings table (CSV/Parquet) or a public format (see --human-format)")
    who.add_argument("--simulate-panel", metavar="EVALUATOR:RELIABILITY[:RATERS]",
                     help="demo without human data: a SIMULATED panel of RATERS (default 3) raters = "
                     "EVALUATOR's baseline scores + independent noise at single-rating RELIABILITY")
    parser.add_argument("--human-format", choices=("auto", "table", "stanfordt23d", "mate3d", "tifa", "dsg"),
                        default="auto", help="format of --human (auto: recognised by content; "
                        "docs/human-agreement.md 'Public formats')")
    parser.add_argument("--scale", metavar="LOW-HIGH",
                        help="declared rating scale, e.g. 1-5 (required for a table; formats declare theirs)")
    parser.add_argument("--dimension", help="the rating dimension to use (default: overall, or the only one)")
    parser.add_argument("--scores", nargs="+", type=argtypes.input_path, default=[], metavar="FILE",
                        help="records files or tables with item_id, evaluator, score; also a TIFA "
                        "JSON (its metric scores) or DSG VQA answers CSV")
    parser.add_argument("--votes", type=argtypes.input_path, metavar="FILE",
                        help="pairwise votes (prompt_id, generator_a, generator_b, winner, rater), "
                        "or GPTEval3D comparisons JSON")
    parser.add_argument("--votes-format", choices=("auto", "table", "gpteval3d"), default="auto",
                        help="format of --votes (auto: .json is gpteval3d, else table)")
    parser.add_argument("--votes-criterion", metavar="NAME",
                        help="GPTEval3D votes: the criterion to use (default: the only one)")
    parser.add_argument("--group-by", metavar="COLUMN",
                        help="compute every statistic within each value of this ratings column, then average")
    parser.add_argument("--standardize-raters", action="store_true",
                        help="z-score each rater's ratings (over the items that rater rated) before "
                        "averaging and alpha: for raters who use the scale differently")
    parser.add_argument("--bootstrap", type=argtypes.integer(2), default=2000, metavar="B", help="bootstrap draws (default 2000)")
    parser.add_argument("--seed", type=argtypes.seed, default=42, help="bootstrap seed (default 42)")
    parser.add_argument("--allow-unjoined", action="store_true",
                        help="measure on the joined items when some rated items have no score")
    parser.add_argument("--write-human", type=argtypes.output_file, metavar="FILE",
                        help="also write the validated ratings as a generic table (.csv/.parquet)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a text table")
    parser.add_argument("--out", type=argtypes.output_dir, metavar="DIR", help="also write agreement.json to DIR")


def run(args: argparse.Namespace) -> int:
    from harness.core.errors import HumanDataError
    from harness.human.data import file_sha256, parse_scale, validate_ratings
    from harness.human.importers import SCALES, detect_format, import_human, read_votes_file
    from harness.stats.bootstrap import MAX_BOOTSTRAP

    if not 2 <= args.bootstrap <= MAX_BOOTSTRAP:
        raise HumanDataError(f"--bootstrap must be in [2, {MAX_BOOTSTRAP}]", where="--bootstrap")
    votes = read_votes_file(args.votes, args.votes_format, args.votes_criterion) if args.votes else None
    if args.simulate_panel is not None:
        ratings = simulated_ratings(args)
        return _emit(_document(ratings, args, votes), args)
    if not args.human.is_file():
        raise HumanDataError("file not found", where=args.human)
    fmt = args.human_format
    if fmt == "auto":
        fmt = detect_format(args.human)
    if args.scale:
        scale = parse_scale(args.scale)
    elif fmt in SCALES:
        scale = SCALES[fmt]
    else:
        raise HumanDataError("a ratings table needs its scale", where="--scale", hint="e.g. --scale 1-5")
    ratings = validate_ratings(import_human(args.human, fmt), scale, str(args.human), file_sha256(args.human))
    if args.write_human:
        _write_table(ratings, args.write_human)
    return _emit(_document(ratings, args, votes), args)


def _emit(doc: dict, args: argparse.Namespace) -> int:
    from harness.core.fileio import json_text, write_json_atomic

    log = sys.stderr if args.json else sys.stdout
    j = doc.get("join")
    if j:
        print(
            f"joined {j['joined']} of {j['human_items']} rated items; unjoined: {j['unjoined_human']} rated "
            f"without a score, {j['unjoined_scored']} scored without a rating; {j['failed_scores']} failed scores",
            file=log,
        )
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(args.out / "agreement.json", doc)
    if args.json:
        sys.stdout.write(json_text(doc))
    else:
        print(render_text(doc))
    return 0


def simulated_ratings(args: argparse.Namespace):
    """A simulated panel (labelled so everywhere) from one evaluator's baseline scores."""
    import hashlib
    import math

    import numpy as np
    import pandas as pd

    from harness.core.errors import HumanDataError
    from harness.human.data import Ratings, Scale
    from harness.human.importers import read_scores_any as read_scores
    from harness.human.join import C0_NAME
    from harness.human.rater_reliability import simulate_panel

    parts = args.simulate_panel.split(":")
    try:
        evaluator, rho = parts[0], float(parts[1])
        raters = int(parts[2]) if len(parts) > 2 else 3
    except (IndexError, ValueError):
        raise HumanDataError(f"cannot read {args.simulate_panel!r}", where="--simulate-panel",
                             hint="write EVALUATOR:RELIABILITY[:RATERS], e.g. companion:0.6:3") from None
    if not (0.0 < rho <= 1.0) or raters < 2 or len(parts) > 3:
        raise HumanDataError("reliability must be in (0, 1] and raters at least 2", where="--simulate-panel")
    if not args.scores:
        raise HumanDataError("a simulated panel needs --scores with the evaluator's scores", where="--scores")
    frame = pd.concat([read_scores(p) for p in args.scores], ignore_index=True)
    base = frame[(frame["evaluator"] == evaluator) & (frame["configuration"] == C0_NAME) & ~frame["failed"]]
    if base.empty:
        raise HumanDataError(f"no baseline scores of {evaluator!r} to simulate a panel from", where="--scores")
    scene = "_records" in base.columns and bool((base["generator"] != "").all())
    items = [f"{g}/{p}" for g, p in zip(base["generator"], base["prompt_id"], strict=True)] if scene \
        else list(base["item_id"])
    panel = simulate_panel(base["score"].to_numpy(dtype=np.float64), raters, rho, seed=args.seed)
    rows = pd.DataFrame({
        "item": np.repeat(items, raters),
        "rater": np.tile([f"sim{k}" for k in range(raters)], len(items)),
        "rating": panel.ravel(),
        "dimension": "overall",
    })
    if scene:
        rows["generator"] = np.repeat(base["generator"].to_numpy(), raters)
        rows["prompt_id"] = np.repeat(base["prompt_id"].to_numpy(), raters)
    digest = hashlib.sha256(np.ascontiguousarray(panel).tobytes()).hexdigest()
    scale = Scale(math.floor(float(panel.min())), math.ceil(float(panel.max())) + 1.0)
    source = f"simulated:{evaluator}:rho={rho:g}:raters={raters}:seed={args.seed}"
    return Ratings(rows, "scene" if scene else "item_id", scale, source, digest)


def _write_table(ratings, path: Path) -> None:
    from harness.core.fileio import write_bytes_atomic

    frame = ratings.frame.rename(columns={"item": "item_id"})
    if ratings.keyed_by == "scene":
        frame = frame.drop(columns=["item_id"])
    if path.suffix.lower() in (".parquet", ".pq"):
        import io

        buf = io.BytesIO()
        frame.to_parquet(buf, index=False)
        write_bytes_atomic(path, buf.getvalue())
    else:
        from harness.core.csvcells import neutral

        text = frame.rename(columns=neutral).map(neutral).to_csv(index=False)
        write_bytes_atomic(path, text.encode("utf-8"))


def _document(ratings, args: argparse.Namespace, votes) -> dict:
    return agreement_document(ratings, scores=args.scores or (), dimension=args.dimension,
                              group_by=args.group_by, allow_unjoined=args.allow_unjoined,
                              bootstrap=args.bootstrap, seed=args.seed,
                              standardize_raters=bool(args.standardize_raters), votes=votes)  # fmt: skip


def _fmt(v) -> str:
    return "   n/a" if v is None else f"{v:6.3f}"


def render_text(doc: dict) -> str:
    h = doc["human"]
    src = doc["human_source"]
    label = "SIMULATED panel" if src.get("simulated") else "human ratings"
    if src.get("standardized_raters"):
        label += " (each rater standardised)"
    lines = [
        f"{label}: {src['file']} ({src['dimension']}, scale {src['scale']}): {h['items']} items, "
        f"{h['raters']} raters, {h['ratings']} ratings",
        f"  Krippendorff alpha interval {_fmt(h['krippendorff_alpha_interval'])}, ordinal "
        f"{_fmt(h['krippendorff_alpha_ordinal'])}; noise ceiling {_fmt(h['noise_ceiling'])}; "
        f"split-half (Spearman-Brown) {_fmt(h['split_half_spearman_brown'])}",
    ]
    if doc["evaluators"]:
        grouped = f" (within {doc['grouped_by']}, averaged)" if doc["grouped_by"] else " (pooled)"
        unit = doc["bootstrap"].get("resampled", "prompt_id")
        unit = "prompt" if unit == "prompt_id" else unit
        lines.append(f"agreement with the mean rating{grouped}; 95% {unit}-block intervals, "
                     f"B={doc['bootstrap']['draws']}:")
        lines.append(f"  {'evaluator':<24} {'n':>5} {'pearson':>22} {'spearman':>8} {'tau_b':>8} "
                     f"{'tau_c':>8} {'pair_acc':>8} {'ceiling':>8}")
        for ev, e in doc["evaluators"].items():
            ci = e["ci"]["pearson"]
            lines.append(
                f"  {ev:<24} {e['n']:>5} {_fmt(e['pearson'])} [{_fmt(ci[0])},{_fmt(ci[1])}] "
                f"{_fmt(e['spearman'])}   {_fmt(e['kendall_tau_b'])}   {_fmt(e['kendall_tau_c'])}   "
                f"{_fmt(e['pairwise_accuracy'])}   {_fmt(e['noise_ceiling'])}"
            )
    if "bradley_terry" in doc:
        lines.append("Bradley-Terry strengths from pairwise votes (ranked within each connected group):")
        for g, s in doc["bradley_terry"]["strengths"].items():
            lines.append(f"  {g:<24} {_fmt(s['beta'])} [{_fmt(s['ci'][0])},{_fmt(s['ci'][1])}]"
                         f"  group {s.get('component')}")
    notes = list(doc.get("flags", [])) + list(h.get("flags", []))
    notes += [f"{ev}: {f}" for ev, e in doc["evaluators"].items() for f in e.get("flags", [])]
    notes += list(doc.get("bradley_terry", {}).get("flags", []))
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines)
