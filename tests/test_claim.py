"""``t3d-audit claim``'s parts: the verdict, the evidence, the paper block (unit tests against
hand-computed values and properties), and the known answers on the bundled scenes with the
planted evaluators (scene evaluators: no Blender).

Known answers (default profile, 6 prompts; faithful beats gridded by 0.132 at c0):
planted-pitch reverses at pitch 90 (on the grid), planted-offgrid only at pitch 50–60° under
light below 3500 K (off every grid), planted-preset only under mate3d, planted-robust nowhere.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.claims import verdict as v
from harness.claims.all_pairs import DEPENDENT, REVERSED_CLASS, ROBUST, partial_order
from harness.claims.evidence import (
    GRID,
    PRESET,
    PairEvidence,
    ProtocolGap,
    pair_evidence,
    weights_for,
)
from harness.claims.inputs import ClaimRequest
from harness.claims.paper import latex_escape, markdown_escape, paper_block
from harness.claims.pipeline import run_claim

# ----------------------------------------------------------------------------- evidence


def test_pair_evidence_by_hand():
    # 2 generators, 3 prompts, 2 protocols (c0, pitch=90): A − B per prompt is 1, 2, 3 at c0 and
    # -1, -2, -3 at pitch 90; a preset where A − B is 0.5 on every prompt
    grid = np.zeros((2, 3, 2))
    grid[0, :, 0] = [1.0, 2.0, 3.0]
    grid[0, :, 1] = [-1.0, -2.0, -3.0]
    presets = np.zeros((1, 2, 3))
    presets[0, 0] = 0.5
    (ev,) = pair_evidence(("A", "B"), [(0, 1)], ("baseline", "pitch=90"), grid, ("mate3d",), presets,
                          weights=weights_for(3, 400, 0))  # fmt: skip
    assert ev.c0[0] == pytest.approx(2.0)
    assert ev.envelope[:2] == pytest.approx((-2.0, 2.0)) and ev.envelope[2] == "sign_crossing"
    assert [p.gap for p in ev.grid] == pytest.approx([2.0, -2.0])
    assert ev.presets[0].gap == pytest.approx(0.5) and ev.presets[0].kind == PRESET
    assert not math.isfinite(ev.presets[0].lo)  # constant over prompts: no inferential claim
    assert ev.presets[0].confirmed_holds  # ... but a constant positive margin holds
    assert [p.name for p in ev.reversing()] == ["pitch=90"]
    assert ev.reason == "not confirmable: 3 prompts (needs 6)"
    # the band is one family: both grid intervals are symmetric about their gaps with one q
    widths = [p.hi - p.gap for p in ev.grid]
    assert widths[0] == pytest.approx(widths[1])


def test_one_band_covers_every_pair():
    rng = np.random.default_rng(0)
    grid = rng.normal(size=(3, 8, 4))
    evs = pair_evidence(("A", "B", "C"), [(0, 1), (0, 2), (1, 2)], ("baseline", "a", "b", "c"), grid,
                        weights=weights_for(8, 300, 1))  # fmt: skip
    assert len({e.band_q for e in evs}) == 1 and all(e.reason == "" for e in evs)
    for e, (i, j) in zip(evs, [(0, 1), (0, 2), (1, 2)], strict=True):
        assert e.grid[0].gap == pytest.approx(float(np.mean(grid[i, :, 0] - grid[j, :, 0])))


# ----------------------------------------------------------------------------- verdict


def _ev(c0: float, gaps: list[tuple[str, str, float, float, float]], reason: str = "") -> PairEvidence:
    protocols = [ProtocolGap("baseline", GRID, c0, c0 - 0.05, c0 + 0.05)]
    protocols += [ProtocolGap(n, k, g, lo, hi) for n, k, g, lo, hi in gaps]
    grid = tuple(p for p in protocols if p.kind == GRID)
    presets = tuple(p for p in protocols if p.kind == PRESET)
    gaps_ = [p.gap for p in grid]
    return PairEvidence("A", "B", 6, (c0, c0 - 0.05, c0 + 0.05), (min(gaps_), max(gaps_), "strict"), grid, presets,
                        3.0, 0.95, reason)  # fmt: skip


NO_SEARCH = v.SearchFacts(False, "not run: --search-budget 0")


def test_verdict_reversed_at_c0():
    out = v.decide(_ev(-0.2, []), NO_SEARCH, "E")
    assert out.kind == v.REVERSED and out.evidence == v.CONFIRMED and "reversed at c0" in out.line
    assert "B scores higher" in out.line


def test_verdict_depends_names_levels_and_presets():
    out = v.decide(_ev(0.3, [("pitch=90", GRID, -0.4, -0.5, -0.3), ("mate3d", PRESET, -0.1, -0.3, 0.1)]), NO_SEARCH, "E")
    assert out.kind == v.DEPENDS and out.evidence == v.CONFIRMED
    assert "at grid levels pitch=90 and under presets mate3d" in out.line
    descriptive = v.decide(_ev(0.3, [("mate3d", PRESET, -0.1, -0.3, 0.1)]), NO_SEARCH, "E")
    assert descriptive.evidence == v.DESCRIPTIVE


def test_verdict_flips_off_grid_reads_the_search():
    search = v.SearchFacts(True, budget=64, discovery_effect=0.8, held_out=(0.8, 0.7, 0.9), held_out_prompts=10,
                           confirmed=True, flip=(0.0156, 0.006, 0.039, 4, 256, "pitch 55–56°"))  # fmt: skip
    out = v.decide(_ev(0.3, [("pitch=90", GRID, 0.2, 0.1, 0.3)]), search, "E")
    assert out.kind == v.OFF_GRID and out.evidence == v.CONFIRMED
    assert "flips in 1.6 % [0.6 %, 3.9 %] of the continuous space (pitch 55–56°; 256 points)" in out.line
    unconfirmable = v.decide(_ev(0.3, []), v.SearchFacts(True, budget=8, discovery_effect=0.5, reason="not confirmable: 2 "
                             "held-out prompts"), "E")  # fmt: skip
    assert unconfirmable.evidence.startswith("not confirmable: 2 held-out prompts")


def test_verdict_holds_and_its_evidence_levels():
    held = v.decide(_ev(0.3, [("pitch=90", GRID, 0.2, 0.1, 0.3)]), NO_SEARCH, "E")
    assert held.kind == v.HOLDS and held.evidence == v.CONFIRMED
    assert "holds everywhere tested (2 grid protocols)" in held.line
    open_ = v.decide(_ev(0.3, [("pitch=90", GRID, 0.2, -0.1, 0.5)]), NO_SEARCH, "E")
    assert open_.evidence == v.DESCRIPTIVE and any("not confirmed at 1 protocols" in d for d in open_.details)
    few = v.decide(_ev(0.3, [], reason="not confirmable: 2 prompts (needs 6)"), NO_SEARCH, "E")
    assert few.evidence == "not confirmable: 2 prompts (needs 6)"


def test_partial_order_classes():
    rows = [("A", "B", v.decide(_ev(0.3, []), NO_SEARCH, "E")),
            ("A", "C", v.decide(_ev(0.3, [("pitch=90", GRID, -0.4, -0.5, -0.3)]), NO_SEARCH, "E")),
            ("B", "C", v.decide(_ev(-0.3, []), NO_SEARCH, "E"))]  # fmt: skip
    order = partial_order(("A", "B", "C"), rows)
    assert order.counts() == {ROBUST: 1, DEPENDENT: 1, REVERSED_CLASS: 1}
    assert order.robust_relations() == ["A ≻ B"]
    assert order.matrix == [["", ROBUST, DEPENDENT], ["", "", REVERSED_CLASS], ["", "", ""]]


# ----------------------------------------------------------------------------- paper block


def test_latex_and_markdown_escape_by_hand():
    assert latex_escape("my_gen & 50% #1 $x$ {a} ~^\\") == (
        r"my\_gen \& 50\% \#1 \$x\$ \{a\} \textasciitilde{}\textasciicircum{}\textbackslash{}")
    assert latex_escape("a\nb") == "a b"
    assert markdown_escape("a|b*c_d `e` [x](y) [0.1, 0.2]") == r"a\|b\*c\_d \`e\` [x\](y) [0.1, 0.2]"


@given(st.text(max_size=40))
def test_latex_escape_leaves_no_special_character_bare(text):
    out = latex_escape(text)
    stripped = out
    for cmd in (r"\textbackslash{}", r"\textasciitilde{}", r"\textasciicircum{}", r"\textless{}", r"\textgreater{}",
                r"\textbar{}"):  # fmt: skip
        stripped = stripped.replace(cmd, "")
    for c in "&%$#_{}":
        stripped = stripped.replace("\\" + c, "")
    assert not set(stripped) & set("\\&%$#_{}~^<>|\n")


def test_paper_block_is_deterministic_and_escaped():
    from harness.claims.evidence import GeneratorScore

    rows = [GeneratorScore("a_1", 0.81234, 0.78, 0.84), GeneratorScore("b&c", 0.7, 0.6, 0.8)]
    one = paper_block("a_1 beats b&c under E: holds", rows, "ecc-v1-sha256:00ff", ["Scope 100% of it."], "cfg")
    two = paper_block("a_1 beats b&c under E: holds", rows, "ecc-v1-sha256:00ff", ["Scope 100% of it."], "cfg")
    assert one == two
    assert r"a\_1 & 0.8123 & [0.78, 0.84] & \texttt{ecc-v1-sha256:00ff} \\" in one.latex
    assert r"b\&c" in one.latex and r"Scope 100\% of it." in one.latex
    assert "| a\\_1 | 0.8123 | [0.78, 0.84] | `ecc-v1-sha256:00ff` |" in one.markdown


# ----------------------------------------------------------------------------- known answers


def _claim(tmp_path, evaluator, *, profile="default", budget=8, flip=0, seed=0, a="faithful", b="gridded"):
    request = ClaimRequest(evaluator, a, b, profile, search_budget=budget, flip_points=flip, seed=seed)
    return run_claim(request, cache_dir=tmp_path)


@pytest.mark.parametrize("seed", [0, 3])
def test_known_answer_planted_pitch_flips_on_the_grid(tmp_path, seed):
    result = _claim(tmp_path, "planted-pitch", seed=seed)
    out = result.verdict
    assert out.kind == v.DEPENDS and out.evidence == v.CONFIRMED, out.line
    ev = result.pairs[0].evidence
    assert "pitch=90" in [p.name for p in ev.reversing(GRID)]
    assert next(p for p in ev.grid if p.name == "pitch=90").confirmed_reversed
    assert ev.c0[0] == pytest.approx(0.132, abs=1e-3) and ev.envelope[2] == "sign_crossing"


@pytest.mark.parametrize("seed", [0, 1])
def test_known_answer_planted_offgrid_holds_on_the_grid_and_flips_off_it(tmp_path, seed):
    result = _claim(tmp_path, "planted-offgrid", budget=64, flip=256, seed=seed)
    out = result.verdict
    assert out.kind == v.OFF_GRID and out.evidence == v.CONFIRMED, out.line
    assert "holds on the grid and the presets but flips in" in out.line
    ev = result.pairs[0].evidence
    assert ev.envelope[2] == "strict" and not ev.reversing()
    flip = result.pairs[0].search.result.flip
    assert 0 < flip.share < 0.1 and flip.interval[0] > 0


def test_known_answer_planted_preset_flips_under_one_preset(tmp_path):
    result = _claim(tmp_path, "planted-preset")
    out = result.verdict
    assert out.kind == v.DEPENDS and out.evidence == v.CONFIRMED, out.line
    ev = result.pairs[0].evidence
    assert [p.name for p in ev.reversing(PRESET)] == ["mate3d@scaled"] and not ev.reversing(GRID)
    assert "under presets mate3d@scaled" in out.line


@pytest.mark.parametrize("seed", [0, 2])
def test_known_answer_planted_robust_holds(tmp_path, seed):
    result = _claim(tmp_path, "planted-robust", flip=32, seed=seed)
    out = result.verdict
    assert out.kind == v.HOLDS and out.evidence == v.CONFIRMED, out.line
    assert result.pairs[0].search.result.flip.flips == 0


def test_reversed_at_c0_and_too_few_prompts_are_worded(tmp_path):
    reversed_ = _claim(tmp_path, "planted-robust", a="gridded", b="faithful").verdict
    assert reversed_.kind == v.REVERSED and reversed_.evidence == v.CONFIRMED
    smoke = _claim(tmp_path, "planted-pitch", profile="smoke", budget=4).verdict
    assert smoke.kind == v.DEPENDS and smoke.evidence == "not confirmable: 2 prompts (needs 6)"
    assert smoke.line.endswith("[not confirmable: 2 prompts (needs 6)]")


def test_paper_block_of_a_claim_is_the_same_bytes_twice(tmp_path):
    one = _claim(tmp_path / "a", "planted-robust", profile="smoke", budget=4)
    two = _claim(tmp_path / "b", "planted-robust", profile="smoke", budget=4)
    assert one.paper() == two.paper()
    assert one.card_id.startswith("ecc-v1-sha256:") and one.card_id in one.paper().latex


def test_envelope_groups_are_equal_width_columns_by_hand():
    from harness.claims.evidence import GRID, PRESET, ProtocolGap
    from harness.claims.figures import group_positions

    gaps = [ProtocolGap(name, kind, 0.1, 0.0, 0.2) for name, kind in
            [("baseline", GRID), ("pitch=0", GRID), ("pitch=90", GRID), ("yaw=45", GRID), ("mate3d@scaled", PRESET)]]  # fmt: skip
    xs, groups = group_positions(gaps)
    assert groups == ["baseline", "pitch", "yaw", "mate3d@scaled"]
    # group k spans [k, k+1); members spread over its middle 80 %: k + 0.1 + 0.8 (rank + 0.5) / n
    assert xs == pytest.approx([0.5, 1.3, 1.7, 2.5, 3.5])
