"""The search inside an audit run: ``audit_tests/test_search.py`` under the
``search-smoke`` profile, with planted evaluators (they read scenes: no renders).

planted-offgrid's fragility lies off every grid (pitch 50–60° under light below 3500 K): the
grid checks pass it, the search's worst case is confirmed on held-out prompts, so
``test_worst_case`` fails; planted-robust passes. A profile without a search block collects
no search check at all, so its results, run id and cards do not move.
"""

from __future__ import annotations

import json
import tomllib

import pytest

from harness.core.paths import REPO_ROOT
from harness.search.space import space_for
from tests._audit_project import THRESHOLDS_PYPROJECT

pytest_plugins = ["pytester"]

EVALUATORS = "--audit-evaluators=planted-offgrid,planted-robust"


CONFTEST = '''
def pytest_audit_evaluators(config):
    from harness.evaluators.reference.specs import search_planted_specs

    return search_planted_specs()
'''


def _project(pytester: pytest.Pytester) -> None:
    import shutil

    shutil.copytree(REPO_ROOT / "audit_tests", pytester.path / "audit_tests")
    table = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    gates = table["tool"]["t3d-audit"]["thresholds"]
    lines = "\n".join(f"{k} = {v!r}" for k, v in gates.items() if not isinstance(v, dict))
    (pytester.path / "pyproject.toml").write_text(THRESHOLDS_PYPROJECT.format(thresholds=lines))
    (pytester.path / "conftest.py").write_text(CONFTEST)


def _run(pytester: pytest.Pytester, profile: str, *args: str) -> pytest.RunResult:
    root = pytester.path
    return pytester.runpytest_subprocess(
        "audit_tests", "-p", "no:cacheprovider", "-rfs", f"--audit-profile={profile}", EVALUATORS,
        f"--audit-cache-dir={root / 'cache'}", f"--audit-report-dir={root / 'reports'}",
        *args, timeout=600,
    )  # fmt: skip


def _failed(result: pytest.RunResult) -> list[str]:
    return sorted(line.split(" ")[1].split("::")[1] for line in result.outlines if line.startswith("FAILED "))


@pytest.mark.parametrize("workers", ["0", "2"])
def test_search_checks_fail_only_the_offgrid_evaluator(pytester, workers):
    _project(pytester)
    result = _run(pytester, "search-smoke", "-n", workers)
    tail = result.stdout.str()[-4000:]
    # the grid passes planted-offgrid; only the search sees it (its flip region too)
    assert _failed(result) == ["test_flip_region[planted-offgrid]", "test_worst_case[planted-offgrid]"], tail
    assert result.ret == 1
    (report,) = [p for p in (pytester.path / "reports").iterdir() if not p.name.startswith(".")]
    results = json.loads((report / "results.json").read_text())["results"]
    outcomes = {r["test"].split("::")[-1]: r["outcome"] for r in results if "test_search.py" in r["test"]}
    assert outcomes == {"test_worst_case[planted-offgrid]": "failed", "test_flip_region[planted-offgrid]": "failed",
                        "test_worst_case[planted-robust]": "passed", "test_flip_region[planted-robust]": "passed"}
    offgrid = json.loads((report / "cards" / "planted-offgrid.json").read_text())
    robust = json.loads((report / "cards" / "planted-robust.json").read_text())
    assert robust["search"]["confirmed_worst"] is None
    found = offgrid["search"]
    assert (found["objective"], found["budget"], found["seed"]) == ("pair:faithful,gridded", 64, 0)
    assert found["space"] == robust["search"]["space"]
    fields = dict(part.split("=", 1) for part in found["confirmed_worst"].split(","))
    assert 50 <= float(fields["pitch"]) <= 60 and float(fields["colour_temperature"]) < 3500, fields
    assert offgrid["card_id"] != robust["card_id"]
    # the report's search section (item 6): documents, traces, the table; the report validates
    page = (report / "report.html").read_text(encoding="utf-8")
    assert '<section id="search">' in page and found["confirmed_worst"] in page and "not confirmed" in page
    # item 6: the confirmed worst configuration's render beside c0's (only where confirmed) and
    # the flip-region figure (both evaluators sample one), drawn from what the session hands in
    assert {p.name for p in (report / "search").iterdir()} == {
        f"{ev}{suffix}" for ev in ("planted-offgrid", "planted-robust")
        for suffix in (".json", "_trace.png", "_flip_region.png")} | {"planted-offgrid_worst_vs_c0.png"}
    assert 'alt="confirmed worst configuration beside c0 of planted-offgrid"' in page
    assert 'alt="flip region of planted-offgrid"' in page and 'alt="flip region of planted-robust"' in page
    from PIL import Image

    with Image.open(report / "search" / "planted-offgrid_worst_vs_c0.png") as shown:
        assert shown.size[0] > shown.size[1] > 100  # two renders side by side
    from harness.cli import main

    assert main(["validate", "--deep", str(report)]) == 0
    _card_id_moves_with_the_search(report, offgrid)


def _card_id_moves_with_the_search(report, card) -> None:
    """The card, rebuilt from the manifest, is the run's; its id moves with the search's
    budget, seed and confirmed worst configuration, and without a search it has no field."""
    import copy

    from harness.cards.assemble import assemble_card

    options = json.loads((report / "manifest.json").read_text())["options"]
    stats = json.loads((report / "summary.json").read_text())["evaluators"]["planted-offgrid"]

    def rebuilt(change) -> dict:
        opts = copy.deepcopy(options)
        change(opts["card_facts"]["evaluators"]["planted-offgrid"])
        return assemble_card("planted-offgrid", opts, stats)

    assert rebuilt(lambda f: None)["card_id"] == card["card_id"]
    ids = {card["card_id"]}
    for key, value in (("budget", 65), ("seed", 1), ("confirmed_worst", None)):
        ids.add(rebuilt(lambda f, k=key, v=value: f["search"].__setitem__(k, v))["card_id"])
    without = rebuilt(lambda f: f.pop("search"))
    assert "search" not in without
    ids.add(without["card_id"])
    assert len(ids) == 5


def test_profile_without_search_block_collects_no_search_check(pytester):
    _project(pytester)
    result = _run(pytester, "smoke", "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()[-3000:]
    text = result.stdout.str()
    assert "test_block_sign_crossings" in text  # the suite was collected
    assert "test_worst_case" not in text and "test_flip_region" not in text


def test_profile_without_search_block_reports_a_complete_run(pytester):
    """Dropped before the run records what it collected: the report is complete, without a
    row for the search checks (regression: they were once listed as missing)."""
    _project(pytester)
    root = pytester.path
    result = pytester.runpytest_subprocess(
        "audit_tests/test_search.py", "audit_tests/test_failures.py", "-p", "no:cacheprovider",
        "--audit-profile=smoke", "--audit-evaluators=planted-robust", f"--audit-cache-dir={root / 'cache'}",
        f"--audit-report-dir={root / 'reports'}", "-n", "0", timeout=600,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    (report,) = [p for p in (root / "reports").iterdir() if not p.name.startswith(".")]
    results = json.loads((report / "results.json").read_text())
    assert results["complete"] is True and results["missing"] == []
    assert results["results"] and not any("test_search.py" in r["test"] for r in results["results"])
    card = json.loads((report / "cards" / "planted-robust.json").read_text())
    assert "search" not in card
    assert not (report / "search").exists() and 'id="search"' not in (report / "report.html").read_text()


def test_search_smoke_space_is_the_smoke_space_on_its_grid():
    """The profile's space comes from its own c0 (the card records it)."""
    from harness.protocol.profiles import get_profile

    profile = get_profile("search-smoke")
    assert profile.search is not None and profile.search.budget == 64
    assert space_for(profile, None).to_dict()["c0"] == space_for(get_profile("smoke"), None).to_dict()["c0"]
