"""A fixed pair of OFAT releases and the compare output they gave before the comparison's
metrics came from the registry (tests/golden/compare_ofat.json and .md, written by the code at
commit fd12d69 with ``python -m tests._compare_golden``): the output must not move."""

from __future__ import annotations

from pathlib import Path

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


def golden_outputs() -> tuple[str, str]:
    """(comparison JSON text, Markdown) of the golden releases: three evaluator pairs
    (alignment, prompt-free, alignment with human ratings), margins from a table."""
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


if __name__ == "__main__":
    text, markdown = golden_outputs()
    GOLDEN.mkdir(exist_ok=True)
    JSON_FILE.write_text(text, encoding="utf-8")
    MARKDOWN_FILE.write_text(markdown, encoding="utf-8")
    print(f"wrote {JSON_FILE} and {MARKDOWN_FILE}")
