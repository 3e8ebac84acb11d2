"""Comparing the compare output with the golden files, over the vocabulary they cover.

The goldens cover the factors and probes they name; a factor or probe registered beside them
(a project's, a built-in added later, or a test's temporary one) is left out while the releases
are generated, so adding vocabulary never moves what the goldens pin.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager

from harness.vocab.factors import FACTORS
from harness.vocab.probes import PROBES
from harness.vocab.registry_type import scoped
from tests._compare_golden import (
    JSON_FILE,
    MARKDOWN_FILE,
    assert_same,
    golden_metric_names,
    golden_outputs,
)


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
    Markdown byte for byte), with only the vocabulary and the compared metrics the goldens
    cover registered."""
    golden = json.loads(JSON_FILE.read_text(encoding="utf-8"))
    with only_covered(golden):
        text, markdown = golden_outputs(only=golden_metric_names(golden))
    assert_same(json.loads(text), golden)
    assert markdown == MARKDOWN_FILE.read_text(encoding="utf-8")
