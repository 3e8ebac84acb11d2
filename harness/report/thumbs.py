"""Thumbnails of the renders the evaluators saw, written into the report as ``thumbs/``.

The report directory holds no renders of its own; the HTML report (:mod:`harness.report.html.page`)
shows, per factor, one prompt's scenes across the factor's levels, and each probe edit next to
the intact scene. The images come encoded from the measurement side
(:func:`harness.measure.thumbs.thumb_images`, handed in as ``RunResult.thumbnails``); this module
only writes them here and reads the index back, so the HTML can be rebuilt from the report
directory alone.

Layout::

    thumbs/<16 hex>.jpg   one image, at most MAX_PX on its longer side, named by its bytes
    thumbs/index.json     {"prompts": [...], "images": [{generator, prompt_id, factor, level,
                           file | null, error}]} in plan order

Images shared by several rows (template and paraphrase levels reuse the c0 render) are stored
once. A report whose evaluators all score scenes without rendering (companion, planted) gets
no thumbnails.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from harness.core.bounded_input import read_report_json as read_json
from harness.core.fileio import write_json_atomic
from harness.core.hashing import sha256_bytes

THUMB_DIR = "thumbs"
INDEX = "index.json"


class ThumbRow(Protocol):
    """One plan row's thumbnail as the report reads it (``harness.measure.thumbs.ThumbImage``)."""

    @property
    def generator(self) -> str: ...
    @property
    def prompt_id(self) -> str: ...
    @property
    def factor(self) -> str: ...
    @property
    def level(self) -> str: ...
    @property
    def data(self) -> bytes | None: ...  # JPEG bytes; None when the row failed
    @property
    def error(self) -> str | None: ...


class ThumbSet(Protocol):
    """The report's thumbnails (``harness.measure.thumbs.Thumbnails``): prompts shown, one row
    per plan row in plan order."""

    @property
    def prompts(self) -> Sequence[str]: ...
    @property
    def images(self) -> Sequence[ThumbRow]: ...


def write_thumbs(thumbnails: ThumbSet, report_dir: Path) -> int:
    """Write ``thumbs/`` of ``thumbnails`` (the prompts shown and one image per plan row);
    returns the number of image files. A row without bytes is listed with its error and no
    file."""
    out_dir = Path(report_dir) / THUMB_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, object]] = []
    files: set[str] = set()
    for image in thumbnails.images:
        entry: dict[str, object] = {
            "generator": image.generator,
            "prompt_id": image.prompt_id,
            "factor": image.factor,
            "level": image.level,
            "file": None,
            "error": image.error,
        }
        if image.data is not None:
            name = f"{sha256_bytes(image.data)[:16]}.jpg"
            if name not in files:
                (out_dir / name).write_bytes(image.data)
                files.add(name)
            entry["file"] = name
        entries.append(entry)
    index = {"prompts": list(thumbnails.prompts), "images": entries}
    write_json_atomic(out_dir / INDEX, index, indent=1, ensure_ascii=True)
    return len(files)


def read_index(report_dir: Path) -> dict[str, object] | None:
    """The parsed ``thumbs/index.json``, or ``None`` when the report has none (or it is unusable)."""
    path = Path(report_dir) / THUMB_DIR / INDEX
    try:
        doc = read_json(path)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("images"), list):
        return None
    return doc
