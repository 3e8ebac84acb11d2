"""``t3d-audit validate --deep``: the raw scores are the only trust root.

Each attack edits a report file *and rehashes the manifest* with the project's own manifest
code, so the hash check alone passes; ``--deep`` recomputes the derived files from ``scores/``
and the manifest's run options and must name what was changed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.cards.card_format import card_id
from harness.cards.provenance import (
    load_manifest,
    manifest_problems,
    output_entries,
    write_manifest,
)
from harness.core.errors import CardError
from harness.report.html.page import build_html
from harness.report.validation import check_report, validate_report
from harness.report.writer import add_repeatability, write_derived, write_report
from harness.run.options import AuditOptions
from harness.run.outputs import run_result
from harness.run.session import AuditSession
from harness.testing import BoxRasterizer

PLANTED = ("planted-robust", "planted-bow", "companion")


def rehash(report: Path) -> None:
    """What an attacker who edits files does next: rewrite the manifest's output hashes."""
    manifest = load_manifest(report)
    manifest["outputs"] = output_entries(report)
    write_manifest(manifest, report)


def edit_manifest(report: Path, change) -> None:
    """Edit manifest.json as an attacker's tool would: plain ``json.dumps``, which also writes
    the ``Infinity`` tokens the harness's own writer refuses."""
    manifest = load_manifest(report)
    change(manifest)
    (report / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def _session(tmp: Path) -> AuditSession:
    options = AuditOptions(
        profile="smoke",
        evaluators=PLANTED,
        cache_dir=tmp / "cache",
        report_dir=tmp / "reports",
        bootstrap=20,
    )
    return AuditSession(options, renderer_factory=lambda _: BoxRasterizer())


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A real report of two planted evaluators and the symbolic companion (smoke profile)."""
    tmp = tmp_path_factory.mktemp("deep")
    session = _session(tmp)
    full = write_report(run_result(session, sorted(session.inputs.specs)), []).directory
    without_companion = write_report(run_result(session, ["planted-bow", "planted-robust"]), []).directory
    return session, full, without_companion


@pytest.fixture
def copy(tmp_path, written):
    target = tmp_path / "report"
    shutil.copytree(written[1], target)
    return target


def _lines(report: Path, figures: bool = False) -> str:
    """--deep's problems; figures are redrawn only where a test is about them (2 s each time)."""
    return "\n".join(validate_report(report, deep=True, figures=figures))


def test_an_untouched_report_is_valid_when_recomputed(written):
    problems, notes = check_report(written[1], deep=True)
    assert problems == []
    assert notes == []  # figures compared too: the same matplotlib wrote them


def test_a_truncated_summary_passes_the_hashes_but_not_deep(copy):
    data = (copy / "summary.json").read_bytes()
    (copy / "summary.json").write_bytes(data[: len(data) // 2])
    rehash(copy)
    assert validate_report(copy) == []  # the gap --deep closes
    assert "summary.json: not valid JSON" in _lines(copy, figures=True)


def test_an_edited_summary_value_is_named_by_key(copy):
    summary = json.loads((copy / "summary.json").read_text())
    summary["evaluators"]["planted-bow"]["peak_rho"] = 0.5
    (copy / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    rehash(copy)
    assert validate_report(copy) == []
    assert "summary.json#/evaluators/planted-bow/peak_rho: 0.5 on disk, recomputed" in _lines(copy)


def test_an_edited_repeatability_in_the_summary_is_named_by_key(copy):
    summary = json.loads((copy / "summary.json").read_text())
    assert summary["evaluators"]["planted-bow"]["repeatability"]["max_abs_diff"] == 0.0
    summary["evaluators"]["planted-bow"]["repeatability"]["max_abs_diff"] = 0.25
    (copy / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    rehash(copy)
    assert validate_report(copy) == []
    assert "summary.json#/evaluators/planted-bow/repeatability/max_abs_diff: 0.25 on disk" in _lines(copy)


@pytest.mark.parametrize("suffix", [".md", ".csv"])
def test_an_edited_table_cell_is_flagged(copy, suffix):
    path = copy / "tables" / f"table02_evaluators{suffix}"
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if "planted-bow" in line)
    lines[row] = lines[row].replace("planted-bow", "planted-b0w")
    path.write_text("".join(lines))
    rehash(copy)
    assert validate_report(copy) == []
    assert f"tables/table02_evaluators{suffix}: line {row + 1} is" in _lines(copy)


def test_a_deleted_or_added_table_file_is_flagged(copy):
    (copy / "tables" / "table14_rho.csv").unlink()
    (copy / "tables" / "extra.md").write_text("| made up |\n")
    rehash(copy)
    out = _lines(copy)
    assert "tables/table14_rho.csv: missing (recomputed from scores/)" in out
    assert "tables/extra.md: not a file the report's scores give" in out


def test_a_card_edited_and_reissued_with_a_fresh_id_is_flagged(copy):
    path = copy / "cards" / "planted-robust.json"
    card = json.loads(path.read_text())
    card["score_uncertainty"]["peak_rho"] = 0.01
    card["card_id"] = card_id(card)
    path.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    rehash(copy)
    assert validate_report(copy) == []  # schema and id are self-consistent
    assert "cards/planted-robust.json#/score_uncertainty/peak_rho: 0.01 on disk" in _lines(copy)


def test_a_dropped_evaluator_is_flagged(copy):
    for rel in ("cards/planted-bow.json", "scores/planted-bow.csv"):
        (copy / rel).unlink()
    rehash(copy)  # its manifest output entries are gone too
    assert validate_report(copy) == []  # coverage and cards agree with the remaining files
    out = _lines(copy)
    assert "scores/: evaluators ['companion', 'planted-robust'] differ from manifest.json#/options/evaluators" in out
    assert "cards/: evaluators ['companion', 'planted-robust'] differ" in out
    assert "summary.json#/evaluators/planted-bow: not in the recomputed file" in out


def test_a_replaced_figure_is_flagged(copy):
    shutil.copyfile(copy / "figures" / "dispersion.png", copy / "figures" / "peak_rho.png")
    rehash(copy)
    assert validate_report(copy) == []
    out = _lines(copy, figures=True)
    assert "figures/peak_rho.png: differs from the figure redrawn from the recomputed summary" in out
    assert "dispersion.png" not in out


def test_a_dropped_evaluator_is_flagged_even_when_everything_else_is_rewritten(copy, written):
    """The thorough attacker: drops the evaluator from the options, results and cards, and
    rewrites summary/tables/figures from the remaining scores. The run id gives it away."""
    session = written[0]
    for rel in ("cards/planted-bow.json", "scores/planted-bow.csv"):
        (copy / rel).unlink()
    keep = ["companion", "planted-robust"]
    for sub in ("tables", "figures"):
        shutil.rmtree(copy / sub)
    summary, _ = write_derived(session.summary_cache.panel_result(keep), copy)
    facts = json.loads((copy / "manifest.json").read_text())["options"]["card_facts"]
    add_repeatability(summary, {"evaluators": {ev: facts["evaluators"][ev] for ev in keep}}, copy)
    results = json.loads((copy / "results.json").read_text())
    results["evaluators"] = keep
    (copy / "results.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")

    def drop(manifest):
        del manifest["options"]["evaluators"]["planted-bow"]
        del manifest["options"]["card_facts"]["evaluators"]["planted-bow"]

    edit_manifest(copy, drop)
    (copy / "report.html").write_text(build_html(copy), encoding="utf-8")  # the page too
    rehash(copy)
    assert validate_report(copy) == []
    problems = validate_report(copy, deep=True, figures=False)
    assert len(problems) == 1 and problems[0].startswith("manifest.json#/run_id:"), problems


def test_an_edited_run_option_is_flagged(copy):
    edit_manifest(copy, lambda m: m["options"].update(seed=7))
    out = _lines(copy)
    assert "manifest.json#/run_id:" in out
    assert "summary.json#/" in out  # the statistics under seed 7 differ


def test_render_host_is_never_compared(copy):
    edit_manifest(copy, lambda m: m.update(render_host={"cpu_model": "another CPU", "cycles_device": "CPU"}))
    assert check_report(copy, deep=True, figures=False)[0] == []


def test_without_the_companion_scores_cards_are_compared_apart_from_the_companion_fields(written):
    problems, notes = check_report(written[2], deep=True, figures=False)
    assert problems == []
    assert any("planted-bow.json: card_id, companion_check" in n and "scores/companion.csv" in n for n in notes)


def test_a_report_from_before_card_facts_cannot_be_rebuilt(copy):
    edit_manifest(copy, lambda m: m["options"].pop("card_facts"))
    assert "manifest.json#/options/card_facts: missing" in _lines(copy)


def test_cli_exit_status_and_lines(copy, capsys):
    from harness.cli import main

    (copy / "summary.json").write_text("{}\n")
    rehash(copy)
    assert main(["validate", str(copy)]) == 0
    capsys.readouterr()
    assert main(["validate", "--deep", "--skip-figures", str(copy)]) == 1
    out = capsys.readouterr().out
    assert f"{copy}: summary.json#/evaluators: missing (recomputed" in out


# ----------------------------------------------------------------------------- malformed manifests

MALFORMED = [
    ("options is a list", lambda m: m.update(options=[]), "manifest.json#/options: [] is not of type 'object'"),
    ("no profile", lambda m: m["options"].pop("profile"), "manifest.json#/options: 'profile' is a required property"),
    ("bootstrap as text", lambda m: m["options"].update(bootstrap="20"),
     "manifest.json#/options/bootstrap: '20' is not of type 'integer'"),
    ("negative seed", lambda m: m["options"].update(seed=-1),
     "manifest.json#/options/seed: -1 is less than the minimum of 0"),
    ("evaluators as a list", lambda m: m["options"].update(evaluators=["a"]),
     "manifest.json#/options/evaluators: ['a'] is not of type 'object'"),
    ("thresholds without base", lambda m: m["options"]["thresholds"].pop("base"),
     "manifest.json#/options/thresholds: 'base' is a required property"),
    ("outputs as an object", lambda m: m.update(outputs={}), "manifest.json#/outputs: {} is not of type 'array'"),
    ("an output without sha256", lambda m: m["outputs"][0].pop("sha256"),
     "manifest.json#/outputs/0: 'sha256' is a required property"),
    ("source is null", lambda m: m.update(source=None), "manifest.json#/source: None is not of type 'object'"),
    ("no run id", lambda m: m.pop("run_id"), "manifest.json#/: 'run_id' is a required property"),
    ("card facts as a string", lambda m: m["options"].update(card_facts="x"),
     "manifest.json#/options/card_facts: 'x' is not of type 'object'"),
    ("render host as a list", lambda m: m.update(render_host=[]),
     "manifest.json#/render_host: [] is not of type 'object', 'null'"),
    ("another schema", lambda m: m.update(schema="t3d-audit-manifest/0"),
     "manifest.json#/schema: manifest schema is 't3d-audit-manifest/0', expected t3d-audit-manifest/1"),
]


@pytest.mark.parametrize(("change", "line"), [pytest.param(c, line, id=name) for name, c, line in MALFORMED])
@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_a_malformed_manifest_field_gives_one_clear_line(copy, change, line, deep):
    edit_manifest(copy, change)
    problems = validate_report(copy, deep=deep, figures=False)
    assert line in problems, problems


@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_an_unknown_profile_is_a_line_not_a_traceback(copy, deep):
    edit_manifest(copy, lambda m: m["options"].update(profile="nope"))
    problems = validate_report(copy, deep=deep, figures=False)
    assert any(p.startswith("manifest.json#/options/profile: unknown profile 'nope'") for p in problems), problems


def test_nan_in_a_manifest_is_not_json(copy):
    text = (copy / "manifest.json").read_text().replace('"seed": 42', '"seed": NaN')
    (copy / "manifest.json").write_text(text)
    problems = validate_report(copy, deep=True, figures=False)
    assert any("manifest.json is not JSON: NaN is not a JSON number" in p for p in problems), problems


def test_a_manifest_that_is_not_an_object(copy):
    (copy / "manifest.json").write_text("[1, 2]\n")
    assert "manifest.json#/: a manifest is a JSON object, got list" in validate_report(copy, deep=True)


def test_read_manifest_raises_a_typed_error_naming_the_field(copy):
    from harness.cards.provenance import read_manifest
    from harness.core.errors import CardError

    edit_manifest(copy, lambda m: m["options"].update(seed=1.5))
    with pytest.raises(CardError, match=r"manifest.json#/options/seed: 1.5 is not of type 'integer'"):
        read_manifest(copy)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    | st.sampled_from(["smoke", "nope", "a" * 64]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
PATHS = [
    ("schema",), ("run_id",), ("source",), ("packages",), ("options",), ("inputs",), ("outputs",),
    ("render_host",), ("options", "profile"), ("options", "bootstrap"), ("options", "seed"),
    ("options", "evaluators"), ("options", "thresholds"), ("options", "card_facts"),
    ("options", "run_id_explicit"), ("options", "renderer"), ("options", "plan_sha256"),
]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), value=JSON)
@example(path=("options", "seed"), value=float("inf"))  # regression: Infinity in a hand-edited file
@example(path=("options", "bootstrap"), value=-float("inf"))
@example(path=("options", "bootstrap"), value=2**70)  # regression: numpy's dimension limit crashed
@example(path=("options", "seed"), value=2**70)
@example(path=("options", "seed"), value=0.0)  # regression: a float seed crashed the bootstrap
@example(path=("options", "bootstrap"), value=2.0)
def test_any_replaced_manifest_field_gives_lines_never_a_traceback(written, tmp_path_factory, path, value):
    report = tmp_path_factory.mktemp("fuzz") / "report"
    shutil.copytree(written[1], report)

    def change(manifest):
        target = manifest
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    edit_manifest(report, change)
    try:
        doc = load_manifest(report)
    except CardError:  # not JSON at all (e.g. an Infinity token): one line, never a traceback
        doc = None
    problems = validate_report(report, deep=True, figures=False)  # must not raise
    assert all(isinstance(p, str) and p for p in problems)
    if doc is None or manifest_problems(doc):
        assert problems


def test_recomputed_numbers_that_differ_only_in_their_last_bits_are_the_same(tmp_path):
    """Regression: the simultaneous band's q95 computed in an xdist worker and again in this
    process (another BLAS thread count) differed in its last bit, and validate --deep failed."""
    from harness.report.rebuild import compare_file

    disk, rebuilt = tmp_path / "disk.json", tmp_path / "rebuilt.json"
    rebuilt.write_text('{"simultaneous": {"q95": 2.7734232328286454, "B": 2000}}')
    disk.write_text('{"simultaneous": {"q95": 2.7734232328286463, "B": 2000}}')
    assert compare_file("summary.json", disk, rebuilt) == []
    disk.write_text('{"simultaneous": {"q95": 2.7734242328286463, "B": 2000}}')  # 4e-7 relative: a change
    (changed,) = compare_file("summary.json", disk, rebuilt)
    assert changed.startswith("summary.json#/simultaneous/q95: 2.77342423") and "recomputed 2.77342323" in changed
    disk.write_text('{"simultaneous": {"q95": 2.7734232328286454,  "B": 2000}}')  # same values, other bytes
    assert compare_file("summary.json", disk, rebuilt) == [
        "summary.json: bytes differ from the file recomputed from scores/ (same JSON values)"]
    disk.write_text('{"simultaneous": {"q95": 2.7734232328286454, "B": 2000.0}}')  # an int became a float
    assert compare_file("summary.json", disk, rebuilt) != []
