"""Comparing the compare output with the golden files, over the vocabulary they cover.

The goldens cover the factors and probes they name; a factor or probe registered beside them
(a project's, a built-in added later, or a test's temporary one) is left out while the releases
are generated, so adding vocabulary never moves what the goldens pin.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager

from harness.vocab.factors import FACTORS
from harness.vocab.probes import PROBES
from harness.vocab.registries import scoped
from tests._compare_golden import JSON_FILE, MARKDOWN_FILE, golden_outputs


def _same(got, want, path="$"):
    """Equal structure and values; floats equal to 1e-12 relative (last-bit summation order)."""
    if isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15), f"{path}: {got} != {want}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            _same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: length"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _same(g, w, f"{path}[{i}]")
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def covered_vocabulary(golden: dict) -> tuple[set[str], set[str]]:
    """(factors, probes) the golden document covers: the factors its failure counts list, and
    the registered probes it names."""
    factors = set()
    for pair in golden["pairs"]:
        for side in pair["failures"].values():
            if isinstance(side, dict):
                factors.update(side.get("by_factor", ()))
    factors.discard("probe")
    text = json.dumps(golden)
    probes = {name for name in PROBES.names() if re.search(rf"\b{re.escape(name)}\b", text)}
    return factors, probes


@contextmanager
def only_covered(golden: dict) -> Iterator[None]:
    """The factor and probe registries reduced to what ``golden`` covers, restored on exit."""
    factors, probes = covered_vocabulary(golden)
    with scoped(FACTORS, PROBES):
        for name in FACTORS.names():
            if name not in factors:
                FACTORS.unregister(name)
        for name in PROBES.names():
            if name not in probes:
                PROBES.unregister(name)
        yield


def assert_golden_unchanged() -> None:
    """The golden releases' compare output equals the golden files (JSON to 1e-12 relative,
    Markdown byte for byte), with only the vocabulary the goldens cover registered."""
    golden = json.loads(JSON_FILE.read_text(encoding="utf-8"))
    with only_covered(golden):
        text, markdown = golden_outputs()
    _same(json.loads(text), golden)
    assert markdown == MARKDOWN_FILE.read_text(encoding="utf-8")
