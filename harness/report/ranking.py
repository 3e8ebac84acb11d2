"""Many runs, one table: rank evaluators across report directories on the headline measures.

Reads each report directory only (``manifest.json``, ``summary.json``, ``results.json``,
``cards/*.json`` and, where present, ``agreement.json`` written by ``t3d-audit agreement --out``),
never the caches. One row per (run, evaluator) with:

* ``peak_movement`` (protocol movement of the factor that moves scores most, in c0
  within-generator standard deviations; lower is steadier: :mod:`harness.stats.movement`), its
  95 % interval ``peak_movement_low/high`` and that factor, ``movement_factor``: the headline,
  because it does not fall when a release only spreads the generators further apart at c0;
* ``peak_rho`` (a ratio; lower is steadier) and its 95 % interval ``peak_rho_low/high``;
* ``min_w`` (smallest Kendall's W over the shared factors, in [0, 1]; higher is steadier);
* ``max_top1`` (most distinct top-1 generators over one factor's levels, a count; 1 is steady);
* ``discrimination`` (mean directional discrimination over the probes, a fraction; chance 0.5);
* ``c0_agreement`` and ``competent`` (share of the companion's generator pairs ordered alike at
  c0, :mod:`harness.report.competence`; ``None`` without a companion);
* ``human_spearman`` / ``human_pearson`` (agreement with human ratings at c0: from
  ``agreement.json``, else from the card's ``human_agreement`` of an ``--audit-human`` run;
  ``None`` without either);
* ``failed_share`` and the run's ``verdict`` for the evaluator (passed / failed / skipped).

Trust: every run is verified as ``t3d-audit validate`` verifies it (its
:func:`~harness.report.validation.check_report`: manifest hashes with nothing unlisted, cards,
coverage, results) before anything of it is ranked; a run with any problem is refused
(:class:`~harness.core.errors.AuditError` naming it and its first problems). One directory named
twice (also through a symlink or ``..``: real paths are compared) is refused. ``failed_share``
is counted from the raw score files (``scores/*.csv``), never read from the summary. A value
where a number belongs that is not a JSON number (a string such as ``"0.001"``, a bool, an
integer too large for a float) or an ``evaluators`` that is not an object is refused, naming
the file and the key.

Ranking: an evaluator whose failed share exceeds the study's ``max_failed_share`` (0.01) ranks
after every one within it (its statistics rest on the records that did not fail); then
ascending ``peak_movement``, ascending ``peak_rho``, descending ``min_w``, ascending ``max_top1``, descending
``discrimination``, descending ``c0_agreement``; an unknown value sorts after every known one;
ties share a rank. Runs over different scene sets or profiles are refused
(:class:`~harness.core.errors.AuditError`) unless ``allow_mixed``: their numbers do not measure the
same thing.

Outputs (:func:`write_leaderboard`): ``leaderboard.md``, ``.csv``, ``.json`` and a
self-contained ``leaderboard.html`` (every value escaped with
:data:`harness.report.html.page.e`; a hash-based Content-Security-Policy with no script and no
``'unsafe-inline'``). Bytes depend only on the report directories' files and their order.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.core.bounded_input import read_report_json as read_json
from harness.core.csvcells import neutral
from harness.core.errors import AuditError
from harness.core.jsonout import JSONValue
from harness.core.numbers import finite_or_none
from harness.stats.movement import peak_movement_factor
from harness.stats.summary import EvaluatorSummary
from harness.vocab.metrics import (
    CONTENT_ACCURACY,
    FAILED_SHARE,
    HUMAN_AGREEMENT,
    MAX_TOP1,
    MIN_W,
    MOVEMENT,
    PEAK_MOVEMENT,
    PEAK_RHO,
)

PEAK_RHO_CI = f"{PEAK_RHO}_ci"  # summary.json's key of peak_rho's 95 % interval
DISCRIMINATION_COLUMN = "discrimination"  # the column of content_accuracy (mean over the probes)

COLUMNS = (
    "rank", "evaluator", "run_id", "profile", PEAK_MOVEMENT, "peak_movement_low", "peak_movement_high",
    "movement_factor", PEAK_RHO, "peak_rho_low", "peak_rho_high", MIN_W,
    MAX_TOP1, "discrimination", "c0_agreement", "competent", "human_spearman", "human_pearson",
    FAILED_SHARE, "verdict",
)  # fmt: skip
LABELS = {
    "rank": "#", "evaluator": "evaluator", "run_id": "run", "profile": "profile",
    PEAK_MOVEMENT: "peak movement", "peak_movement_low": "movement CI low",
    "peak_movement_high": "movement CI high", "movement_factor": "moved most by",
    PEAK_RHO: "peak ρ", "peak_rho_low": "ρ CI low", "peak_rho_high": "ρ CI high",
    MIN_W: "min W", MAX_TOP1: "top-1 changes", DISCRIMINATION_COLUMN: "discrimination",
    "c0_agreement": "c0 agreement", "competent": "c0 competent",
    "human_spearman": "human ρs", "human_pearson": "human r", FAILED_SHARE: "failed",
    "verdict": "verdict",
}  # fmt: skip


@dataclass(frozen=True)
class RunInfo:
    """One report directory: its run id, profile and the scene set it measured."""

    path: str
    run_id: str
    profile: str
    scene_set: str


@dataclass(frozen=True)
class Row:
    """One evaluator in one run (see the module docstring for units)."""

    rank: int
    evaluator: str
    run_id: str
    profile: str
    peak_movement: float | None
    peak_movement_low: float | None
    peak_movement_high: float | None
    movement_factor: str | None
    peak_rho: float | None
    peak_rho_low: float | None
    peak_rho_high: float | None
    min_w: float | None
    max_top1: int | None
    discrimination: float | None
    c0_agreement: float | None
    competent: bool | None
    human_spearman: float | None
    human_pearson: float | None
    failed_share: float | None
    verdict: str


@dataclass(frozen=True)
class Leaderboard:
    """The ranked rows and the runs they come from; ``mixed`` when the runs differ in scene
    set or profile (ranked only with ``allow_mixed``)."""

    rows: tuple[Row, ...]
    runs: tuple[RunInfo, ...]
    mixed: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "runs": [asdict(r) for r in self.runs],
            "mixed": self.mixed,
            "ranking": "failed_share within max_failed_share first, then peak_movement asc, peak_rho asc, min_w desc, "
            "max_top1 asc, discrimination desc, c0_agreement desc; unknown last",
            "rows": [asdict(r) for r in self.rows],
        }


def _read(path: Path, *, required: bool) -> JSONValue:
    if not path.is_file():
        if required:
            raise AuditError(f"no {path.name}", where=path.parent,
                             hint="give report directories written by an audit run")  # fmt: skip
        return None
    try:
        return read_json(path)
    except (OSError, ValueError) as exc:
        raise AuditError(f"cannot read {path.name}: {exc}", where=path) from exc


def _verdicts(results: object) -> dict[str, str]:
    """evaluator → ``failed`` if any of its tests failed, else ``passed`` if any passed, else
    ``skipped``."""
    out: dict[str, str] = {}
    for r in (results or {}).get("results", []) if isinstance(results, Mapping) else []:
        if not isinstance(r, Mapping):
            continue
        ev, outcome = r.get("evaluator"), str(r.get("outcome", ""))
        if not isinstance(ev, str):
            continue
        if outcome == "failed" or out.get(ev) == "failed":
            out[ev] = "failed"
        elif outcome == "passed" or out.get(ev) == "passed":
            out[ev] = "passed"
        else:
            out[ev] = "skipped"
    return out


def _number(value: object, where: str) -> float | None:
    """A JSON number as a finite float; ``None`` for null (or NaN/inf, which JSON cannot hold
    but Python's reader accepts); :class:`AuditError` for anything else (a string, a bool, a
    list, an integer beyond the float range)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AuditError(f"{type(value).__name__} {str(value)[:40]!r} where a number belongs", where=where,
                         hint="the report was edited or written by another tool; rerun the audit")  # fmt: skip
    try:
        number = float(value)
    except OverflowError:
        raise AuditError("a number too large for a float", where=where,
                         hint="the report was edited; rerun the audit") from None  # fmt: skip
    return finite_or_none(number)


def _count(value: object, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10**6:
        raise AuditError(f"{str(value)[:40]!r} is not a count", where=where,
                         hint="the report was edited; rerun the audit")  # fmt: skip
    return value


def verify_run(report: Path) -> list[str]:
    """Every problem ``t3d-audit validate`` finds in ``report`` (its own check, not a copy)."""
    from harness.report.validation import check_report

    return check_report(report, deep=False)[0]


def failed_shares(report: Path) -> dict[str, float]:
    """evaluator → share of its raw score records with status ``failed``, counted from
    ``scores/*.csv`` (read as ``validate`` reads them)."""
    from harness.report.validation import read_scores

    _problems, records = read_scores(report)
    if records is None:
        return {}
    failed = records["status"] == "failed"
    return {str(ev): float(share) for ev, share in failed.groupby(records["evaluator"]).mean().items()}


MAX_TRUST_PROBLEMS = 3  # problems named in the refusal of a run that does not verify


def read_run(report: Path, *, verify: bool = True) -> tuple[RunInfo, list[dict[str, object]]]:
    """The run info and the unranked row values of one report directory; with ``verify`` the
    directory must pass ``t3d-audit validate``'s checks and the failed share is counted from
    its score files."""
    from harness.report.competence import contrasts

    report = Path(report)
    if not report.is_dir():
        raise AuditError("not a report directory", where=report)
    summary = _read(report / "summary.json", required=True)
    manifest = _read(report / "manifest.json", required=True)
    if verify:
        problems = verify_run(report)
        if problems:
            more = len(problems) - MAX_TRUST_PROBLEMS
            raise AuditError(
                "the run does not verify: " + "; ".join(problems[:MAX_TRUST_PROBLEMS])
                + (f"; and {more} more" if more > 0 else ""),
                where=str(report),
                hint=f"run `t3d-audit validate {report}`; rank only runs that validate",
            )
    results = _read(report / "results.json", required=False)
    agreement = _read(report / "agreement.json", required=False) or {}
    if not isinstance(summary, Mapping) or not isinstance(manifest, Mapping):
        raise AuditError("summary.json and manifest.json must be JSON objects", where=report)
    evaluators = summary.get("evaluators", {})
    if not isinstance(evaluators, Mapping):
        raise AuditError(f"'evaluators' is a {type(evaluators).__name__}, not an object",
                         where=f"{report / 'summary.json'}#/evaluators",
                         hint="the report was edited or written by another tool; rerun the audit")  # fmt: skip
    options = manifest.get("options") if isinstance(manifest.get("options"), Mapping) else {}
    run = RunInfo(
        path=str(report),
        run_id=str(manifest.get("run_id") or report.name),
        profile=str(options.get("profile", "")),
        scene_set=str(options.get("scene_set_sha256", "")),
    )
    cards = {}
    for p in sorted((report / "cards").glob("*.json")):
        card = _read(p, required=False)
        if isinstance(card, Mapping):
            cards[p.stem] = card
    competence = contrasts(summary, cards)
    verdicts = _verdicts(results)
    human = agreement.get("evaluators") if isinstance(agreement, Mapping) else None
    human = human if isinstance(human, Mapping) else {}
    counted = failed_shares(report) if verify else None
    rows = []
    for ev, entry in sorted(evaluators.items()):
        if not isinstance(entry, Mapping):
            continue
        at = f"{report / 'summary.json'}#/evaluators/{ev}"
        if counted is None:
            _number(entry.get(FAILED_SHARE), f"{at}/{FAILED_SHARE}")
        stats = EvaluatorSummary.from_entry(str(ev), _ranked_fields(entry, at))
        ci = stats.peak_rho_ci
        comp = competence.get(ev, {})
        from_file = isinstance(human.get(ev), Mapping)
        h = human.get(ev) if from_file else _card_human(cards.get(ev))
        h_at = (f"{report / 'agreement.json'}#/evaluators/{ev}" if from_file
                else f"{report / 'cards' / f'{ev}.json'}#/human_agreement/c0")  # fmt: skip
        rows.append({
            "evaluator": str(ev), "run_id": run.run_id, "profile": run.profile,
            **_movement(entry, at),
            PEAK_RHO: stats.peak_rho,
            "peak_rho_low": ci.low if ci else None,
            "peak_rho_high": ci.high if ci else None,
            MIN_W: stats.min_w,
            MAX_TOP1: stats.max_top1,
            DISCRIMINATION_COLUMN: stats.content_accuracy,
            "c0_agreement": finite_or_none(comp.get("pair_agreement")),
            "competent": comp.get("competent") if isinstance(comp.get("competent"), bool) else None,
            "human_spearman": _number(h.get("spearman"), f"{h_at}/spearman"),
            "human_pearson": _number(h.get("pearson"), f"{h_at}/pearson"),
            FAILED_SHARE: counted.get(str(ev)) if counted is not None else stats.failed_share,
            "verdict": verdicts.get(str(ev), "not run"),
        })  # fmt: skip
    return run, rows


#: The summary fields a leaderboard row reads (``summary.json#/evaluators/<id>``).
RANKED_FIELDS = (PEAK_RHO, PEAK_RHO_CI, MIN_W, MAX_TOP1, CONTENT_ACCURACY, FAILED_SHARE)


def _ranked_fields(entry: Mapping[str, object], at: str) -> dict[str, object]:
    """The :data:`RANKED_FIELDS` of one evaluator's summary entry, for the typed reader
    (:meth:`EvaluatorSummary.from_entry`), after refusing what the reader would quietly turn
    into a number or drop: a value that is not a JSON number (a string such as ``"0.001"``, a
    bool, an integer beyond the float range) or a ``max_top1`` that is not a count, naming the
    file and the key. The entry's other fields are not ranked, so not read."""
    _number(entry.get(PEAK_RHO), f"{at}/{PEAK_RHO}")
    ci = entry.get(PEAK_RHO_CI)
    if isinstance(ci, list | tuple) and len(ci) == 2:
        for end in (0, 1):
            _number(ci[end], f"{at}/{PEAK_RHO_CI}/{end}")
    _number(entry.get(MIN_W), f"{at}/{MIN_W}")
    _count(entry.get(MAX_TOP1), f"{at}/{MAX_TOP1}")
    _number(entry.get(CONTENT_ACCURACY), f"{at}/{CONTENT_ACCURACY}")
    fields = {name: entry[name] for name in RANKED_FIELDS if name in entry}
    if not isinstance(ci, list | tuple):
        fields.pop(PEAK_RHO_CI, None)  # an interval only as a JSON array
    return fields


def _movement(entry: Mapping[str, object], at: str) -> dict[str, object]:
    """The row's movement columns from a summary entry's ``registered`` values and ``intervals``:
    the peak movement, its interval and the factor with the largest movement (``None`` each in
    a run without them, e.g. one written before the statistic existed)."""
    registered = entry.get("registered")
    registered = registered if isinstance(registered, Mapping) else {}
    peak_value = _number(registered.get(PEAK_MOVEMENT), f"{at}/registered/{PEAK_MOVEMENT}")
    per_factor = registered.get(MOVEMENT)
    factors = {str(f): _number(v, f"{at}/registered/{MOVEMENT}/{f}")
               for f, v in per_factor.items()} if isinstance(per_factor, Mapping) else {}
    known = {f: v for f, v in factors.items() if v is not None}
    intervals = entry.get("intervals")
    ci = intervals.get(PEAK_MOVEMENT) if isinstance(intervals, Mapping) else None
    low = high = None
    if isinstance(ci, list | tuple) and len(ci) == 2:
        low, high = (_number(ci[i], f"{at}/intervals/{PEAK_MOVEMENT}/{i}") for i in (0, 1))
    return {PEAK_MOVEMENT: peak_value, "peak_movement_low": low, "peak_movement_high": high,
            "movement_factor": peak_movement_factor(known)}


def _card_human(card: object) -> Mapping[str, object]:
    """The c0 agreement (``spearman``, ``pearson``) an ``--audit-human`` run put on the card
    (``human_agreement.c0``); empty when the card has none."""
    figures = card.get(HUMAN_AGREEMENT) if isinstance(card, Mapping) else None
    c0 = figures.get("c0") if isinstance(figures, Mapping) else None
    return c0 if isinstance(c0, Mapping) else {}


def _max_failed_share() -> float:
    from harness.vocab.metrics import MAX_FAILED_SHARE, default_thresholds

    return float(default_thresholds()[MAX_FAILED_SHARE])


def _key(row: Mapping[str, object]) -> tuple[object, ...]:
    def asc(x: float | None) -> tuple[int, float]:
        return (1, 0.0) if x is None else (0, x)

    def desc(x: float | None) -> tuple[int, float]:
        return (1, 0.0) if x is None else (0, -x)

    failed = row[FAILED_SHARE]
    unreliable = failed is not None and failed > _max_failed_share()
    return (
        unreliable, asc(row[PEAK_MOVEMENT]), asc(row[PEAK_RHO]), desc(row[MIN_W]),
        asc(None if row[MAX_TOP1] is None else float(row[MAX_TOP1])),
        desc(row[DISCRIMINATION_COLUMN]), desc(row["c0_agreement"]),
    )  # fmt: skip


def build_leaderboard(reports: Sequence[Path], *, allow_mixed: bool = False,
                      verify: bool = True) -> Leaderboard:
    """Rank every evaluator of every report in ``reports`` (see the module docstring);
    ``verify=False`` skips the validate checks (for synthetic directories in tests)."""
    if not reports:
        raise AuditError("no report directories given", hint="t3d-audit leaderboard REPORT_DIR...")
    runs: list[RunInfo] = []
    values: list[dict[str, object]] = []
    seen: dict[str, str] = {}  # real path -> the path as given
    for report in reports:
        real = os.path.realpath(report)
        if real in seen:
            same = "" if seen[real] == str(report) else f" (the same directory as {seen[real]})"
            raise AuditError(f"report directory given twice{same}", where=str(report),
                             hint="name each run once")  # fmt: skip
        seen[real] = str(report)
        run, rows = read_run(Path(report), verify=verify)
        runs.append(run)
        values += rows
    kinds = {(r.profile, r.scene_set) for r in runs}
    mixed = len(kinds) > 1
    if mixed and not allow_mixed:
        first = runs[0]
        other = next(r for r in runs if (r.profile, r.scene_set) != (first.profile, first.scene_set))
        what = "profile" if other.profile != first.profile else "scene set"
        raise AuditError(
            f"runs differ in {what}: {first.run_id} ({first.profile}, scenes "
            f"{first.scene_set[:12]}) vs {other.run_id} ({other.profile}, scenes "
            f"{other.scene_set[:12]}); their numbers do not measure the same thing",
            where=other.path,
            hint="rank runs of one profile over one scene set, or pass --allow-mixed",
        )
    ordered = sorted(values, key=lambda v: (_key(v), v["evaluator"], v["run_id"]))
    rows: list[Row] = []
    for i, v in enumerate(ordered):
        rank = rows[-1].rank if rows and _key(v) == _key(ordered[i - 1]) else i + 1
        rows.append(Row(rank=rank, **v))
    return Leaderboard(tuple(rows), tuple(runs), mixed)


# ----------------------------------------------------------------------------- rendering


def cell(value: object) -> str:
    """A value as the table shows it: 4 significant digits, ``n/a`` when unknown."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(board: Leaderboard) -> str:
    """The leaderboard as a Markdown table, with the runs listed under it."""
    head = [LABELS[c] for c in COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in board.rows:
        lines.append("| " + " | ".join(_md_cell(cell(getattr(row, c))) for c in COLUMNS) + " |")
    lines.append("")
    lines.append("Runs: " + "; ".join(
        f"{_md_cell(r.run_id)} (profile {_md_cell(r.profile)}, scenes {r.scene_set[:12]})"
        for r in board.runs))  # fmt: skip
    if board.mixed:
        lines.append("WARNING: these runs differ in profile or scene set (ranked with --allow-mixed).")
    return "\n".join(lines) + "\n"


def render_text(board: Leaderboard) -> str:
    """A plain aligned table for the terminal."""
    cols = ("rank", "evaluator", "run_id", PEAK_MOVEMENT, "movement_factor", PEAK_RHO, "peak_rho_low", "peak_rho_high", MIN_W,
            MAX_TOP1, DISCRIMINATION_COLUMN, "c0_agreement", "human_spearman", "verdict")  # fmt: skip
    table = [[LABELS[c] for c in cols]] + [[cell(getattr(r, c)) for c in cols] for r in board.rows]
    widths = [max(len(t[i]) for t in table) for i in range(len(cols))]
    out = ["  ".join(t[i].ljust(widths[i]) for i in range(len(cols))).rstrip() for t in table]
    if board.mixed:
        out.append("WARNING: these runs differ in profile or scene set (ranked with --allow-mixed).")
    return "\n".join(out)


def render_csv(board: Leaderboard) -> str:
    """One CSV row per leaderboard row; unknown values empty."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in board.rows:
        writer.writerow(["" if getattr(row, c) is None else neutral(getattr(row, c)) for c in COLUMNS])
    return buf.getvalue()


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:1.5rem;color:#111}"
    "table{border-collapse:collapse;font-size:.9rem}th,td{border:1px solid #ccc;padding:.25rem .5rem;"
    "text-align:right}td.t,th.t{text-align:left}tr.failed td.v{color:#a00}caption{text-align:left;"
    "font-weight:bold;margin-bottom:.5rem}.warn{color:#a00}code{font-size:.85rem}"
)


def render_html(board: Leaderboard) -> str:
    """A self-contained page: inline style allowed by its hash, no script, every value escaped."""
    from harness.report.html.page import csp_hash, e

    policy = (f"default-src 'none'; style-src {csp_hash(_CSS)}; script-src 'none'; "
              "base-uri 'none'; form-action 'none'")  # fmt: skip
    text_cols = {"evaluator", "run_id", "profile", "movement_factor", "verdict"}
    head = "".join(
        f'<th scope="col" class="{"t" if c in text_cols else "n"}">{e(LABELS[c])}</th>'
        for c in COLUMNS
    )
    body = []
    for row in board.rows:
        cells = "".join(
            f'<td class="{"t" if c in text_cols else "n"}{" v" if c == "verdict" else ""}">'
            f"{e(cell(getattr(row, c)))}</td>"
            for c in COLUMNS
        )
        body.append(f'<tr class="{e(row.verdict)}">{cells}</tr>')
    runs = "".join(
        f"<li><code>{e(r.run_id)}</code>: profile {e(r.profile)}, scene set "
        f"<code>{e(r.scene_set[:12])}</code></li>"
        for r in board.runs
    )
    warn = ('<p class="warn">These runs differ in profile or scene set (ranked with '
            "--allow-mixed): their numbers do not measure the same thing.</p>"
            if board.mixed else "")  # fmt: skip
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{e(policy)}">'
        f"<title>t3d-audit leaderboard</title><style>{_CSS}</style></head><body>"
        "<h1>t3d-audit leaderboard</h1>"
        "<p>Ranked by peak movement (how far the factor that moves scores most moves a scene's "
        "score, in c0 within-generator standard deviations; lower is steadier), then peak ρ, "
        "min W, top-1 changes, discrimination and c0 agreement; n/a sorts last.</p>"
        f"{warn}<table><caption>Evaluators across runs</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table><h2>Runs</h2><ul>{runs}</ul></body></html>\n"
    )


def write_leaderboard(board: Leaderboard, out: Path) -> list[Path]:
    """Write ``leaderboard.md``, ``.csv``, ``.json`` and ``.html`` into ``out``."""
    from harness.core.fileio import json_text, write_text_atomic

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (
        ("leaderboard.md", render_markdown(board)),
        ("leaderboard.csv", render_csv(board)),
        ("leaderboard.json", json_text(board.to_dict())),
        ("leaderboard.html", render_html(board)),
    ):
        write_text_atomic(out / name, text)
        written.append(out / name)
    return written


__all__ = [
    "Leaderboard", "Row", "RunInfo", "build_leaderboard", "read_run", "render_csv", "render_html",
    "render_markdown", "render_text", "write_leaderboard",
]  # fmt: skip
