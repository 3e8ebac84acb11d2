"""Recompute a report's derived files from its raw scores and compare (``validate --deep``).

Hashes in ``manifest.json`` only show that files are unchanged since the manifest was written;
whoever edits a file can rehash the manifest too. Here the raw score files (``scores/``) and
the run options recorded in ``manifest.json#/options`` are the only trust root: summary.json,
every table (Markdown + CSV), every card and, where the installed matplotlib is the one that
wrote them, the figures are recomputed with the writer's own functions
(:func:`harness.report.writer.write_derived`, :func:`harness.cards.assemble.assemble_card`) and
compared byte for byte with what is on disk. The evaluators named by the options, the score
files, the cards and results.json must agree, and a run id derived from the inputs must be the
one the report carries.

What the options cannot vouch for is not checked: an attacker who rewrites the options and
every file consistently (another bootstrap seed, say) has written a different, self-consistent
report. ``manifest.json#/render_host`` is never compared. ``report.html`` is rebuilt from the
report directory itself and compared byte for byte; ``thumbs/`` (copies of renders) only by hash.
"""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core import bounded_input
from harness.core.bounded_input import read_report_json as read_json
from harness.core.errors import AuditError
from harness.measure.audit_inputs import audit_result
from harness.protocol.records import read_records
from harness.stats.audit_stats import summary_with_intervals
from harness.stats.companion_agreement import records_agreement

if TYPE_CHECKING:
    import pandas as pd

MAX_KEYS = 5  # differing JSON keys listed per file


@dataclass
class DeepCheck:
    """Problems (the report is not what its scores and options give) and notes (what was not
    compared, and why)."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


#: Relative tolerance of a recomputed JSON number: the same statistic computed on another BLAS
#: thread count (an xdist worker against this process) can differ in its last bits (matrix
#: products sum in another order); anything larger is a difference.
FLOAT_REL_TOL = 1e-9


def _close_numbers(disk: object, rebuilt: object) -> bool:
    """Whether two JSON values are both non-bool numbers within :data:`FLOAT_REL_TOL`."""
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (disk, rebuilt))
    return numbers and math.isclose(float(disk), float(rebuilt), rel_tol=FLOAT_REL_TOL, abs_tol=0.0)


def json_differences(disk: object, rebuilt: object, pointer: str = "", *, tolerant: bool = False) -> Iterator[str]:
    """``<pointer>: <what differs>`` for every leaf where two JSON values differ (``tolerant``:
    numbers within :data:`FLOAT_REL_TOL` of each other do not)."""
    if isinstance(disk, dict) and isinstance(rebuilt, dict):
        for key in sorted(set(disk) | set(rebuilt), key=str):
            sub = f"{pointer}/{key}"
            if key not in disk:
                yield f"{sub}: missing (recomputed {_short(rebuilt[key])})"
            elif key not in rebuilt:
                yield f"{sub}: not in the recomputed file (on disk {_short(disk[key])})"
            else:
                yield from json_differences(disk[key], rebuilt[key], sub, tolerant=tolerant)
    elif isinstance(disk, list) and isinstance(rebuilt, list) and len(disk) == len(rebuilt):
        for i, (a, b) in enumerate(zip(disk, rebuilt, strict=True)):
            yield from json_differences(a, b, f"{pointer}/{i}", tolerant=tolerant)
    elif tolerant and type(disk) is type(rebuilt) and _close_numbers(disk, rebuilt):
        return
    elif disk != rebuilt or type(disk) is not type(rebuilt):
        yield f"{pointer or '/'}: {_short(disk)} on disk, recomputed {_short(rebuilt)}"


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def compare_file(rel: str, disk: Path, rebuilt: Path) -> list[str]:
    """Lines for one derived file: missing, differing keys (JSON) or first differing line."""
    if not disk.is_file():
        return [f"{rel}: missing (recomputed from scores/)"]
    got, want = disk.read_bytes(), rebuilt.read_bytes()
    if got == want:
        return []
    if rel.endswith(".json"):
        try:
            on_disk = bounded_input.loads(got, where=disk, limit=bounded_input.DEPTH_CEILING)
        except ValueError as exc:
            return [f"{rel}: not valid JSON ({exc}); differs from the file recomputed from scores/"]
        recomputed = json.loads(want)
        keys = list(json_differences(on_disk, recomputed, tolerant=True))
        if not keys and list(json_differences(on_disk, recomputed)):
            return []  # numbers differ only in their last bits
        lines = [f"{rel}#{k}" for k in keys[:MAX_KEYS]]
        if len(keys) > MAX_KEYS:
            lines.append(f"{rel}: {len(keys) - MAX_KEYS} more differing keys")
        return lines or [f"{rel}: bytes differ from the file recomputed from scores/ (same JSON values)"]
    if rel.endswith(".png"):
        return [f"{rel}: differs from the figure redrawn from the recomputed summary"]
    a = got.decode("utf-8", errors="replace").splitlines()
    b = want.decode("utf-8", errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x != y:
            return [f"{rel}: line {i} is {x[:60]!r}, recomputed {y[:60]!r}"]
    return [f"{rel}: {len(a)} lines on disk, {len(b)} recomputed"]


def compare_tree(report: Path, rebuilt: Path, sub: str) -> list[str]:
    """Compare every file under ``<report>/<sub>`` with ``<rebuilt>/<sub>`` (both ways)."""
    want = {p.relative_to(rebuilt).as_posix() for p in (rebuilt / sub).rglob("*") if p.is_file()}
    have = {p.relative_to(report).as_posix() for p in (report / sub).rglob("*") if p.is_file()}
    problems = []
    for rel in sorted(want):
        problems += compare_file(rel, report / rel, rebuilt / rel)
    for rel in sorted(have - want):
        problems.append(f"{rel}: not a file the report's scores give")
    return problems


def _set_problem(where: str, got: set[str], want: set[str]) -> list[str]:
    if got == want:
        return []
    return [f"{where}: evaluators {sorted(got)} differ from manifest.json#/options/evaluators "
            f"(missing {sorted(want - got)}, extra {sorted(got - want)})"]


def _evaluator_sets(report: Path, options: Mapping[str, object]) -> list[str]:
    want = set(options["evaluators"])
    problems = _set_problem("scores/", {p.stem for p in (report / "scores").glob("*.csv")}, want)
    problems += _set_problem("cards/", {p.stem for p in (report / "cards").glob("*.json")}, want)
    if "card_facts" in options:
        problems += _set_problem(
            "manifest.json#/options/card_facts/evaluators", set(options["card_facts"]["evaluators"]), want
        )
    return problems


def _results_problems(report: Path, manifest: Mapping[str, object]) -> list[str]:
    path = report / "results.json"
    try:
        doc = read_json(path)
    except FileNotFoundError:
        return ["results.json: missing"]
    except (OSError, ValueError) as exc:
        return [f"results.json: not JSON ({exc})"]
    if not isinstance(doc, dict):
        return ["results.json: not a JSON object"]
    problems = []
    if doc.get("run_id") != manifest["run_id"]:
        problems.append(f"results.json#/run_id: {doc.get('run_id')!r}, manifest.json has {manifest['run_id']!r}")
    listed = doc.get("evaluators")
    if not isinstance(listed, list) or not all(isinstance(e, str) for e in listed):
        problems.append("results.json#/evaluators: not a list of evaluator ids")
    else:
        problems += _set_problem("results.json#/evaluators", set(listed), set(manifest["options"]["evaluators"]))
    return problems


def _run_id_problems(manifest: Mapping[str, object]) -> list[str]:
    from harness.report.run_ids import derived_run_id

    options = manifest["options"]
    if options.get("run_id_explicit", False):
        return []
    derived = derived_run_id(
        profile=options["profile"],
        plan=options["plan_sha256"],
        evaluators=dict(options["evaluators"]),
        renderer=options["renderer"],
        bootstrap=options["bootstrap"],
        seed=options["seed"],
        thresholds=options["thresholds"],
        human=options.get("human"),
        saved_levels=options.get("saved_levels"),
    )
    if derived != manifest["run_id"]:
        return [f"manifest.json#/run_id: {manifest['run_id']!r}, but the options give {derived!r} "
                "(an evaluator, threshold or setting was changed after the run)"]
    return []


def _figures_note(manifest: Mapping[str, object]) -> str | None:
    """Why figures are not compared here, or ``None`` when they are."""
    try:
        here = metadata.version("matplotlib")
    except metadata.PackageNotFoundError:
        return "figures/ not compared: matplotlib is not installed here"
    there = manifest.get("packages", {}).get("matplotlib")
    if here != there:
        return (f"figures/ not compared: matplotlib {here} here, {there} wrote the report "
                "(PNG bytes depend on the matplotlib build)")
    return None


def profile_problems(manifest: Mapping[str, object]) -> list[str]:
    """A line when the manifest's profile is not one this harness knows (shape-checked manifest)."""
    from harness.protocol.profiles import get_profile

    try:
        get_profile(manifest["options"]["profile"])
    except AuditError as exc:
        return [f"manifest.json#/options/profile: {exc.what}" + (f" ({exc.hint})" if exc.hint else "")]
    return []


COMPANION_DEPENDENT = ("card_id", "companion_check", "released_or_missing_evidence", "schema_and_status")


def _cards(
    report: Path, out: Path, options: Mapping[str, object], records: Mapping[str, pd.DataFrame], check: DeepCheck
) -> None:
    from harness.cards.assemble import assemble_card
    from harness.cards.card_format import write_card

    if "card_facts" not in options:
        check.problems.append("manifest.json#/options/card_facts: missing, so the cards cannot be "
                              "rebuilt (a report written before card facts were recorded; rerun the audit)")
        return
    (out / "cards").mkdir(exist_ok=True)
    companion = options["card_facts"]["companion"]
    for ev in sorted(set(options["card_facts"]["evaluators"]) & set(records)):
        rel = f"cards/{ev}.json"
        summary = summary_with_intervals(audit_result(records[ev], options["bootstrap"], options["seed"]))
        # as the session hands it to the card: through JSON (NaN kept, tuples as lists)
        stats = json.loads(json.dumps(summary["evaluators"][ev], sort_keys=True, allow_nan=True))
        if companion is None or companion == ev or companion in records:
            agreement = None
            if companion not in (None, ev):
                agreement = records_agreement(records[ev], records[companion])
            write_card(assemble_card(ev, options, stats, agreement), out / rel)
            check.problems += compare_file(rel, report / rel, out / rel)
            continue
        # the companion's scores are not in this report: compare what does not depend on them
        partial = {**options, "card_facts": {**options["card_facts"], "companion": None}}
        rebuilt = assemble_card(ev, partial, stats, None)
        try:
            on_disk = read_json(report / rel)
        except (OSError, ValueError):
            continue  # missing or unreadable: reported by the card check
        if not isinstance(on_disk, dict):
            continue
        keys = list(json_differences(
            {k: v for k, v in on_disk.items() if k not in COMPANION_DEPENDENT},
            {k: v for k, v in rebuilt.items() if k not in COMPANION_DEPENDENT},
        ))
        check.problems += [f"{rel}#{k}" for k in keys[:MAX_KEYS]]
        check.notes.append(f"{rel}: {', '.join(COMPANION_DEPENDENT)} not recomputed "
                           f"(the companion's scores/{companion}.csv is not part of this report)")


def deep_check(report: Path, manifest: Mapping[str, object] | None, *, figures: bool = True) -> DeepCheck:
    """Recompute summary.json, tables/, cards/ (and figures/ where possible) of ``report`` from
    ``scores/`` and ``manifest``'s options; every mismatch is one problem line naming the file
    (and the JSON key). ``manifest``: shape-checked (``None``: unusable, nothing rebuilt).
    ``figures=False`` skips redrawing the figures (most of the time of a small report)."""
    import pandas as pd

    from harness.report.writer import add_repeatability, write_derived

    check = DeepCheck()
    if manifest is None:
        check.problems.append("--deep: nothing recomputed, manifest.json is unusable (see above)")
        return check
    report = Path(report)
    options = manifest["options"]
    # the schema's "integer" admits 1.0 (JSON Schema draft 6+); the bootstrap needs Python ints
    options = {**options, "bootstrap": int(options["bootstrap"]), "seed": int(options["seed"])}
    check.problems += _evaluator_sets(report, options)
    check.problems += _results_problems(report, manifest)
    check.problems += _run_id_problems(manifest)
    records = {}
    for ev in sorted(options["evaluators"]):
        path = report / "scores" / f"{ev}.csv"
        if path.is_file():
            with contextlib.suppress(AuditError):  # already reported by the score-file check
                records[ev] = read_records(path)
    if not records:
        check.problems.append("--deep: nothing recomputed, no readable score file of the manifest's evaluators")
        return check
    figures_note = _figures_note(manifest) if figures else "figures/ not compared (--skip-figures)"
    if figures_note:
        check.notes.append(figures_note)
    try:
        result = audit_result(
            pd.concat([records[ev] for ev in sorted(records)], ignore_index=True),
            options["bootstrap"],
            options["seed"],
        )
    except AuditError as exc:
        check.problems.append(f"--deep: the statistics cannot be recomputed from scores/: {exc}")
        return check
    with tempfile.TemporaryDirectory(prefix="t3d-deep-") as tmp:
        out = Path(tmp)
        summary, _ = write_derived(result, out, figures=figures_note is None)
        add_repeatability(summary, options.get("card_facts"), out)
        check.problems += compare_file("summary.json", report / "summary.json", out / "summary.json")
        check.problems += compare_tree(report, out, "tables")
        if figures_note is None:
            check.problems += compare_tree(report, out, "figures")
        unknown = profile_problems(manifest)
        if unknown:
            check.problems += unknown
            return check
        try:
            _cards(report, out, options, records, check)
        except AuditError as exc:
            check.problems.append(f"cards/: cannot be rebuilt from scores/ and the options: {exc}")
    _html(report, check)
    return check


def _html(report: Path, check: DeepCheck) -> None:
    """report.html rebuilt from the report directory as it is on disk (the files it shows are
    checked above); thumbs/ cannot be recomputed without the renders."""
    from harness.report.html.page import HTML_NAME, build_html

    if (report / "thumbs").is_dir():
        check.notes.append("thumbs/ not recomputed: the renders are not part of the report (hashes checked)")
    if not (report / HTML_NAME).is_file():
        check.notes.append(f"{HTML_NAME}: absent (t3d-audit html writes it)")
        return
    try:
        rebuilt = build_html(report).encode("utf-8")
    except (AuditError, OSError, ValueError, KeyError, TypeError) as exc:
        check.problems.append(f"{HTML_NAME}: cannot be rebuilt from the report directory: {exc}")
        return
    if (report / HTML_NAME).read_bytes() != rebuilt:
        check.problems.append(f"{HTML_NAME}: differs from the page rebuilt from the report directory "
                              "(t3d-audit html rewrites it)")
