"""Human agreement inside an audit (``--audit-human``): protocol dependence, checks, cards, page.

Hand-computed values for the envelope, drop and split statistics; the run id and thresholds of
runs without human data unchanged; bad human inputs exit 4 at configure time; and the known
answer on a simulated panel (raters = the symbolic companion's c0 scores plus
independent noise at a declared reliability): the recovered alpha and ceiling cover the planted
values, and planted-pitch90 (agreement collapses at pitch 90) fails exactly its pitch stability
check, with ``-n 0`` and ``-n 2``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.human import protocol_dependence as hp
from harness.human.agreement_draws import pearson_draws, pooled_draws
from harness.human.rater_reliability import noise_ceiling
from tests._human_panel import RATERS, RELIABILITY, write_panel

pytest_plugins = ["pytester"]


# ------------------------------------------------------------------------- pure statistics


def test_split_halves_are_disjoint_seeded_and_cover_every_prompt():
    prompts = [f"p{i}" for i in range(7)]
    sel, conf = hp.split_prompts(prompts, 42)
    assert sorted(sel + conf) == prompts and len(sel) == 4 and len(conf) == 3
    assert hp.split_prompts(list(reversed(prompts)), 42) == (sel, conf)  # order of input irrelevant
    assert any(hp.split_prompts(prompts, s) != (sel, conf) for s in range(1, 6))
    with pytest.raises(ValueError):
        hp.split_prompts(["only"], 0)


def test_pearson_draws_match_the_pooled_bootstrap():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(3, 12)), rng.normal(size=12)
    blocks = np.repeat(np.arange(4), 3)
    w = rng.multinomial(4, [0.25] * 4, size=9)
    full = pooled_draws(x, y, blocks, w, np.zeros(3))["pearson"]
    assert np.allclose(pearson_draws(x, y, blocks, w), full, equal_nan=True)


def test_factor_envelope_and_largest_drop_by_hand():
    # rows: estimate, then two draws; columns: c0, pitch=45, pitch=90, lighting=night
    draws = np.array([[0.9, 0.8, 0.3, 0.95],
                      [0.8, 0.8, 0.5, 0.90],
                      [1.0, 0.6, 0.2, 1.00]])
    confs = ["baseline", "pitch=45", "pitch=90", "lighting=night"]
    factor_of = {"pitch=45": ("pitch", "45"), "pitch=90": ("pitch", "90"), "lighting=night": ("lighting", "night")}
    out = hp.factor_envelopes(draws, confs, factor_of, "baseline")
    pitch = out["pitch"]
    assert pitch["levels"] == {"45": 0.8, "90": 0.3}
    assert pitch["envelope"] == [0.3, 0.8]
    assert pitch["max_drop"] == pytest.approx(0.6) and pitch["worst_level"] == "90"
    # drops (45, 90): point (0.1, 0.6), draws (0.0, 0.3) and (0.4, 0.8); one width for the
    # factor, simultaneous over its levels: max |drop* − drop| per draw = 0.3 and 0.3 → q = 0.3
    assert pitch["drops"]["90"]["drop"] == pytest.approx(0.6)
    assert pitch["drops"]["45"]["ci"] == [pytest.approx(-0.2), pytest.approx(0.4)]
    assert pitch["max_drop_ci"] == [pytest.approx(0.3), pytest.approx(0.9)]  # max of lo, of hi
    assert pitch["interval"]["kind"] == "simultaneous" and pitch["interval"]["over_levels"] == 2
    assert out["lighting"]["max_drop"] == pytest.approx(-0.05)


def test_best_configuration_selects_on_one_half_and_confirms_on_the_other():
    human = np.array([1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0])
    prompts = ["a"] * 4 + ["b"] * 4
    c0 = np.array([1.0, 3.0, 2.0, 4.0, 1.0, 3.0, 2.0, 4.0])
    good = human * 2.0
    scores = np.vstack([c0, good])
    best = hp.best_configuration(scores, human, prompts, ["baseline", "x=1"], "baseline", 42)
    assert best["configuration"] == "x=1" and best["confirmed"] is False  # one held-out prompt
    assert best["confirmation_pearson"] == pytest.approx(1.0)
    assert best["c0_confirmation_pearson"] == pytest.approx(0.8)
    # four prompts alike: the held-out half (2 prompts) has its interval above 0, but 2 prompts
    # are below the interval policy's minimum: not confirmable
    four = hp.best_configuration(np.tile(scores, 2), np.tile(human, 2), [p + s for s in "12" for p in prompts],
                                 ["baseline", "x=1"], "baseline", 42)
    assert four["confirmed"] is False and four["confirmation_gain_ci"] == [pytest.approx(0.2), pytest.approx(0.2)]
    assert four["reason"] == "not confirmable: 2 held-out prompts (needs 6)"
    # twelve prompts alike: the held-out half (6 prompts) confirms by an interval above 0
    twelve = hp.best_configuration(np.tile(scores, 6), np.tile(human, 6), [p + s for s in "123456" for p in prompts],
                                   ["baseline", "x=1"], "baseline", 42)
    assert twelve["confirmed"] is True and twelve["confirmation_gain_ci"] == [pytest.approx(0.2), pytest.approx(0.2)]
    assert twelve["reason"] is None
    assert set(best["split"]["selection"]) | set(best["split"]["confirmation"]) == {"a", "b"}
    tie = hp.best_configuration(np.vstack([c0, c0]), human, prompts, ["a=1", "baseline"], "baseline", 42)
    assert tie["configuration"] == "baseline" and tie["confirmed"] is False  # a tie keeps c0
    assert hp.best_configuration(scores, human, ["a"] * 8, ["baseline", "x=1"], "baseline", 42) is None


def test_configuration_labels_map_to_factor_levels():
    from harness.human.audit import _factor_of

    assert _factor_of("baseline") is None and _factor_of("baseline@mean4") is None
    assert _factor_of("pitch=90") == ("pitch", "90")
    assert _factor_of("pitch=90@max4") == ("pitch", "90")  # the run's view policy is not a level
    assert _factor_of("template=a.top-down.view.of.-") == ("template", "a.top-down.view.of.-")
    assert _factor_of("block=lighting=night,pitch=45") == ("block", "lighting=night,pitch=45")
    assert _factor_of("probe=scrambled") is None


# ------------------------------------------------------------------ thresholds and run ids


def test_human_thresholds_stay_out_of_runs_without_human_data(tmp_path):
    from harness.checks.thresholds import (
        Thresholds,
        human_thresholds,
        presentation_thresholds,
        search_thresholds,
    )
    from harness.human.audit import HumanInput
    from harness.run.options import AuditOptions
    from harness.run.session import AuditSession
    from tests._thresholds import default_thresholds

    gates = default_thresholds()
    assert set(human_thresholds()) <= set(gates)
    full = Thresholds.from_table(gates)
    # a plain smoke run gates neither human, search (no search block) nor presentation (no preset)
    left_out = {*human_thresholds(), *search_thresholds(), *presentation_thresholds()}
    plain = Thresholds.from_table({k: v for k, v in gates.items() if k not in left_out})
    without = AuditSession(AuditOptions(profile="smoke", thresholds=full))
    assert without.gate_thresholds.to_dict() == plain.without(("max_interaction_share", "max_block_sign_crossings")).to_dict()
    assert "min_human_agreement" not in without.gate_thresholds.for_evaluator("x")
    assert without.human.source() is None
    scale = write_panel(tmp_path / "panel.csv")
    human = AuditSession(AuditOptions(profile="smoke", thresholds=full, human=HumanInput(tmp_path / "panel.csv", scale)))
    assert human.gate_thresholds.for_evaluator("x")["max_human_agreement_drop"] == gates["max_human_agreement_drop"]
    assert human.human.source()["simulated"] is True


def test_run_id_depends_on_human_data_only_when_given():
    from harness.report.run_ids import derived_run_id

    args = {"profile": "smoke", "plan": "p", "evaluators": {"e": "h"}, "renderer": "r", "bootstrap": 1,
            "seed": 2, "thresholds": {}}
    assert derived_run_id(**args) == derived_run_id(**args, human=None)
    assert derived_run_id(**args) != derived_run_id(**args, human={"sha256": "ab"})


# ------------------------------------------------------------ audit-level known answers


def test_simulated_panel_recovers_alpha_and_ceiling_through_the_audit_session(tmp_path):
    """36 scenes (the default profile's 6 prompts): the prompt-block intervals of the recovered
    alpha and noise ceiling cover the planted reliability (2 prompts are too few for that)."""
    from harness.evaluators.reference.specs import companion_spec
    from harness.human.audit import HumanInput
    from harness.run.options import AuditOptions
    from harness.run.session import AuditSession

    scale = write_panel(tmp_path / "panel.csv", profile="default")
    options = AuditOptions(profile="default", evaluators=("companion",), cache_dir=tmp_path / "cache",
                           report_dir=tmp_path / "reports", bootstrap=400,
                           human=HumanInput(tmp_path / "panel.csv", scale))
    session = AuditSession(options, extra_evaluators=[companion_spec()])
    found = session.human.agreement("companion")
    assert found["join"]["joined"] == 36 and found["human"]["raters"] == RATERS
    a_lo, a_hi = found["human"]["ci"]["krippendorff_alpha_interval"]
    assert a_lo <= RELIABILITY <= a_hi, (a_lo, a_hi)
    c_lo, c_hi = found["noise_ceiling_ci"]
    assert c_lo <= noise_ceiling(RELIABILITY, RATERS) <= c_hi, (c_lo, c_hi)
    # the companion is protocol-invariant: every factor's agreement equals c0's
    assert all(abs(f["max_drop"]) < 1e-9 for f in found["factors"].values())
    card = session.cards.card("companion")
    assert card["human_agreement"]["data"]["sha256"] == found["source"]["sha256"]


CONFTEST = """
from dataclasses import replace

from harness.evaluators.reference.specs import planted_specs


def pytest_audit_evaluators(config):
    base = next(s for s in planted_specs() if s.id == "planted-pitch")
    return [replace(base, id="planted-pitch90", options=(("effect", "planted-pitch90"),),
                    model_name="companion + pitch-90 collapse")]
"""

PYPROJECT = """
[tool.pytest.ini_options]
testpaths = ["audit_tests"]

[tool.t3d-audit]
profile = "smoke"
evaluators = ["planted-pitch90", "planted-robust", "companion"]
bootstrap = 200

[tool.t3d-audit.thresholds]
peak_rho_max = 1.0
min_human_agreement = 0.3
max_human_agreement_drop = 0.1
"""


def _project(pytester) -> Path:
    import shutil

    from harness.core.paths import REPO_ROOT

    root = pytester.path
    shutil.copytree(REPO_ROOT / "audit_tests", root / "audit_tests")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pyproject.toml").write_text(PYPROJECT)
    return root


def _run(pytester, tag: str, *args: str):
    return pytester.runpytest_subprocess(
        "audit_tests", "-p", "no:cacheprovider", f"--audit-cache-dir={pytester.path / 'cache'}",
        f"--audit-report-dir={pytester.path / ('reports-' + tag)}", *args, timeout=600,
    )


def _human_results(report: Path) -> dict[str, str]:
    results = json.loads((report / "results.json").read_text())["results"]
    return {r["test"].split("::", 1)[1]: r["outcome"] for r in results if "test_human_agreement" in r["test"]}


@pytest.mark.slow
def test_planted_pitch90_fails_exactly_its_pitch_stability_check(pytester, monkeypatch):
    """On the default profile's 6 prompts, the fewest on which the interval policy confirms a
    drop (on smoke's 2 the stability checks are not confirmable, and skip)."""
    from harness.cards.card_format import validate_card

    monkeypatch.setenv("PYTHONHASHSEED", "0")
    root = _project(pytester)
    scale = write_panel(root / "panel.csv", profile="default")
    human = [f"--audit-human={root / 'panel.csv'}", f"--audit-human-scale={scale}", "--audit-profile=default"]
    outcomes = {}
    for workers in ("0", "2"):
        result = _run(pytester, f"n{workers}", "-n", workers, *human)
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-2000:]
        (report,) = [p for p in (root / f"reports-n{workers}").iterdir() if not p.name.startswith(".")]
        outcomes[workers] = _human_results(report)
    assert outcomes["0"] == outcomes["2"]
    failed = sorted(t for t, o in outcomes["0"].items() if o == "failed")
    assert failed == ["test_human_agreement_stability[planted-pitch90-pitch]"], outcomes["0"]
    assert all(o == "passed" for t, o in outcomes["0"].items() if t not in failed)
    assert len(outcomes["0"]) == 3 + 3 * 8  # every evaluator, every factor of the profile
    card = json.loads((report / "cards" / "planted-pitch90.json").read_text())
    validate_card(card)
    figures = card["human_agreement"]
    assert figures["data"]["simulated"] is True and figures["data"]["raters"] == RATERS
    assert figures["factors"]["pitch"]["worst_level"] == "90"
    from harness.report.ranking import build_leaderboard  # the leaderboard shows the agreement

    ranked = {r.evaluator: r for r in build_leaderboard([report]).rows}
    assert ranked["planted-pitch90"].human_spearman == figures["c0"]["spearman"]
    page = (report / "report.html").read_text()
    assert '<section id="humans">' in page and "SIMULATED panel" in page
    assert "Agreement by level, per factor" in page
    # without human data: the same checks are not-applicable skips, and the run id is unchanged
    plain = _run(pytester, "plain", "-n", "0", "-rs")
    (plain_report,) = [p for p in (root / "reports-plain").iterdir() if not p.name.startswith(".")]
    assert set(_human_results(plain_report).values()) == {"skipped"}
    plain.stdout.fnmatch_lines([
        "*SKIPPED [[]3[]] audit_tests/test_human_agreement.py:*: not applicable: no human ratings given (--audit-human)",
        "*SKIPPED [[]24[]] audit_tests/test_human_agreement.py:*: not applicable: no human ratings given (--audit-human)",
    ])
    manifest = json.loads((plain_report / "manifest.json").read_text())
    assert "human" not in manifest["options"]
    assert "min_human_agreement" not in json.dumps(manifest["options"]["thresholds"])
    assert "human_agreement" not in json.loads((plain_report / "cards" / "companion.json").read_text())
    assert plain_report.name != report.name


@pytest.mark.parametrize(
    "args, problem",
    [
        (["--audit-human=missing.csv", "--audit-human-scale=1-5"], "file not found"),
        (["--audit-human=bad.csv"], "needs its scale"),
        (["--audit-human=bad.csv", "--audit-human-scale=5-1"], "invalid scale"),
        (["--audit-human=bad.csv", "--audit-human-scale=1-5"], "outside the declared scale"),
        (["--audit-human-scale=1-5"], "needs --audit-human"),
    ],
)
def test_bad_human_inputs_exit_4_before_any_work(pytester, args, problem):
    root = _project(pytester)
    (root / "bad.csv").write_text("generator,prompt_id,rater,rating\nfaithful,bar-03,r1,7\n")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider", *args, timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert problem in result.stderr.str(), result.stderr.str()[-800:]


# ----------------------------------------------------------------------------- compare


def _planted_records(name: str, profile: str):
    from dataclasses import replace

    from harness.evaluators.reference.scene_measure import measure_scenes
    from harness.evaluators.reference.specs import planted_specs
    from harness.measure.plan import build_plan
    from harness.protocol.profiles import get_profile
    from harness.scenes.scene_source import load_scene_set

    prof = get_profile(profile)
    scenes = load_scene_set(None).select(prompts=prof.prompts, generators=prof.generators)
    base = next(s for s in planted_specs() if s.id == "planted-pitch")
    spec = replace(base, id="release", options=(("effect", name),))
    return measure_scenes(spec, build_plan(scenes, prof))


@pytest.fixture(scope="module")
def releases():
    """(before, after, human): planted-robust then planted-pitch90 records on the default
    profile's 36 scenes, and the companion's c0 scores as the (noise-free) human means."""
    from tests._human_panel import companion_c0

    truth = companion_c0("default")
    human = {(g, p): s for g, p, s in zip(truth["generator"], truth["prompt_id"], truth["score"], strict=True)}
    return _planted_records("planted-robust", "default"), _planted_records("planted-pitch90", "default"), human


def test_compare_a_release_that_loses_human_agreement_regresses(releases):
    from harness.release.comparison import REGRESSION, compare_records, human_kinds

    before, after, human = releases
    plain = compare_records(before, after, baseline_evaluator="release", candidate_evaluator="release",
                            bootstrap=400)
    assert not {m.kind for m in plain.metrics} & set(human_kinds())
    assert not set(plain.margins) & set(human_kinds())  # runs without ratings: documents unchanged
    got = compare_records(before, after, baseline_evaluator="release", candidate_evaluator="release",
                          bootstrap=400, human=human)
    by = {m.metric: m for m in got.metrics}
    assert by["human_agreement"].difference == pytest.approx(0.0)  # c0 is untouched
    assert by["human_agreement_drop-pitch"].verdict == REGRESSION
    assert by["human_agreement_drop-pitch"].baseline == pytest.approx(0.0, abs=1e-12)
    assert by["human_agreement_drop-pitch"].candidate > 0.3
    assert all(by[f"human_agreement_drop-{f}"].verdict != REGRESSION for f in ("lighting", "template", "yaw"))


def test_compare_command_reads_human_ratings(releases, tmp_path, capsys):
    from harness.cli import main
    from harness.protocol.records import write_records

    before, after, human = releases
    write_records(before, tmp_path / "before.csv")
    write_records(after, tmp_path / "after.csv")
    rows = ["generator,prompt_id,rater,rating"] + [
        f"{g},{p},r{k},{s + 0.01 * k!r}" for (g, p), s in human.items() for k in range(2)]
    (tmp_path / "human.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "none.toml").write_text("")  # a named --config must exist; an empty one sets no margin
    base = ["compare", str(tmp_path / "before.csv"), str(tmp_path / "after.csv"), "--bootstrap", "200",
            "--json", "--config", str(tmp_path / "none.toml")]
    code = main([*base, "--human", str(tmp_path / "human.csv"), "--human-scale", "0-2"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and "human_agreement_drop-pitch" in json.dumps(doc)
    assert main([*base, "--human", str(tmp_path / "human.csv"), "--human-scale", "2-0"]) == 2
    assert "--human-scale" in capsys.readouterr().err


# ------------------------------------------------------------------------------- the page


def _card_figures(file: str, level: str) -> dict:
    return {
        "data": {"file": file, "sha256": "ab" * 32, "raters": 3, "items": 12, "dimension": "<i>overall</i>",
                 "krippendorff_alpha_interval": 0.8, "krippendorff_alpha_interval_ci": [0.7, 0.9],
                 "noise_ceiling": 0.95, "noise_ceiling_ci": [0.9, 0.97], "simulated": False},
        "statistic": "pearson", "joined_items": 12,
        "c0": {"pearson": 0.76, "pearson_ci": [0.6, 0.85], "spearman": 0.7, "kendall_tau_b": 0.5,
               "pairwise_accuracy": 0.7},
        "factors": {"pitch": {"levels": {level: 0.1, "45": 0.7}, "envelope": [0.1, 0.7], "max_drop": 0.66,
                              "max_drop_ci": [0.5, 0.7], "worst_level": level}},
        "best_configuration": {"configuration": f"pitch={level}", "selection_pearson": 0.9,
                               "confirmation_pearson": 0.8, "c0_confirmation_pearson": 0.7, "confirmed": True},
    }


def test_humans_section_escapes_every_value_and_shows_ceiling_and_levels():
    from types import SimpleNamespace

    from harness.report.html.page import _humans

    hostile = '<script>alert(1)</script>"onload=x'
    data = SimpleNamespace(cards={"ev": {"human_agreement": _card_figures(hostile + ".csv", hostile)},
                                  "plain": {"card_id": "x"}})
    page = _humans(data)
    assert "<script>" not in page and "<i>" not in page and 'onload=x"' not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Human ratings:" in page and "SIMULATED" not in page
    assert ">0.76<" in page and ">0.95<" in page and ">80%<" in page  # r, ceiling, share of it
    assert "0.66 [0.5, 0.7]" in page and "confirmed" in page
    assert 'style=' not in page and "onclick" not in page  # nothing the hash-based CSP would block
    assert _humans(SimpleNamespace(cards={"plain": {"card_id": "x"}})) == ""


# --------------------------------------------------------------------------- properties


@given(st.lists(st.floats(-1, 1), min_size=2, max_size=6), st.integers(0, 5))
def test_largest_drop_is_c0_minus_the_envelope_minimum(levels, n_draws):
    rng = np.random.default_rng(n_draws)
    point = np.array([0.5, *levels])
    draws = np.vstack([point, rng.uniform(-1, 1, (n_draws, point.size))])
    confs = ["c0", *[f"f={i}" for i in range(len(levels))]]
    out = hp.factor_envelopes(draws, confs, {c: ("f", c[2:]) for c in confs[1:]}, "c0")["f"]
    assert out["max_drop"] == pytest.approx(0.5 - min(levels))
    assert out["envelope"] == [pytest.approx(min(levels)), pytest.approx(max(levels))]
    lo, hi = out["max_drop_ci"]
    if n_draws >= 2:
        assert lo <= hi
    else:  # one draw has no spread: no interval rather than a zero-width one
        assert lo is None and hi is None


def test_pyproject_and_ini_forms_are_read_and_checked_alike(pytester):
    root = _project(pytester)
    scale = write_panel(root / "panel.csv")
    text = (root / "pyproject.toml").read_text()
    good = text.replace('bootstrap = 200\n', f'bootstrap = 200\nhuman = "panel.csv"\nhuman_scale = "{scale}"\n')
    (root / "pyproject.toml").write_text(good)
    ok = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider", timeout=120)
    assert ok.ret == pytest.ExitCode.OK, ok.stdout.str()[-800:]
    ok.stdout.fnmatch_lines(["*test_human_agreement_stability?planted-pitch90-pitch?*"])
    (root / "pyproject.toml").write_text(good.replace(f'human_scale = "{scale}"\n', ""))
    bad = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider", timeout=120)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR and "needs its scale" in bad.stderr.str()
    ini = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider",
                                        "-o", "audit_human_scale=9-1", timeout=120)
    assert ini.ret == pytest.ExitCode.USAGE_ERROR and "invalid scale" in ini.stderr.str()


RELEASE_CONFTEST = """
import os
from dataclasses import replace

from harness.evaluators.reference.specs import planted_specs


def pytest_audit_evaluators(config):
    base = next(s for s in planted_specs() if s.id == "planted-pitch")
    effect = os.environ["T3D_RELEASE_EFFECT"]
    return [replace(base, id="release", options=(("effect", effect),), model_name=effect)]
"""


@pytest.mark.slow
def test_audit_baseline_gates_human_agreement_as_a_metric(pytester, monkeypatch):
    root = _project(pytester)
    (root / "conftest.py").write_text(RELEASE_CONFTEST)
    (root / "pyproject.toml").write_text(PYPROJECT.replace(
        'evaluators = ["planted-pitch90", "planted-robust", "companion"]', 'evaluators = ["release"]'))
    scale = write_panel(root / "panel.csv")
    human = [f"--audit-human={root / 'panel.csv'}", f"--audit-human-scale={scale}"]
    monkeypatch.setenv("T3D_RELEASE_EFFECT", "planted-robust")
    first = _run(pytester, "v1", "-n", "0", *human)
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()[-1500:]
    (v1,) = [p for p in (root / "reports-v1").iterdir() if not p.name.startswith(".")]
    monkeypatch.setenv("T3D_RELEASE_EFFECT", "planted-pitch90")
    second = _run(pytester, "v2", "-n", "0", f"--audit-baseline={v1}", *human)
    assert second.ret == pytest.ExitCode.TESTS_FAILED
    second.stdout.fnmatch_lines(["FAILED audit_tests/test_regression.py::test_no_regression[[]release-human_agreement_drop-pitch[]]*"])
    text = second.stdout.str()
    assert "test_no_regression[release-human_agreement]" not in text.split("short test summary info")[1]
    assert "human_agreement_drop-pitch of release regressed against baseline release: 0 →" in text
