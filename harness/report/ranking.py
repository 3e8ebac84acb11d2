"""Many runs, one table: rank evaluators across report directories on the headline measures.

Reads each report directory only (``manifest.json``, ``summary.json``, ``results.json``,
``cards/*.json`` and, where present, ``agreement.json`` written by ``t3d-audit agreement --out``),
never the caches. One row per (run, evaluator) with:

* ``peak_rho`` (a ratio; lower is steadier) and its 95 % interval ``peak_rho_low/high``;
* ``min_w`` (smallest Kendall's W over the shared factors, in [0, 1]; higher is steadier);
* ``max_top1`` (most distinct top-1 generators over one factor's levels, a count; 1 is steady);
* ``discrimination`` (mean directional discrimination over the probes, a fraction; chance 0.5);
* ``c0_agreement`` and ``competent`` (share of the companion's generator pairs ordered alike at
  c0, :mod:`harness.report.competence`; ``None`` without a companion);
* ``human_spearman`` / ``human_pearson`` (agreement with human ratings; ``None`` without
  ``agreement.json``);
* ``failed_share`` and the run's ``verdict`` for the evaluator (passed / failed / skipped).

Ranking: ascending ``peak_rho``, then descending ``min_w``, ascending ``max_top1``, descending
``discrimination``, descending ``c0_agreement``; an unknown value sorts after every known one;
ties share a rank. Runs over different scene sets or profiles are refused
(:class:`~harness.errors.AuditError`) unless ``allow_mixed``: their numbers do not measure the
same thing.

Outputs (:func:`write_leaderboard`): ``leaderboard.md``, ``.csv``, ``.json`` and a
self-contained ``leaderboard.html`` (every value escaped with
:data:`harness.report.html_page.e`; a hash-based Content-Security-Policy with no script and no
``'unsafe-inline'``). Bytes depend only on the report directories' files and their order.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.bounded_input import read_json
from harness.errors import AuditError
from harness.numbers import finite_or_none
from harness.vocab.metrics import CONTENT_ACCURACY, FAILED_SHARE, MAX_TOP1, MIN_W, PEAK_RHO

COLUMNS = (
    "rank", "evaluator", "run_id", "profile", PEAK_RHO, "peak_rho_low", "peak_rho_high", MIN_W,
    MAX_TOP1, "discrimination", "c0_agreement", "competent", "human_spearman", "human_pearson",
    FAILED_SHARE, "verdict",
)  # fmt: skip
LABELS = {
    "rank": "#", "evaluator": "evaluator", "run_id": "run", "profile": "profile",
    PEAK_RHO: "peak ρ", "peak_rho_low": "ρ CI low", "peak_rho_high": "ρ CI high",
    MIN_W: "min W", MAX_TOP1: "top-1 changes", "discrimination": "discrimination",
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

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": [asdict(r) for r in self.runs],
            "mixed": self.mixed,
            "ranking": "peak_rho asc, min_w desc, max_top1 asc, discrimination desc, "
            "c0_agreement desc; unknown last",
            "rows": [asdict(r) for r in self.rows],
        }


def _read(path: Path, *, required: bool) -> Any:
    if not path.is_file():
        if required:
            raise AuditError(f"no {path.name}", where=path.parent,
                             hint="give report directories written by an audit run")  # fmt: skip
        return None
    try:
        return read_json(path)
    except (OSError, ValueError) as exc:
        raise AuditError(f"cannot read {path.name}: {exc}", where=path) from exc


def _verdicts(results: Any) -> dict[str, str]:
    """evaluator → ``failed`` if any of its tests failed, else ``passed`` if any passed, else
    ``skipped``."""
    out: dict[str, str] = {}
    for r in (results or {}).get("results", []) if isinstance(results, Mapping) else []:
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


def read_run(report: Path) -> tuple[RunInfo, list[dict[str, Any]]]:
    """The run info and the unranked row values of one report directory."""
    from harness.report.competence import contrasts

    report = Path(report)
    if not report.is_dir():
        raise AuditError("not a report directory", where=report)
    summary = _read(report / "summary.json", required=True)
    manifest = _read(report / "manifest.json", required=True)
    results = _read(report / "results.json", required=False)
    agreement = _read(report / "agreement.json", required=False) or {}
    if not isinstance(summary, Mapping) or not isinstance(manifest, Mapping):
        raise AuditError("summary.json and manifest.json must be JSON objects", where=report)
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
    rows = []
    evaluators = summary.get("evaluators") if isinstance(summary.get("evaluators"), Mapping) else {}
    for ev, entry in sorted(evaluators.items()):
        if not isinstance(entry, Mapping):
            continue
        ci = entry.get("peak_rho_ci") if isinstance(entry.get("peak_rho_ci"), list | tuple) else None
        comp = competence.get(ev, {})
        h = human.get(ev) if isinstance(human.get(ev), Mapping) else {}
        top1 = entry.get(MAX_TOP1)
        rows.append({
            "evaluator": str(ev), "run_id": run.run_id, "profile": run.profile,
            PEAK_RHO: finite_or_none(entry.get(PEAK_RHO)),
            "peak_rho_low": finite_or_none(ci[0]) if ci and len(ci) == 2 else None,
            "peak_rho_high": finite_or_none(ci[1]) if ci and len(ci) == 2 else None,
            MIN_W: finite_or_none(entry.get(MIN_W)),
            MAX_TOP1: top1 if isinstance(top1, int) and not isinstance(top1, bool) else None,
            "discrimination": finite_or_none(entry.get(CONTENT_ACCURACY)),
            "c0_agreement": finite_or_none(comp.get("pair_agreement")),
            "competent": comp.get("competent") if isinstance(comp.get("competent"), bool) else None,
            "human_spearman": finite_or_none(h.get("spearman")),
            "human_pearson": finite_or_none(h.get("pearson")),
            FAILED_SHARE: finite_or_none(entry.get(FAILED_SHARE)),
            "verdict": verdicts.get(str(ev), "not run"),
        })  # fmt: skip
    return run, rows


def _key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    def asc(x: float | None) -> tuple[int, float]:
        return (1, 0.0) if x is None else (0, x)

    def desc(x: float | None) -> tuple[int, float]:
        return (1, 0.0) if x is None else (0, -x)

    return (
        asc(row[PEAK_RHO]), desc(row[MIN_W]),
        asc(None if row[MAX_TOP1] is None else float(row[MAX_TOP1])),
        desc(row["discrimination"]), desc(row["c0_agreement"]),
    )  # fmt: skip


def build_leaderboard(reports: Sequence[Path], *, allow_mixed: bool = False) -> Leaderboard:
    """Rank every evaluator of every report in ``reports`` (see the module docstring)."""
    if not reports:
        raise AuditError("no report directories given", hint="t3d-audit leaderboard REPORT_DIR...")
    runs: list[RunInfo] = []
    values: list[dict[str, Any]] = []
    for report in reports:
        run, rows = read_run(Path(report))
        if any(r.path == run.path for r in runs):
            raise AuditError("report directory given twice", where=run.path)
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


def cell(value: Any) -> str:
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
    cols = ("rank", "evaluator", "run_id", PEAK_RHO, "peak_rho_low", "peak_rho_high", MIN_W,
            MAX_TOP1, "discrimination", "c0_agreement", "human_spearman", "verdict")  # fmt: skip
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
        writer.writerow(["" if getattr(row, c) is None else getattr(row, c) for c in COLUMNS])
    return buf.getvalue()


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:1.5rem;color:#111}"
    "table{border-collapse:collapse;font-size:.9rem}th,td{border:1px solid #ccc;padding:.25rem .5rem;"
    "text-align:right}td.t,th.t{text-align:left}tr.failed td.v{color:#a00}caption{text-align:left;"
    "font-weight:bold;margin-bottom:.5rem}.warn{color:#a00}code{font-size:.85rem}"
)


def render_html(board: Leaderboard) -> str:
    """A self-contained page: inline style allowed by its hash, no script, every value escaped."""
    from harness.report.html_page import csp_hash, e

    policy = (f"default-src 'none'; style-src {csp_hash(_CSS)}; script-src 'none'; "
              "base-uri 'none'; form-action 'none'")  # fmt: skip
    text_cols = {"evaluator", "run_id", "profile", "verdict"}
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
        "<p>Ranked by peak ρ (lower is steadier), then min W, top-1 changes, discrimination and "
        "c0 agreement; n/a sorts last.</p>"
        f"{warn}<table><caption>Evaluators across runs</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table><h2>Runs</h2><ul>{runs}</ul></body></html>\n"
    )


def write_leaderboard(board: Leaderboard, out: Path) -> list[Path]:
    """Write ``leaderboard.md``, ``.csv``, ``.json`` and ``.html`` into ``out``."""
    from harness.fileio import json_text, write_text_atomic

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (
        ("leaderboard.md", render_markdown(board)),
        ("leaderboard.csv", render_csv(board)),
        ("leaderboard.json", json_text(board.to_json())),
        ("leaderboard.html", render_html(board)),
    ):
        write_text_atomic(out / name, text)
        written.append(out / name)
    return written


__all__ = [
    "Leaderboard", "Row", "RunInfo", "build_leaderboard", "read_run", "render_csv", "render_html",
    "render_markdown", "render_text", "write_leaderboard",
]  # fmt: skip
