"""A fixed pair of OFAT releases and their compare output (tests/golden/compare_ofat.json and
.md): the output of the metrics the golden files hold must not move.

The files hold the compared metrics registered when they were written; a metric registered
since (a new statistic with a compare margin) is left out of the check
(:func:`golden_outputs` with ``only=``), so adding one breaks nothing. To take it in, or after
an intended change of the comparison, regenerate both files with the one command::

    python -m tests._compare_golden --write

(without ``--write`` it only says whether the files are current).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

GOLDEN = Path(__file__).resolve().parent / "golden"
JSON_FILE = GOLDEN / "compare_ofat.json"
MARKDOWN_FILE = GOLDEN / "compare_ofat.md"


def golden_releases() -> tuple[pd.DataFrame, pd.DataFrame, dict[tuple[str, str], float]]:
    """(baseline, candidate, human means): a small synthetic study with failures, a candidate
    whose pitch effect depends on the generator and noisier elsewhere, and human ratings."""
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    spec = SyntheticSpec(evaluators=1, prompt_free=1, generators=4, prompts=12, templates=4,
                         paraphrases=2, render_levels=3, failure_rate=0.02, seed=3)
    base = synthetic_records(spec)
    cand = base.copy()
    rng = np.random.default_rng(1)
    ok = cand["status"] == "ok"
    cand.loc[ok, "score"] = cand.loc[ok, "score"] + 0.05 * rng.standard_normal(int(ok.sum()))
    pitch = ok & (cand["factor"] == "pitch") & (cand["evaluator"] == "eval0")
    odd = cand["generator"].str[3:].astype(int) % 2 == 1
    cand.loc[pitch & odd, "score"] += 6.0
    c0 = base[(base["factor"] == "baseline") & (base["evaluator"] == "eval0") & (base["status"] == "ok")]
    human = {(g, p): float(s) * 0.1 + (i % 3) * 0.2
             for i, (g, p, s) in enumerate(zip(c0["generator"], c0["prompt_id"], c0["score"], strict=True))}
    return base, cand, human


def assert_same(got: Any, want: Any, path: str = "$") -> None:
    """Equal structure and values; floats equal to 1e-12 relative (last-bit summation order)."""
    if isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15), f"{path}: {got} != {want}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            assert_same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: length"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{path}[{i}]")
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def golden_metric_names(document: Mapping[str, Any]) -> frozenset[str]:
    """The compared metric kinds of a compare ``document``: those of its rows and of its
    margins (a margin ``rho.pitch`` names ``rho``)."""
    names: set[str] = set()
    for pair in document.get("pairs", ()):
        names |= {str(row["kind"]) for row in pair.get("metrics", ())}
        names |= {str(key).split(".", 1)[0] for key in pair.get("margins", {})}
    return frozenset(names)


def golden_outputs(only: Iterable[str] | None = None) -> tuple[str, str]:
    """(comparison JSON text, Markdown) of the golden releases: three evaluator pairs
    (alignment, prompt-free, alignment with human ratings), margins from a table. ``only``:
    the compared metrics to keep (every other compared row is left out of the registry while
    it runs); ``None``: every registered one."""
    if only is not None:
        from harness.release.comparison import is_compared
        from harness.vocab.metrics import METRICS
        from harness.vocab.registry_type import scoped

        keep = frozenset(only)
        with scoped(METRICS):
            for spec in METRICS.where(lambda s: is_compared(s) and s.name not in keep):
                METRICS.unregister(spec.name)
            return golden_outputs()
    from harness.core.fileio import json_text
    from harness.release.baselines import Release, comparison_document, render_markdown
    from harness.release.comparison import compare_records

    base, cand, human = golden_releases()
    margins = {"rho": 0.2, "rho.pitch": 0.05, "discrimination.scrambled": 0.1}
    comparisons = [
        compare_records(base, cand, baseline_evaluator="eval0", candidate_evaluator="eval0",
                        margins=margins, bootstrap=300, seed=5),
        compare_records(base, cand, baseline_evaluator="iqa1", candidate_evaluator="iqa1",
                        bootstrap=300, seed=5),
        compare_records(base, cand, baseline_evaluator="eval0", candidate_evaluator="eval0",
                        bootstrap=300, seed=9, human=human),
    ]
    document = comparison_document(
        comparisons,
        Release("baseline.csv", base, ()),
        Release("candidate.csv", cand, ()),
        unpaired_evaluators={"baseline": [], "candidate": []},
    )
    return json_text(document), render_markdown(document)


def main(argv: Sequence[str] | None = None) -> int:
    """``--write``: regenerate the golden files; otherwise say whether they are current
    (exit 1 when not)."""
    parser = argparse.ArgumentParser(prog="python -m tests._compare_golden", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate the golden files")
    args = parser.parse_args(argv)
    text, markdown = golden_outputs()
    if args.write:
        GOLDEN.mkdir(exist_ok=True)
        JSON_FILE.write_text(text, encoding="utf-8")
        MARKDOWN_FILE.write_text(markdown, encoding="utf-8")
        print(f"wrote {JSON_FILE} and {MARKDOWN_FILE}")
        return 0
    try:
        assert JSON_FILE.is_file() and MARKDOWN_FILE.is_file(), "missing"
        assert_same(json.loads(text), json.loads(JSON_FILE.read_text(encoding="utf-8")))
        assert markdown == MARKDOWN_FILE.read_text(encoding="utf-8"), "the Markdown differs"
        current = True
    except AssertionError as exc:
        print(f"differs: {exc}".splitlines()[0])
        current = False
    print(f"{JSON_FILE.name} and {MARKDOWN_FILE.name} are " + ("current" if current else
          "out of date: python -m tests._compare_golden --write"))  # fmt: skip
    return 0 if current else 1


if __name__ == "__main__":
    sys.exit(main())
