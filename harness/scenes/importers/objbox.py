"""The box of an OBJ file's vertices, read block by block in bounded memory.

The OBJ and sceneState importers measure an OBJ in Python (no Blender): the ``v`` lines'
positions give its box. The bytes are walked in blocks of about :data:`BLOCK_BYTES` that end
at a line end, so the working memory beside the file's own bytes is a few times the block
(lines, tokens and a float table of one block), whatever the file's size. Each block takes a
vectorised path when its ``v`` lines all have the same number of short numbers, else a
careful line-by-line reader that names the first bad line.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.core.errors import ImportError_

BLOCK_BYTES = 4 << 20  # bytes of OBJ text measured at once
MAX_NUMBER_CHARS = 64  # longest token the vectorised reader takes (a float needs < 32)


@dataclass(frozen=True)
class ObjBox:
    """``lo``/``hi``: (3,) float64 corners of the ``v`` positions; ``width``: the number of
    values on the first ``v`` line (7 for ``v x y z r g b``); ``mtllibs``: every name given
    to an ``mtllib`` statement, in file order; ``vertices``: how many ``v`` lines."""

    lo: np.ndarray
    hi: np.ndarray
    width: int
    mtllibs: tuple[str, ...]
    vertices: int


def obj_box(raw: bytes, path: Path | str) -> ObjBox:
    """The :class:`ObjBox` of the OBJ bytes ``raw``. Raises ImportError_ naming the first
    ``v`` line without three finite numbers, or when there is none."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    width, count, line_no = 0, 0, 1
    libs: list[str] = []
    for block in blocks(raw):
        lines = block.splitlines()
        vlines = [ln for ln in lines if ln.startswith(b"v ")]
        if vlines:
            width = width or len(vlines[0].split())
            verts = fast_vertices(vlines)
            if verts is None:  # ragged or malformed: the line-by-line reader names the bad line
                verts = _careful_vertices(lines, line_no, path)
            lo, hi = np.minimum(lo, verts.min(0)), np.maximum(hi, verts.max(0))
            count += len(verts)
        libs += [name.decode("utf-8", "replace") for ln in lines if ln.startswith(b"mtllib ")
                 for name in ln.split()[1:]]
        line_no += len(lines)
    if not count:
        raise ImportError_("OBJ asset has no vertices", path=path)
    return ObjBox(lo, hi, width, tuple(libs), count)


def blocks(raw: bytes) -> Iterator[bytes]:
    """``raw`` in consecutive copies of about :data:`BLOCK_BYTES`, each ending at a line end
    (or the end of ``raw``): no line is cut, and a block holds whole UTF-8 characters."""
    start = 0
    while start < len(raw):
        end = _block_end(raw, start)
        yield raw[start:end]
        start = end


def _block_end(raw: bytes, start: int) -> int:
    """The end of the block from ``start``: just after the first line end at or past
    :data:`BLOCK_BYTES` further (``\\r\\n`` kept together), or the end of ``raw``."""
    cut = start + BLOCK_BYTES
    if cut >= len(raw):
        return len(raw)
    nl = raw.find(b"\n", cut)
    cr = raw.find(b"\r", cut)
    ends = [i for i in (nl, cr) if i >= 0]
    if not ends:
        return len(raw)
    end = min(ends) + 1
    if raw[end - 1:end] == b"\r" and raw[end:end + 1] == b"\n":
        end += 1
    return end


def fast_vertices(vlines: list[bytes]) -> np.ndarray | None:
    """(N, 3) positions of ``v`` lines that all have the same number of finite numbers;
    None otherwise (then the careful reader runs)."""
    if not vlines:
        return None
    width = len(vlines[0].split())
    tokens = b" ".join(vlines).split()
    # np.array of bytes is a fixed-width array as wide as the longest token: one 1 MB token
    # among 150 000 would ask for 150 GB. Numbers are never that long; the careful reader
    # names the line.
    if max(map(len, tokens)) > MAX_NUMBER_CHARS:
        return None
    try:
        table = np.array(tokens)
        if table.size != width * len(vlines):
            return None
        numbers = table.reshape(len(vlines), width)[:, 1:4].astype(np.float64)
    except ValueError:
        return None
    return numbers if np.all(np.isfinite(numbers)) else None


def _careful_vertices(lines: list[bytes], first_line: int, path: Path | str) -> np.ndarray:
    """(N, 3) positions of the ``v`` lines among ``lines`` (numbered from ``first_line``)."""
    verts = []
    for n, raw in enumerate(lines, start=first_line):
        line = raw.decode("utf-8", errors="replace")
        if line.startswith("v "):
            parts = line.split()
            try:
                xyz = [float(v) for v in parts[1:4]]
            except ValueError:
                xyz = []
            if len(xyz) != 3 or not all(math.isfinite(v) for v in xyz):
                raise ImportError_(f"bad vertex on line {n}", path=path)
            verts.append(xyz)
    return np.array(verts, dtype=np.float64).reshape(-1, 3)
