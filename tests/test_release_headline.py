"""The two-release known answer: v2 spreads the generators further apart at c0 and collapses
under most lighting maps; v1 moves a little under every factor. ρ calls v2 the steadier release.
The headline (protocol movement) ranks v2 worse, and ``compare`` fails it naming lighting."""

from __future__ import annotations

import numpy as np
import pytest

from harness.protocol.records import records_from_rows
from harness.release import comparison as cmp
from harness.release.baselines import gate_line
from harness.stats.audit_stats import compute_audit
from tests._compare_tables import scene_sha

GENERATORS = [f"g{i}" for i in range(6)]
PROMPTS = [f"p{i}" for i in range(6)]
LIGHTING = ("city", "courtyard", "forest", "interior", "night", "studio", "sunrise", "sunset")
COLLAPSED = {"forest", "interior", "night", "sunrise", "sunset", "courtyard"}  # 6 of 8 maps
FOCAL = ("24", "35", "50", "85")


def release(name: str, *, spread: float, base: float, collapse: float, seed: int = 0) -> object:
    """Scores of one release: c0 = base + spread·generator + scene noise; lighting multiplies the
    c0 score by ``collapse`` under :data:`COLLAPSED` (plus small noise); focal length adds small
    noise. The scene noise and the per-level noise are the same draws for both releases."""
    rng = np.random.default_rng(seed)
    scene = rng.normal(scale=0.03, size=(6, 6))
    noise = rng.normal(scale=0.01, size=(6, 6, len(LIGHTING) + len(FOCAL)))
    rows = []
    for i, g in enumerate(GENERATORS):
        for j, p in enumerate(PROMPTS):
            c0 = base + spread * (i - 2.5) + scene[i, j]
            common = dict(evaluator=name, generator=g, prompt_id=p, scene_sha256=scene_sha(g, p),
                          caption=f"a room {p}", status="ok")
            rows.append(dict(common, factor="baseline", level="c0", score=c0))
            for k, light in enumerate(LIGHTING):
                value = c0 * (collapse if light in COLLAPSED else 1.0) + noise[i, j, k]
                rows.append(dict(common, factor="lighting", level=light, score=value))
            for k, focal in enumerate(FOCAL):
                rows.append(dict(common, factor="focal_length", level=focal,
                                 score=c0 + noise[i, j, len(LIGHTING) + k]))
    return records_from_rows(rows)


V1 = dict(spread=0.005, base=0.5, collapse=0.9)   # little generator signal, mild lighting effect
V2 = dict(spread=0.06, base=0.3, collapse=0.15)  # generators far apart, collapses under 6 maps


@pytest.fixture(scope="module")
def summaries():
    out = {}
    for name, params in (("v1", V1), ("v2", V2)):
        audited = compute_audit(release(name, **params), bootstrap=400, seed=1)
        out[name] = audited.evaluators[name]
    return out


def test_rho_ranks_the_fragile_release_steadier(summaries):
    assert summaries["v2"].rho["lighting"] < summaries["v1"].rho["lighting"]
    assert summaries["v2"].peak_rho < summaries["v1"].peak_rho


def test_movement_ranks_it_worse_and_names_lighting(summaries):
    m1, m2 = (summaries[v].registered["movement"] for v in ("v1", "v2"))
    assert summaries["v2"].registered["peak_movement"] > 2 * summaries["v1"].registered["peak_movement"]
    assert max(m2, key=m2.__getitem__) == "lighting"
    assert m2["focal_length"] == pytest.approx(m1["focal_length"], rel=0.5)


def test_compare_fails_v2_on_lighting_movement_and_says_so_first():
    out = cmp.compare_records(release("ev", **V1), release("ev", **V2), bootstrap=1000, seed=3)
    verdicts = {m.metric: m.verdict for m in out.metrics}
    assert verdicts["movement-lighting"] == cmp.REGRESSION
    assert verdicts["movement-focal_length"] != cmp.REGRESSION
    assert verdicts["rho-lighting"] != cmp.REGRESSION  # ρ fell: it cannot see the regression
    line = gate_line([out])
    assert line.startswith("gate FAIL: ev regression on movement[lighting] +"), line


def test_compare_on_descriptive_evidence_reads_the_point_differences():
    base, cand = release("ev", **V1), release("ev", **V2)
    confirmed = cmp.compare_records(base, cand, bootstrap=300, seed=3)
    described = cmp.compare_records(base, cand, bootstrap=300, seed=3, evidence="descriptive")
    assert described.evidence == "descriptive" and described.to_dict()["evidence"] == "descriptive"
    for c, d in zip(confirmed.metrics, described.metrics, strict=True):
        assert (c.ci, c.difference) == (d.ci, d.difference)  # the intervals are reported either way
        expected = cmp.point_verdict(d.difference, d.margin, d.harmful)
        assert d.verdict == expected != cmp.INCONCLUSIVE or not np.isfinite(d.difference)
    assert cmp.point_verdict(0.6, 0.5, +1) == cmp.REGRESSION
    assert cmp.point_verdict(-0.6, 0.5, -1) == cmp.REGRESSION
    assert cmp.point_verdict(-0.6, 0.5, +1) == cmp.IMPROVEMENT
    assert cmp.point_verdict(0.5, 0.5, +1) == cmp.NO_CHANGE
    assert gate_line([described]).endswith("on descriptive evidence (point differences against the margins)")
    with pytest.raises(Exception, match="evidence must be one of"):
        cmp.compare_records(base, cand, bootstrap=10, evidence="strong")
