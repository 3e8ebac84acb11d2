"""Known answer beyond one factor at a time: planted-interaction and planted-robust on the
``interactions`` profile (bundled scenes, no rendering: both read scenes).

planted-interaction moves a score only when both factors of a block leave their defaults, so
it passes every OFAT check and fails exactly the block checks; planted-robust passes all.
"""

from __future__ import annotations

import json
import tomllib

import pandas as pd
import pytest

from harness.core.paths import REPO_ROOT
from harness.evaluators.reference.scene_measure import measure_scenes
from harness.evaluators.reference.specs import planted_specs
from harness.measure.plan import build_plan
from harness.protocol.profiles import get_profile
from harness.scenes.scene_source import load_scene_set
from tests._audit_project import THRESHOLDS_PYPROJECT
from tests._thresholds import default_thresholds

pytest_plugins = ["pytester"]

GATES = default_thresholds()
BLOCKS = ("focal_length:background", "lighting:pitch")
PLANTED = ("planted-interaction", "planted-robust")


@pytest.fixture(scope="module")
def audit():
    from harness.stats.audit_stats import compute_audit

    profile = get_profile("interactions")
    scenes = load_scene_set(None).select(prompts=profile.prompts, generators=profile.generators)
    plan = build_plan(scenes, profile)
    specs = [s for s in planted_specs() if s.id in PLANTED]
    records = pd.concat([measure_scenes(s, plan) for s in specs], ignore_index=True)
    assert (records["status"] == "ok").all()
    assert (records["factor"] == "block").sum() == 2 * 12 * 18  # 2 evaluators x 12 scenes x 18 cells
    return compute_audit(records, bootstrap=200, seed=42)


def test_every_ofat_rho_is_zero(audit):
    for name in PLANTED:
        ev = audit.evaluators[name]
        assert ev.rho and all(abs(v) < 1e-12 for v in ev.rho.values()), (name, ev.rho)
        assert ev.max_top1 == 1
    # outside the blocks the two are the same evaluator: identical OFAT envelopes
    a, b = (audit.evaluators[n].envelopes for n in PLANTED)
    assert a.categories == b.categories


def test_interaction_is_one_fifth_of_each_block(audit):
    ev = audit.evaluators["planted-interaction"]
    assert set(ev.blocks) == set(BLOCKS)
    for block in ev.blocks.values():
        # the 3 x 3 pattern u v^T, u = v = (0, 1, 1): eta^2 = (4/9) / (20/9) in every scene
        assert block.interaction_share == pytest.approx(0.2, abs=1e-12)
        assert block.interaction_share_ci == pytest.approx((0.2, 0.2), abs=1e-12)
        assert block.main_share == pytest.approx(dict.fromkeys(block.factors, 0.4), abs=1e-12)
        assert block.interaction_share > GATES["max_interaction_share"]
        assert block.sign_crossings > GATES["max_block_sign_crossings"]
        assert block.new_sign_crossings == block.sign_crossings  # OFAT never saw them
        assert block.winner_count == 2
        assert block.max_additivity_error == pytest.approx(0.5)  # the planted amplitude


def test_robust_has_nothing_in_the_blocks(audit):
    for block in audit.evaluators["planted-robust"].blocks.values():
        assert block.interaction_share == 0.0 and block.sign_crossings == 0
        assert block.winner_count == 1 and block.additivity_rmse == pytest.approx(0.0, abs=1e-12)


def test_summary_carries_the_blocks(audit):
    summary = json.loads(json.dumps(audit.to_summary(), allow_nan=False))
    entry = summary["evaluators"]["planted-interaction"]["blocks"]["lighting:pitch"]
    assert entry["factors"] == ["lighting", "pitch"]
    assert entry["sign_crossings"] == entry["new_sign_crossings"] > 0


# ---------------------------------------------------------------------------- as a pytest run



def _project(pytester: pytest.Pytester) -> None:
    import shutil

    shutil.copytree(REPO_ROOT / "audit_tests", pytester.path / "audit_tests")
    table = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    gates = table["tool"]["t3d-audit"]["thresholds"]
    lines = "\n".join(f"{k} = {v!r}" for k, v in gates.items() if not isinstance(v, dict))
    (pytester.path / "pyproject.toml").write_text(THRESHOLDS_PYPROJECT.format(thresholds=lines))


def _run(pytester: pytest.Pytester, profile: str, *args: str) -> pytest.RunResult:
    root = pytester.path
    return pytester.runpytest_subprocess(
        "audit_tests", "-p", "no:cacheprovider", "-rfs",
        f"--audit-profile={profile}", "--audit-evaluators=planted-interaction,planted-robust",
        f"--audit-cache-dir={root / 'cache'}", f"--audit-report-dir={root / f'reports-{profile}'}",
        *args, timeout=600,
    )


@pytest.mark.parametrize("workers", ["0", "2"])
def test_pytest_run_gives_exactly_the_planted_verdicts(pytester, workers):
    _project(pytester)
    result = _run(pytester, "interactions", "-n", workers)
    failed = sorted(
        line.split(" ")[1].split("::")[1]
        for line in result.outlines
        if line.startswith("FAILED ")
    )
    assert failed == sorted(
        f"{test}[planted-interaction-{block}]"
        for test in ("test_interaction_share", "test_block_sign_crossings")
        for block in BLOCKS
    ), result.stdout.str()[-4000:]
    assert result.ret == 1
    reports = list((pytester.path / "reports-interactions").iterdir())
    (report,) = [p for p in reports if not p.name.startswith(".")]
    assert (report / "figures" / "interactions.png").is_file()
    assert (report / "tables" / "table_blocks.csv").is_file()
    results = json.loads((report / "results.json").read_text())
    assert results  # the report records the block checks with the rest


def test_profile_without_blocks_skips_the_block_checks_as_not_applicable(pytester):
    _project(pytester)
    result = _run(pytester, "smoke", "-n", "0")
    assert result.ret == 0, result.stdout.str()[-4000:]
    text = result.stdout.str()
    assert "not applicable: profile 'smoke' declares no factorial blocks" in text
    assert "no audit check reached an assertion" not in text
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes["skipped"] >= 2
