"""``t3d-audit score --evaluator ID --images DIR --captions FILE --out RECORDS``.

Scores image files against captions with one evaluator and writes a raw score records file
(CSV or Parquet by suffix; see ``harness.protocol.records``). Scores are served from and added to the
score cache (``--cache-dir``, default ``$T3D_AUDIT_CACHE_DIR`` or the per-user cache dir) unless
``--no-cache``. Failed pairs are written as ``failed`` rows (NaN score, reason in ``error``).

Captions file (paths relative to ``--images``):

* JSON mapping ``{"<image file>": "<caption>" | ["<caption>", ...]}``, or
* JSON list of objects ``{"image", "caption", "generator"?, "prompt_id"?, "scene_sha256"?,
  "factor"?, "level"?}``, or
* CSV with a header holding at least ``image`` and ``caption`` (plus any optional column).

Defaults for the record columns: ``generator`` = ``images``, ``prompt_id`` = the image file
stem, ``scene_sha256`` = sha256 of the image file's bytes, ``factor`` = ``baseline``,
``level`` = ``c0``. A prompt-free evaluator scores each image once with an empty caption.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from harness.core import bounded_input
from harness.core.errors import EvaluatorError
from harness.evaluators.image_input import load_image
from harness.run import argtypes

HELP = "score images against captions"
OPTIONAL = ("generator", "prompt_id", "scene_sha256", "factor", "level")
CHUNK = 256  # pairs held in memory at once (images are decoded per chunk)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--evaluator", required=True,
                        help="evaluator id (see 't3d-audit evaluators'; the project's conftest ones too)")  # fmt: skip
    parser.add_argument("--images", required=True, type=argtypes.input_path, help="directory of image files")
    parser.add_argument("--captions", required=True, type=argtypes.input_path, help="captions file (JSON or CSV)")
    parser.add_argument("--out", required=True, type=argtypes.records_file, help="records file (.csv or .parquet)")
    parser.add_argument("--device", type=argtypes.device, default="auto", help="auto (cuda if available), cpu, cuda:0")
    parser.add_argument("--batch-size", type=argtypes.batch_size, default=32, help="images per forward pass")
    parser.add_argument("--cache-dir", type=argtypes.output_dir, default=None, help="score cache directory")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the cache")


def read_captions(path: Path) -> list[dict[str, object]]:
    """Entries ``{"image", "caption", ...optional record columns}`` from a captions file."""
    if not path.is_file():
        raise EvaluatorError("captions file not found", where=path)
    try:
        text = bounded_input.read_text(path, what="captions file")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvaluatorError(f"cannot read the captions file: {exc}", where=path) from None
    entries: list[dict[str, object]] = []
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        if not reader.fieldnames or not {"image", "caption"} <= set(reader.fieldnames):
            raise EvaluatorError(
                "CSV captions need 'image' and 'caption' columns", where=f"{path}:1"
            )
        entries = [dict(row) for row in reader]
    else:
        try:
            data = bounded_input.loads(text, where=path)
        except ValueError as exc:
            raise EvaluatorError(f"captions file is not JSON: {exc}", where=path) from exc
        if isinstance(data, dict):
            for image, caps in data.items():
                for cap in [caps] if isinstance(caps, str) else caps:
                    entries.append({"image": image, "caption": cap})
        elif isinstance(data, list):
            entries = data
        else:
            raise EvaluatorError("captions JSON must be an object or a list", where=path)
    for i, entry in enumerate(entries):
        where = f"{path}#/{i}"
        if not isinstance(entry, dict) or not isinstance(entry.get("image"), str):
            raise EvaluatorError("entry needs an 'image' file name", where=where)
        if not isinstance(entry.get("caption"), str):
            raise EvaluatorError("entry needs a 'caption' string", where=where)
        for key in OPTIONAL:
            if key in entry and not isinstance(entry[key], str):
                raise EvaluatorError(f"'{key}' must be a string", where=where)
    if not entries:
        raise EvaluatorError("captions file lists no images", where=path)
    return entries


def run(args: argparse.Namespace) -> int:
    from harness.core.hashing import sha256_file
    from harness.core.ids import stored_model_id
    from harness.core.paths import default_cache_dir
    from harness.core.progress import progress
    from harness.evaluators.cache import CachedEvaluator, ScoreCache
    from harness.protocol.records import records_from_rows, write_records
    from harness.run.evaluator_selection import select_evaluators
    from harness.run.project_evaluators import project_specs

    specs = select_evaluators([args.evaluator], project_specs())  # the project's conftest too
    if len(specs) != 1:
        raise EvaluatorError(
            f"--evaluator {args.evaluator!r} matches {len(specs)} evaluators",
            hint="give exactly one id; records are written one file per evaluator",
        )
    spec = specs[0]
    if not args.images.is_dir():
        raise EvaluatorError("--images is not a directory", where=args.images)
    entries = read_captions(args.captions)
    rows: dict[tuple[str, ...], dict[str, object]] = {}
    for i, entry in enumerate(entries):
        path = args.images / entry["image"]
        if not path.is_file():
            raise EvaluatorError("image not found", where=f"{args.captions}#/{i}: {path}")
        caption = entry["caption"] if spec.needs_text else ""
        row = {
            "evaluator": spec.id,
            "generator": entry.get("generator", "images"),
            "prompt_id": entry.get("prompt_id", Path(entry["image"]).stem),
            "scene_sha256": entry.get("scene_sha256") or sha256_file(path),
            "factor": entry.get("factor", "baseline"),
            "level": entry.get("level", "c0"),
            "caption": caption,
            "_path": path,
        }
        key = (row["scene_sha256"], row["factor"], row["level"], caption)
        rows.setdefault(key, row)  # one measurement per key (prompt-free: once per image)

    evaluator = spec.build(device=args.device, batch_size=args.batch_size)
    if not args.no_cache:
        cache_dir = args.cache_dir or default_cache_dir()
        evaluator = CachedEvaluator(evaluator, ScoreCache(cache_dir))
    todo = list(rows.values())
    # a bar on a terminal, a plain line every 30 s in a log (stderr: stdout keeps the summary)
    bar = progress(len(todo), verb="scored", unit="record", label=spec.id)
    try:
        for start in range(0, len(todo), CHUNK):
            chunk = todo[start : start + CHUNK]
            images = [load_image(r["_path"]) for r in chunk]
            for row, result in zip(chunk, evaluator.score(images, [r["caption"] for r in chunk]),
                                   strict=True):  # fmt: skip
                row.update(score=result.score, status=result.status, error=result.error,
                           served_model=stored_model_id(result.metadata.get("model", "")))  # fmt: skip
            bar.update(len(chunk))
    finally:
        bar.close()
        evaluator.close()
    table = records_from_rows({k: v for k, v in r.items() if k != "_path"} for r in todo)
    out = write_records(table, args.out)
    failed = int((table["status"] == "failed").sum())
    print(f"{spec.id}: {len(table)} records ({failed} failed) -> {out}")
    return 0
