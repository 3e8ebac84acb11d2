"""Re-verify a report directory (``t3d-audit validate``; the leaderboard verifies each run with
it before ranking). Each problem is one line naming the file.

Checks: the manifest (every output present, its sha256 unchanged, nothing unlisted); every card
(schema v1.0, id matches content, one card per raw score file, ids quoted in results.json match);
the coverage of the raw score files (every evaluator × scene × level of the run's profile present,
no duplicate measurement, the same measurement keys for every evaluator); prompts consistent;
caption sets deduplicated; and failures recorded as failures (NaN score, status failed). A
malformed manifest gives one line per bad field. ``deep``: also recompute everything from the raw
score files and compare (:mod:`harness.report.rebuild`).
"""

from __future__ import annotations

import math
from pathlib import Path

from harness.core.bounded_input import read_report_json as read_json
from harness.vocab.factors import PARAPHRASE, TEMPLATE

KEY = ["evaluator", "generator", "prompt_id", "factor", "level"]


def _check_manifest(report: Path) -> tuple[list[str], dict[str, object] | None]:
    """Shape problems (one line per bad field) and output-hash problems; the manifest when its
    shape is sound, else ``None`` (nothing downstream reads an unsound one)."""
    from harness.cards.provenance import load_manifest, manifest_problems, verify_outputs
    from harness.core.errors import AuditError

    try:
        manifest = load_manifest(report)
    except AuditError as exc:
        return [str(exc)], None
    shape = manifest_problems(manifest)
    if shape:
        return shape, None
    from harness.report.rebuild import profile_problems

    problems = [f"manifest.json: {p}" for p in verify_outputs(report, manifest)]
    return problems + profile_problems(manifest), manifest


def _check_cards(report: Path, evaluators: set[str]) -> tuple[list[str], dict[str, str]]:
    from harness.cards import read_report_cards

    problems, cards = read_report_cards(report)
    ids = {ev: card["card_id"] for ev, card in cards.items()}
    for ev in sorted(evaluators - set(ids)):
        problems.append(f"cards/{ev}.json: missing (raw score file scores/{ev}.csv has no card)")
    _problems, doc = load_results(report)
    if doc is not None:
        for result in doc["results"]:
            for check in result.get("checks", []):
                quoted = check.get("card_id")
                if quoted and ids.get(check.get("evaluator")) not in (None, quoted):
                    problems.append(
                        f"results.json: {result['test']} quotes card {quoted[:24]}…, "
                        f"cards/{check['evaluator']}.json has {ids[check['evaluator']][:24]}…"
                    )
    return problems, ids


def load_results(report: Path) -> tuple[list[str], dict[str, object] | None]:
    """``results.json`` checked for shape: ``(problems, document or None)``."""
    path = report / "results.json"
    if not path.is_file():
        return ["results.json: missing"], None
    try:
        doc = read_json(path)
    except (OSError, ValueError) as exc:
        return [f"results.json: unreadable ({exc})"], None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        return ["results.json: not an object with a 'results' list"], None
    bad = [i for i, r in enumerate(doc["results"])
           if not (isinstance(r, dict) and isinstance(r.get("test"), str)
                   and isinstance(r.get("evaluator"), str) and isinstance(r.get("checks", []), list))]
    if bad:
        return [f"results.json#/results/{bad[0]}: not a result object (test, evaluator, checks)"], None
    return [], doc


def check_results(
    doc: dict[str, object], evaluators: set[str], expected: tuple[dict[str, tuple[str, ...]], tuple[str, ...]] | None
) -> list[str]:
    """Whether the results cover evaluators × audit tests × the profile's factors and probes.

    A partial run (``-k``, ``--lf``, ``-x``) that could not complete an earlier report is marked
    ``complete: false``; beyond that flag, every audit test function run for one evaluator
    must have run for all of them with the same parameters, and a test parametrized over the
    profile's probes or factors must cover all of them.
    """
    from harness.vocab.factors import shared_factor_names

    problems: list[str] = []
    if doc.get("complete") is not True:
        missing = doc.get("missing") or []
        what = (f"{len(missing)} collected audit tests have no result (first: {missing[0]})"
                if missing else f"the run selected part of the suite ({doc.get('selection')})"
                if "complete" in doc else "it does not say whether it is complete")
        problems.append(f"results.json: partial report: {what}; rerun the audit without -k/--lf")
    params: dict[str, dict[str, set[str]]] = {}
    for result in doc["results"]:
        ev = result["evaluator"]
        if ev == "panel":
            continue
        base, _, rest = result["test"].partition("[")
        rest = rest.rstrip("]").removeprefix(ev).lstrip("-")
        params.setdefault(base, {}).setdefault(ev, set()).add(rest)
    levels, probes = expected if expected is not None else ({}, ())
    for base, by_ev in sorted(params.items()):
        for ev in sorted(evaluators - set(by_ev)):
            problems.append(f"results.json: {base} has no result for evaluator {ev}")
        union = set().union(*by_ev.values())
        for ev, got in sorted(by_ev.items()):
            if got != union:
                problems.append(f"results.json: {base}[{ev}] lacks {sorted(union - got)[:3]}")
        named = union - {""}
        if named and named <= set(probes) and named != set(probes):
            problems.append(f"results.json: {base} lacks probes {sorted(set(probes) - named)}")
        if named and named <= set(levels):
            wanted = set(levels) if PARAPHRASE in named else set(levels) & set(shared_factor_names())
            if not wanted <= named:
                problems.append(f"results.json: {base} lacks factors {sorted(wanted - named)}")
    return problems


def read_scores(report: Path) -> tuple[list[str], object]:
    import pandas as pd

    from harness.core.errors import AuditError
    from harness.protocol.records import read_records

    frames, problems = [], []
    for path in sorted((report / "scores").glob("*.csv")):
        try:
            frame = read_records(path)
        except AuditError as exc:
            problems.append(str(exc))
            continue
        if set(frame["evaluator"]) != {path.stem}:
            problems.append(f"scores/{path.name}: rows of other evaluators {sorted(set(frame['evaluator']) - {path.stem})}")
        frames.append(frame)
    if not frames:
        return [*problems, "scores/: no raw score files"], None
    return problems, pd.concat(frames, ignore_index=True)


def _expected_levels(manifest: dict[str, object] | None) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]] | None:
    if manifest is None:
        return None
    from harness.core.errors import AuditError
    from harness.protocol.profiles import get_profile

    try:
        profile = get_profile(manifest["options"]["profile"])
    except AuditError:
        return None
    return dict(profile.levels), tuple(profile.probes)


def _expected_block_cells(manifest: dict[str, object] | None) -> tuple[str, ...]:
    """The ``block`` levels (factorial cells) the manifest's profile measures, in plan order."""
    if manifest is None:
        return ()
    from harness.core.errors import AuditError
    from harness.protocol.levels import cell_level
    from harness.protocol.profiles import get_profile

    try:
        profile = get_profile(manifest["options"]["profile"])
    except AuditError:
        return ()
    return tuple(cell_level(cell) for block in profile.blocks for cell in block.cells())


def check_coverage(
    records: object,
    expected: tuple[dict[str, tuple[str, ...]], tuple[str, ...]] | None,
    not_applicable: dict[str, list[str]] | None = None,
    block_cells: tuple[str, ...] = (),
    factors_not_applicable: dict[str, list[str]] | None = None,
) -> list[str]:
    """Coverage, consistency, deduplication and failure-encoding problems of a records table.

    ``not_applicable`` (``manifest.json#/options/probes_not_applicable``) maps
    ``"<generator>/<prompt_id>"`` to the probes that do not apply to that scene (they write no
    row, e.g. ``keep_half`` on a single object). ``block_cells``: the factorial cells (factor
    ``block``) every scene must have. ``factors_not_applicable``
    (``manifest.json#/options/factors_not_applicable``) maps a scene to the factors none of
    whose levels it has rows for (lighting on 3D Gaussian splats).
    """
    from harness.captions.paraphrase import normalise

    problems: list[str] = []
    dup = records.duplicated(KEY, keep=False)
    for row in records[dup].drop_duplicates(KEY).head(5).itertuples():
        problems.append(f"scores/{row.evaluator}.csv: duplicate measurement {row.generator}/{row.prompt_id} {row.factor}={row.level}")
    keysets = {
        ev: set(map(tuple, g[KEY[1:]].astype(str).to_numpy().tolist())) for ev, g in records.groupby("evaluator")
    }
    ref_ev = min(keysets)
    for ev, keys in sorted(keysets.items()):
        if keys != keysets[ref_ev]:
            missing = sorted(keysets[ref_ev] - keys)[:3]
            extra = sorted(keys - keysets[ref_ev])[:3]
            problems.append(f"scores/{ev}.csv: measurements differ from {ref_ev} (missing {missing}, extra {extra})")
    scenes = records[["generator", "prompt_id"]].drop_duplicates()
    generators, prompts = sorted(set(scenes["generator"])), sorted(set(scenes["prompt_id"]))
    if len(scenes) != len(generators) * len(prompts):
        problems.append(f"scores/: not every generator has every prompt ({len(scenes)} scenes for "
                        f"{len(generators)} generators × {len(prompts)} prompts)")
    if expected is not None:
        levels, probes = expected
        wanted = [("baseline", "c0")]
        wanted += [(f, lv) for f, lvs in levels.items() if f != PARAPHRASE for lv in lvs]
        wanted += [("probe", p) for p in probes]
        wanted += [("block", cell) for cell in block_cells]
        skip = {(g, p, "probe", probe) for cell, probes_na in (not_applicable or {}).items()
                for g, _, p in [cell.partition("/")] for probe in probes_na}  # fmt: skip
        skip |= {(g, p, factor, lv) for cell, names in (factors_not_applicable or {}).items()
                 for g, _, p in [cell.partition("/")] for factor in names
                 for lv in levels.get(factor, ())}  # fmt: skip
        for ev, keys in sorted(keysets.items()):
            for gen, pid in scenes.itertuples(index=False):
                for factor, level in wanted:
                    if (gen, pid, factor, level) not in keys and (gen, pid, factor, level) not in skip:
                        problems.append(f"scores/{ev}.csv: no {factor}={level} for {gen}/{pid}")
                        break
    bad = records[(records["status"] == "failed") & records["score"].notna()]
    for row in bad.head(3).itertuples():
        problems.append(f"scores/{row.evaluator}.csv: failed row {row.generator}/{row.prompt_id} {row.factor}={row.level} carries a score")
    ok = records[records["status"] == "ok"]
    if ok["score"].map(lambda v: not math.isfinite(float(v))).any():
        problems.append("scores/: an ok row has a missing or non-finite score")
    text = records[records["caption"] != ""]
    base = text[text["factor"] == "baseline"]
    for pid, group in base.groupby("prompt_id"):
        if group["caption"].nunique() > 1:
            problems.append(f"scores/: prompt {pid} has {group['caption'].nunique()} different baseline captions")
    for factor, norm in ((TEMPLATE, str), (PARAPHRASE, normalise)):
        part = text[text["factor"] == factor]
        for (ev, gen, pid), group in part.groupby(["evaluator", "generator", "prompt_id"]):
            captions = group["caption"].map(norm)
            if captions.duplicated().any():
                problems.append(f"scores/{ev}.csv: {factor} captions of {gen}/{pid} repeat "
                                f"{captions[captions.duplicated()].iloc[0]!r}")
    return problems


def check_report(report: Path, *, deep: bool = False, figures: bool = True) -> tuple[list[str], list[str]]:
    """``(problems, notes)`` of the report directory: problems empty means valid; notes say what
    ``deep`` could not compare and why (``figures=False``: figures are not redrawn)."""
    report = Path(report)
    if not report.is_dir():
        return [f"{report}: not a directory"], []
    problems, manifest = _check_manifest(report)
    score_problems, records = read_scores(report)
    problems += score_problems
    evaluators = set() if records is None else set(records["evaluator"])
    card_problems, _ = _check_cards(report, evaluators)
    problems += card_problems
    expected = _expected_levels(manifest)
    if records is not None:
        not_applicable = (manifest or {}).get("options", {}).get("probes_not_applicable")
        factors_na = (manifest or {}).get("options", {}).get("factors_not_applicable")
        problems += check_coverage(records, expected, not_applicable, _expected_block_cells(manifest),
                                   factors_na)
    result_problems, results = load_results(report)
    problems += result_problems
    if results is not None:
        problems += check_results(results, evaluators, expected)
    if not (report / "summary.json").is_file():
        problems.append("summary.json: missing")
    notes: list[str] = []
    if deep:
        from harness.report.rebuild import deep_check

        check = deep_check(report, manifest, figures=figures)
        problems += [p for p in check.problems if p not in problems]
        notes = check.notes
    return problems, notes


def validate_report(report: Path, *, deep: bool = False, figures: bool = True) -> list[str]:
    """Every problem found in the report directory (empty list: valid)."""
    return check_report(report, deep=deep, figures=figures)[0]
