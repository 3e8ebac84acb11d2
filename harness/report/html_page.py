"""``report.html``: one self-contained page to look at a report directory.

A writer over the report directory only (scores/, summary.json, tables/, figures/, cards/,
results.json, manifest.json, thumbs/, comparison.json if present), never the caches, so
``t3d-audit html DIR`` rebuilds it anywhere. The page holds its CSS, JS, figures and
thumbnails inline (data URIs) and requests nothing: it works offline from ``file://``.
Thumbnails link to the larger copies in ``thumbs/`` and are decoded only when scrolled into
view. Sections:

* verdict per evaluator, with every failing check (estimate, CI, threshold, card id);
* competence at c0 (agreement with the symbolic companion, from the cards) next to fragility
  (peak ρ, min W, top-1 changes), when the run has a companion
  (:mod:`harness.report.competence`);
* humans (with ``--audit-human``, from the cards): agreement with the mean human rating at c0
  against the raters' noise ceiling per evaluator, and agreement at each level per factor;
* figures (``figures/*.png``);
* per evaluator × factor, one prompt's scenes across the factor's levels with each image's
  score and the generator ranking (mean over prompts) at each level;
* probe pairs: the intact scene next to each probe edit, both scores and the companion's verdict;
* the comparison against a baseline release (``comparison.json``), when present;
* every statistics table (sortable, filterable), every card, and the provenance.

Every value read from the directory is escaped (:data:`e`, ``html.escape`` with quotes) where
it is interpolated, the thumbnail JSON is escaped for a ``<script>`` element
(:func:`script_json`), and the Content-Security-Policy (:func:`csp`) lets only the page's own
inline script and style run, by their sha256 hashes: no ``'unsafe-inline'``, no event-handler
attributes.

Output bytes depend only on the report directory's files (no time, no paths, no environment),
so ``validate --deep`` can rebuild and compare it. Provenance leaves out
``manifest.json#/outputs``, which lists report.html itself.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import html
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from harness.core.bounded_input import read_report_json as read_json
from harness.core.errors import AuditError
from harness.core.jsonout import JSONValue
from harness.report.thumbs import THUMB_DIR, read_index
from harness.vocab.factors import factor_names
from harness.vocab.metrics import HUMAN_AGREEMENT, MAX_TOP1, MIN_W, PEAK_RHO
from harness.vocab.probes import probe_names

HTML_NAME = "report.html"
ASSETS = Path(__file__).with_name("html_assets")
EMBED_PX = 112  # longer side of an embedded thumbnail, in pixels
EMBED_QUALITY = 80
MAX_LEVELS = 12  # levels shown per strip (winner changes first)
FIGURES = (
    ("dispersion.png", "Heatmap of score dispersion D in percent, evaluator by factor."),
    ("peak_rho.png", "Peak configuration ratio rho per evaluator with 95 percent bootstrap "
     "intervals, axis from 0 (linear up to rho = 1, logarithmic beyond when an interval "
     "reaches past 20); the dashed line is rho = 1."),
    ("discrimination.png", "Directional discrimination per probe and evaluator in percent; the "
     "dashed line is chance, 50 percent."),
    ("envelopes.png", "Generator pairs per evaluator whose margin envelope across shared "
     "protocols is strict, crosses zero, or touches a tie."),
    ("interactions.png", "Heatmap of the interaction share of each factorial block's protocol "
     "variance in percent, evaluator by block, with the generator pairs whose order flips "
     "inside the block."),
)
DASH_LEGEND = (
    "A — in a cell: the run does not measure it (a factor or probe its profile or scenes lack), "
    "or it is undefined on the records (e.g. every record failed, or no interval without the "
    "bootstrap); in a factor / probe column: the metric has none."
)

e = html.escape


def fmt(value: object, digits: int = 4) -> str:
    """A number with ``digits`` significant digits; ``—`` for missing or non-finite."""
    if value is None or isinstance(value, bool):
        return "—" if value is None else str(value).lower()
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(x):
        return "—"
    return f"{x:.{digits}g}"


def _read_json(path: Path) -> JSONValue:
    try:
        return read_json(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise AuditError(f"{path.name} is not readable JSON: {exc}", where=path,
                         hint="rerun the audit, or t3d-audit validate the report") from exc


def _ordered(keys: Iterable[str], order: Sequence[str]) -> list[str]:
    keys = set(keys)
    return [k for k in order if k in keys] + sorted(keys - set(order))


# ----------------------------------------------------------------------------- inputs


class ReportData:
    """Everything the page shows, read from one report directory."""

    def __init__(self, report: Path):
        from harness.protocol.records import read_records

        self.dir = Path(report)
        if not (self.dir / "summary.json").is_file():
            raise AuditError("no summary.json", where=self.dir, hint="is this a report directory?")
        self.summary = _read_json(self.dir / "summary.json") or {}
        self.results = _read_json(self.dir / "results.json") or {}
        self.manifest = _read_json(self.dir / "manifest.json") or {}
        self.comparison = _read_json(self.dir / "comparison.json")
        self.evaluators = sorted(self.summary.get("evaluators", {}))
        self.cards = {p.stem: _read_json(p) for p in sorted((self.dir / "cards").glob("*.json"))}
        self.records = {p.stem: read_records(p) for p in sorted((self.dir / "scores").glob("*.csv"))}
        self.thumbs = read_index(self.dir)
        options = self.manifest.get("options", {}) if isinstance(self.manifest, dict) else {}
        facts = options.get("card_facts") or {}
        self.companion = facts.get("companion") if facts.get("companion") in self.records else None

    @property
    def run_id(self) -> str:
        return str(self.results.get("run_id") or self.manifest.get("run_id") or self.dir.name)


# ----------------------------------------------------------------------------- sections


def _verdict(data: ReportData) -> str:
    from harness.report.verdict_words import check_item_html, headline_text

    by_ev: dict[str, list[dict[str, object]]] = {}
    for r in data.results.get("results", []):
        by_ev.setdefault(str(r.get("evaluator") or "panel"), []).append(r)
    rows = []
    for ev in sorted(by_ev):
        results = by_ev[ev]
        failed = [r for r in results if r.get("outcome") == "failed"]
        checks = [c for r in failed for c in (r.get("checks") or []) if c.get("passed") is False]
        status = "fail" if failed else "pass"
        badge = f'<span class="badge {status}">{"✗ FAIL" if failed else "✓ PASS"}</span>'
        detail = ""
        if checks or failed:
            items = []
            for r in failed:
                bad = [c for c in (r.get("checks") or []) if c.get("passed") is False]
                if not bad:
                    items.append(f"<li><code>{e(r.get('test', ''))}</code>: {e(str(r.get('message') or 'failed'))}</li>")
                items.extend(check_item_html(c, str(r.get("test", ""))) for c in bad)
            detail = f'<ul class="checks">{"".join(items)}</ul>'
        passed = sum(r.get("outcome") == "passed" for r in results)
        skipped = sum(r.get("outcome") == "skipped" for r in results)
        rows.append(
            f'<tr data-ev="{e(ev)}" data-status="{status}"><th scope="row">{e(ev)}</th><td>{badge}</td>'
            f"<td>{passed} passed, {len(failed)} failed, {skipped} skipped</td><td>{detail}</td></tr>"
        )
    failing = [ev for ev in sorted(by_ev) if any(r.get("outcome") == "failed" for r in by_ev[ev])]
    headline = (f'<p class="headline"><span class="badge {"fail" if failing else "pass"}">'
                f'{"✗ FAIL" if failing else "✓ PASS"}</span> '
                + e(headline_text({ev: [str(r.get("outcome")) for r in by_ev[ev]] for ev in by_ev})) + "</p>")
    complete = data.results.get("complete")
    note = "" if complete is not False else (
        '<p class="warn">⚠ Partial report: missing ' + e(", ".join(data.results.get("missing", [])[:10])) + "</p>")
    note += _looser_html(data)
    return (
        '<section id="verdict"><h2>Failing checks by evaluator</h2>' + headline + note
        + '<table class="sortable verdict"><thead><tr><th scope="col">Evaluator</th><th scope="col">Verdict</th>'
        '<th scope="col">Tests</th><th scope="col">Failing checks</th></tr></thead><tbody>'
        + "".join(rows) + "</tbody></table></section>"
    )


def _looser_html(data: ReportData) -> str:
    """A warning per evaluator gated with thresholds looser than the study's (from its card's
    ``score_uncertainty.looser_than_study``); nothing when every threshold is the study's or
    stricter."""
    lines = []
    for ev, card in sorted(data.cards.items()):
        looser = ((card or {}).get("score_uncertainty") or {}).get("looser_than_study") if isinstance(card, dict) else None
        if not isinstance(looser, dict) or not looser:
            continue
        parts = ", ".join(f"{e(name)} {e(fmt(v.get('value')))} (study {e(fmt(v.get('study')))})"
                          for name, v in sorted(looser.items()) if isinstance(v, dict))  # fmt: skip
        lines.append(f'<p class="warn looser">⚠ {e(ev)} was gated with thresholds looser than the '
                     f"study's: {parts}. Its pass is not a pass by the study's standard.</p>")
    return "".join(lines)


def _competence(data: ReportData) -> str:
    """Competence at c0 (companion agreement, from the cards) next to fragility (summary)."""
    from harness.report.competence import contrasts

    found = contrasts(data.summary, data.cards)
    if not found:
        return ""

    def n(x: object, f: str) -> str:
        return "—" if x is None else f.format(x)

    rows = "".join(
        f'<tr data-ev="{e(ev)}"><th scope="row">{e(ev)}</th><td>{n(c["pair_agreement"], "{:.0%}")}</td>'
        f'<td>{n(c["ranking_tau"], "{:+.2f}")}</td><td>{e(str(c["winner"] or "tied"))}</td>'
        f'<td>{n(c[PEAK_RHO], "{:.2f}")}</td><td>{n(c[MIN_W], "{:.2f}")}</td><td>{n(c[MAX_TOP1], "{}")}</td>'
        f"<td title=\"{e(c['terms'])}\">{e(c['headline'])}</td></tr>"
        for ev, c in found.items()
    )
    return (
        '<section id="competence"><h2>Competence at c0 vs fragility</h2><p class="muted">Left: how the '
        "evaluator ranks generators at the default configuration c0, against the symbolic companion "
        "(share of within-prompt generator pairs ordered alike, Kendall tau-b of generator means, c0 "
        "winner). Right: what the protocol does to it (peak rho, least Kendall W over factor levels, "
        "most distinct top-1 generators over one factor). " + DASH_LEGEND + "</p>"
        '<table class="sortable"><thead><tr><th scope="col">Evaluator</th><th scope="col">c0 agreement</th>'
        '<th scope="col">tau-b</th><th scope="col">c0 winner</th><th scope="col">peak rho</th>'
        '<th scope="col">min W</th><th scope="col">top-1s</th><th scope="col">In words</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def _search(data: ReportData) -> str:
    """The search beyond the grid (a profile's search block, docs/search.md "In an audit"): per
    evaluator the worst configuration, its discovery and held-out effect, optimism, whether it
    is confirmed, the flip region, the search trace, the confirmed worst configuration's render
    beside c0's and the flip-region figure (``search/<evaluator>.json``, ``_trace.png``,
    ``_worst_vs_c0.png``, ``_flip_region.png`` of the report directory); empty when no search
    ran."""
    docs = {p.stem: _read_json(p) for p in sorted((data.dir / "search").glob("*.json"))}
    docs = {ev: d for ev, d in docs.items() if isinstance(d, dict)}
    if not docs:
        return ""

    def ci(pair: object) -> str:
        return f"[{fmt(pair[0], 3)}, {fmt(pair[1], 3)}]" if isinstance(pair, list) and len(pair) == 2 else "—"

    rows, figures = [], []
    for ev, d in docs.items():
        worst, held, flip = d.get("worst") or {}, d.get("held_out") or {}, d.get("flip_region") or {}
        flip_text = (f"{fmt(flip.get('share'), 3)} {ci(flip.get('interval'))} of {flip.get('points')} points; "
                     f"{flip.get('where')}") if flip else "not sampled"  # fmt: skip
        rows.append(
            f'<tr data-ev="{e(ev)}"><th scope="row">{e(ev)}</th><td>{e(str(d.get("objective")))}</td>'
            f"<td>{e(str(d.get('trials')))} / {e(str(d.get('budget')))}, seed {e(str(d.get('seed')))}</td>"
            f"<td><code>{e(str(worst.get('text', '—')))}</code></td>"
            f"<td>{e(fmt((d.get('discovery') or {}).get('estimate'), 3))}</td>"
            f"<td>{e(fmt(held.get('estimate'), 3))} {e(ci(held.get('interval')))}</td>"
            f"<td>{e(fmt(d.get('optimism'), 3))}</td>"
            f"<td>{'confirmed' if d.get('confirmed') else e(held.get('reason') or 'not confirmed')}</td>"
            f"<td>{e(flip_text)}</td></tr>"
        )
        for suffix, alt, caption in (
            ("trace", "search trace", "effect per trial, best so far, threshold"),
            ("worst_vs_c0", "confirmed worst configuration beside c0",
             "one discovery scene rendered at c0 (left) and at the confirmed worst configuration (right)"),
            ("flip_region", "flip region", "the flip region's Sobol sample on two axes; red: the verdict flips"),
        ):  # fmt: skip
            png = data.dir / "search" / f"{ev}_{suffix}.png"
            if png.is_file():
                uri = "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode("ascii")
                figures.append(f'<figure class="fig"><img src="{uri}" alt="{alt} of {e(ev)}">'
                               f"<figcaption>{e(ev)}: {caption}</figcaption></figure>")
    return (
        '<section id="search"><h2>Search beyond the grid</h2><p class="muted">The worst configuration '
        "found on the discovery prompts, measured once on held-out prompts (95% paired prompt bootstrap); "
        "confirmed only when the held-out lower bound clears the objective's threshold. Optimism: "
        "discovery minus held-out effect. Flip region: share of a Sobol sample of the space where the "
        "order flips (95% Wilson interval). See docs/search.md.</p>"
        '<table class="sortable"><thead><tr><th scope="col">Evaluator</th><th scope="col">objective</th>'
        '<th scope="col">trials</th><th scope="col">worst configuration</th><th scope="col">discovery</th>'
        '<th scope="col">held-out [95% CI]</th><th scope="col">optimism</th><th scope="col">verdict</th>'
        '<th scope="col">flip region</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{''.join(figures)}</section>"
    )


def _humans(data: ReportData) -> str:
    """Agreement with human ratings (``--audit-human``, from the cards): per evaluator the c0
    Pearson r against the raters' noise ceiling, and per factor the r at each level."""
    found = {ev: c[HUMAN_AGREEMENT] for ev, c in sorted(data.cards.items())
             if isinstance(c, dict) and isinstance(c.get(HUMAN_AGREEMENT), dict)}
    if not found:
        return ""

    def ci(pair: object) -> str:
        return f"[{fmt(pair[0], 3)}, {fmt(pair[1], 3)}]" if isinstance(pair, list) and len(pair) == 2 else "—"

    def share(r: object, ceiling: object) -> str:
        ok = isinstance(r, (int, float)) and isinstance(ceiling, (int, float)) and ceiling > 0
        return f"{r / ceiling:.0%}" if ok else "—"

    first = next(iter(found.values()))["data"]
    label = "SIMULATED panel" if first.get("simulated") else "Human ratings"
    about = (f"{label}: <code>{e(str(first.get('file')))}</code> (sha256 "
             f"<code title=\"{e(str(first.get('sha256')))}\">{e(str(first.get('sha256'))[:12])}…</code>), "
             f"{e(str(first.get('raters')))} raters, {e(str(first.get('items')))} items, dimension "
             f"{e(str(first.get('dimension')))}; Krippendorff alpha (interval) "
             f"{e(fmt(first.get('krippendorff_alpha_interval'), 3))} "
             f"{e(ci(first.get('krippendorff_alpha_interval_ci')))}, noise ceiling "
             f"{e(fmt(first.get('noise_ceiling'), 3))} {e(ci(first.get('noise_ceiling_ci')))}.")
    rows = []
    for ev, h in found.items():
        c0, d = h.get("c0") or {}, h.get("data") or {}
        best = h.get("best_configuration") or {}
        if not best:
            best_text = "—"
        elif best.get("configuration") == "baseline":
            best_text = "c0 itself: no configuration agrees better on the selection half"
        else:
            best_text = (
                f"{best.get('configuration')}: r {fmt(best.get('confirmation_pearson'), 3)} on the "
                f"held-out prompts vs c0 {fmt(best.get('c0_confirmation_pearson'), 3)}, gain "
                f"{ci(best.get('confirmation_gain_ci'))} "
                f"({'confirmed' if best.get('confirmed') else 'not confirmed'})")
        rows.append(
            f'<tr data-ev="{e(ev)}"><th scope="row">{e(ev)}</th><td>{e(fmt(c0.get("pearson"), 3))}</td>'
            f"<td>{e(ci(c0.get('pearson_ci')))}</td><td>{e(fmt(d.get('noise_ceiling'), 3))}</td>"
            f"<td>{e(share(c0.get('pearson'), d.get('noise_ceiling')))}</td>"
            f"<td>{e(fmt(c0.get('kendall_tau_b'), 3))}</td><td>{e(str(h.get('joined_items')))}</td>"
            f"<td>{e(best_text)}</td></tr>"
        )
    factors = sorted({f for h in found.values() for f in (h.get("factors") or {})})
    tables = []
    for factor in factors:
        levels = sorted({lv for h in found.values() for lv in ((h.get("factors") or {}).get(factor) or {}).get("levels", {})})
        body = []
        for ev, h in found.items():
            entry = (h.get("factors") or {}).get(factor) or {}
            at = entry.get("levels") or {}
            cells = "".join(f"<td>{e(fmt(at.get(lv), 3))}</td>" for lv in levels)
            body.append(f'<tr data-ev="{e(ev)}"><th scope="row">{e(ev)}</th>'
                        f"<td>{e(fmt((h.get('c0') or {}).get('pearson'), 3))}</td>{cells}"
                        f"<td>{e(fmt(entry.get('max_drop'), 3))} {e(ci(entry.get('max_drop_ci')))}</td></tr>")
        head = "".join(f'<th scope="col">{e(lv)}</th>' for lv in levels)
        tables.append(
            f"<h4>{e(factor)}</h4><table class=\"sortable\"><thead><tr><th scope=\"col\">Evaluator</th>"
            f'<th scope="col">c0</th>{head}<th scope="col">largest drop [95% CI, simultaneous over levels]</th>'
            "</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>"
        )
    return (
        '<section id="humans"><h2>Humans</h2><p class="muted">' + about + " Agreement is Pearson r of "
        "the evaluator's scores with the mean rating of each rated scene; the noise ceiling is the r a "
        "perfect evaluator could reach given the raters' noise. Intervals: 95% prompt-block bootstrap; "
        "r at c0 pointwise, a factor's largest drop simultaneous over its levels (max-t), the best "
        "configuration's gain on the held-out prompts pointwise (confirmed only when it excludes 0).</p>"
        '<table class="sortable"><thead><tr><th scope="col">Evaluator</th><th scope="col">r at c0</th>'
        '<th scope="col">95% CI</th><th scope="col">noise ceiling</th><th scope="col">share of ceiling</th>'
        '<th scope="col">tau-b</th><th scope="col">items</th><th scope="col">best configuration '
        "(selected on half the prompts)</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table><h3>Agreement by level, per factor</h3>"
        + "".join(tables) + "</section>"
    )


def _registered(data: ReportData) -> str:
    """The registered statistics (:mod:`harness.report.registered`): one row per evaluator,
    one column per metric (per key of a keyed one); empty when none is registered."""
    from harness.report.registered import registered_grid, registered_text

    grid = registered_grid(data.summary)
    if grid is None:
        return ""
    head = "".join(f'<th scope="col">{e(c.label)}</th>' for c in grid.columns)
    rows = "".join(
        f'<tr data-ev="{e(ev)}"><th scope="row">{e(ev)}</th>'
        + "".join(f"<td>{e(registered_text(v))}</td>" for v in values) + "</tr>"
        for ev, values in grid.rows
    )
    return (
        '<section id="registered"><h2>Registered statistics</h2><p class="muted">Statistics '
        "registered from outside the study's code (harness.vocab.metrics.register_metric), from "
        "each evaluator's <code>registered</code> entry in summary.json; — where undefined.</p>"
        '<table class="sortable"><thead><tr><th scope="col">Evaluator</th>' + head
        + f"</tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _figures(data: ReportData) -> str:
    from harness.report.html_overview import figure_html, missing_figure_html

    out = []
    for name, alt in FIGURES:
        path = data.dir / "figures" / name
        if not path.is_file():
            out.append(missing_figure_html(name))
            continue
        uri = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
        out.append(figure_html(name, alt, uri))
    if not any(item.startswith("<figure") for item in out):
        return ""
    return '<section id="figures"><h2>Figures</h2><div class="figs">' + "".join(out) + "</div></section>"


def plural(n: int, noun: str) -> str:
    """``1 row``, ``5 rows``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def table_count(header: list[str], rows: list[list[str]], key: str) -> str:
    """What a collapsed table holds, in words: ``5 rows``; the failures table (one row per
    evaluator) counts its failed records, ``none failed`` when there are none."""
    if key == "failures" and "Failed" in header:
        column = header.index("Failed")
        failed = sum(int(r[column]) for r in rows if len(r) > column and r[column].isdigit())
        what = "none failed" if failed == 0 else plural(failed, "failed record")
        return f"{what}, {plural(len(rows), 'evaluator')}"
    return plural(len(rows), "row")


def _table_html(title: str, header: list[str], rows: list[list[str]], key: str) -> str:
    ev_col = 0 if header and header[0].lower().startswith("evaluator") else None
    head = "".join(f'<th scope="col"><button type="button" class="sort">{e(h)}</button></th>' for h in header)
    body = []
    for row in rows:
        attr = ""
        if ev_col is not None and row:
            attr = f' data-ev="{e(row[0].split(" (")[0].strip())}"'
        body.append(f"<tr{attr}>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
    return (
        f'<details class="table" id="t-{e(key)}"><summary>{e(title)} <span class="muted">({e(table_count(header, rows, key))})</span></summary>'
        f'<label class="filter">Filter rows <input type="search" class="rowfilter" aria-label="Filter rows of {e(title)}"></label>'
        f'<div class="scroll"><table class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div></details>'
    )


def _tables(data: ReportData) -> str:
    out = []
    for path in sorted((data.dir / "tables").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh))
        if not rows:
            continue
        md = path.with_suffix(".md")
        title = path.stem
        if md.is_file():
            first = md.read_text(encoding="utf-8").splitlines()[:1]
            if first and first[0].startswith("**"):
                title = first[0].strip("* ")
        out.append(_table_html(title, rows[0], rows[1:], path.stem))
    if not out:
        return ""
    return ('<section id="tables"><h2>Tables</h2><p class="muted">Click a column header to sort; type to filter. '
            + DASH_LEGEND + "</p>" + _not_applicable_html(data) + "".join(out) + "</section>")


def _not_applicable_html(data: ReportData) -> str:
    """One line per factor that cannot change some scenes' images (lighting on 3D Gaussian
    splats, baked radiance), from the manifest's ``options.factors_not_applicable``: the
    tables' statistics of that factor cover the other scenes only; it is not a null effect."""
    options = data.manifest.get("options", {}) if isinstance(data.manifest, dict) else {}
    per_scene = options.get("factors_not_applicable") or {}
    counts: dict[str, int] = {}
    for factors in per_scene.values() if isinstance(per_scene, dict) else ():
        for factor in factors if isinstance(factors, list) else ():
            counts[str(factor)] = counts.get(str(factor), 0) + 1
    return "".join(
        f'<p class="muted na" data-factor="{e(factor)}">{e(factor)}: not applicable to {n} scene(s) '
        "of 3D Gaussian splats (their colour is baked radiance); the tables' statistics of this "
        "factor cover the other scenes only, and are not a null effect for these.</p>"
        for factor, n in sorted(counts.items())
    )


def _level_stats(frame: object, factor: str) -> tuple[list[str], dict[str, list[tuple[str, float]]]]:
    """Levels of ``factor`` in record order and, per level, generators by mean score (best
    first, over every prompt; failed rows excluded)."""
    rows = frame[frame["factor"] == factor]
    levels = list(dict.fromkeys(rows["level"]))
    ok = rows[rows["status"] == "ok"]
    means = ok.groupby(["level", "generator"], sort=True)["score"].mean()
    ranking: dict[str, list[tuple[str, float]]] = {}
    for level in levels:
        if level in means.index.get_level_values(0):
            items = [(str(g), float(v)) for g, v in means.loc[level].items()]
            ranking[level] = sorted(items, key=lambda t: (-t[1], t[0]))
        else:
            ranking[level] = []
    return levels, ranking


def prompt_winners(scores: Mapping[str, Mapping[str, float]]) -> dict[str, str | None]:
    """Level → the generator with the top score of one prompt (ties: the first by name);
    ``None`` for a level without scores."""
    return {lv: (min(by, key=lambda g: (-by[g], g)) if by else None) for lv, by in scores.items()}


def usual_winner(winners: Mapping[str, str | None]) -> str | None:
    """The generator that wins at the most levels (ties: the first by name)."""
    counts: dict[str, int] = {}
    for winner in winners.values():
        if winner is not None:
            counts[winner] = counts.get(winner, 0) + 1
    return min(counts, key=lambda g: (-counts[g], g)) if counts else None


def winner_caption(winners: Mapping[str, str | None]) -> tuple[str, int]:
    """A strip's caption in words and the number of levels whose winner is not the usual
    one: ``same winner (gen-a) at every level`` or ``the winner changes: gen-a at 5 of 7
    levels, gen-b at 2 (⇄)``."""
    scored = [w for w in winners.values() if w is not None]
    if not scored:
        return "no scores at any level", 0
    counts: dict[str, int] = {}
    for winner in scored:
        counts[winner] = counts.get(winner, 0) + 1
    if len(counts) == 1:
        return f"same winner ({scored[0]}) at every level", 0
    order = sorted(counts, key=lambda g: (-counts[g], g))
    parts = [f"{order[0]} at {counts[order[0]]} of {plural(len(scored), 'level')}",
             *(f"{g} at {counts[g]}" for g in order[1:])]
    return "the winner changes: " + ", ".join(parts) + " (⇄)", len(scored) - counts[order[0]]


def _shown_levels(levels: list[str], ranking: Mapping[str, list[tuple[str, float]]]) -> list[str]:
    if len(levels) <= MAX_LEVELS:
        return levels
    first = ranking[levels[0]][0][0] if ranking[levels[0]] else None
    flips = [lv for lv in levels if ranking[lv] and ranking[lv][0][0] != first][: MAX_LEVELS // 2]
    keep = set(flips)
    for lv in levels:
        if len(keep) >= MAX_LEVELS:
            break
        keep.add(lv)
    return [lv for lv in levels if lv in keep]


class Thumbs:
    """Embedded thumbnails: index lookups and the data URIs of the images used on the page."""

    def __init__(self, data: ReportData):
        self.dir = data.dir / THUMB_DIR
        self.by_key: dict[tuple[str, str, str, str], dict[str, object]] = {}
        self.prompts: list[str] = []
        if data.thumbs is not None:
            self.prompts = [str(p) for p in data.thumbs.get("prompts", [])]
            for entry in data.thumbs["images"]:
                key = (entry.get("generator"), entry.get("prompt_id"), entry.get("factor"), entry.get("level"))
                self.by_key[tuple(str(k) for k in key)] = entry
        self.used: dict[str, str] = {}

    def img(self, generator: str, prompt: str, factor: str, level: str, alt: str) -> str:
        entry = self.by_key.get((generator, prompt, factor, level))
        name = entry.get("file") if entry else None
        if not name or not (self.dir / str(name)).is_file():
            why = (entry or {}).get("error") or "no thumbnail in this report"
            return f'<div class="noimg" role="img" aria-label="{e(alt)}: {e(why)}">{e(why[:60])}</div>'
        key = str(name).rsplit(".", 1)[0]
        if key not in self.used:
            self.used[key] = self._embed(self.dir / str(name))
        return (f'<a href="{THUMB_DIR}/{e(str(name))}" class="thumb"><img data-thumb="{e(key)}" alt="{e(alt)}" '
                f'width="{EMBED_PX}" height="{EMBED_PX}" decoding="async"></a>')

    @staticmethod
    def _embed(path: Path) -> str:
        from PIL import Image

        with Image.open(path) as im:
            im = im.convert("RGB")
            im.thumbnail((EMBED_PX, EMBED_PX), Image.Resampling.LANCZOS)
            out = io.BytesIO()
            im.save(out, format="JPEG", quality=EMBED_QUALITY, optimize=True)
        return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def _scores_at(frame: object, prompt: str, factor: str, level: str) -> dict[str, float]:
    """Generator → score of the ok rows of one prompt at one factor level."""
    return _score_index(frame).get((prompt, factor, level), {})


_INDEXES: dict[int, tuple[object, dict[tuple[str, str, str], dict[str, float]]]] = {}


def _score_index(frame: object) -> dict[tuple[str, str, str], dict[str, float]]:
    """(prompt, factor, level) → {generator: score} of ``frame``'s ok rows, built once per frame (cleared after each page build)."""
    cached = _INDEXES.get(id(frame))
    if cached is not None and cached[0] is frame:
        return cached[1]
    index: dict[tuple[str, str, str], dict[str, float]] = {}
    ok = frame[frame["status"] == "ok"]
    for g, p, f, lv, sc in zip(ok["generator"], ok["prompt_id"], ok["factor"], ok["level"], ok["score"], strict=True):
        index.setdefault((str(p), str(f), str(lv)), {})[str(g)] = float(sc)
    _INDEXES[id(frame)] = (frame, index)
    return index


def _strip(ev: str, frame: object, factor: str, prompt: str, thumbs: Thumbs) -> str:
    levels, ranking = _level_stats(frame, factor)
    shown = _shown_levels(levels, ranking)
    generators = sorted(set(frame["generator"]))
    # the caption and the ⇄ marks speak of the prompt shown (its ★), not the all-prompt means
    winners = prompt_winners({lv: _scores_at(frame, prompt, factor, lv) for lv in levels})
    usual = usual_winner(winners)
    head = ['<th scope="col">generator</th>']
    for lv in shown:
        flip = winners.get(lv) is not None and winners[lv] != usual
        head.append(f'<th scope="col"{" class=flip" if flip else ""}>{e(lv)}{" ⇄" if flip else ""}</th>')
    body = []
    scores = {lv: _scores_at(frame, prompt, factor, lv) for lv in shown}
    for g in generators:
        cells = [f'<th scope="row">{e(g)}</th>']
        for lv in shown:
            s = scores[lv].get(g)
            top = s is not None and s == max(scores[lv].values())
            alt = f"{g}, prompt {prompt}, {factor} = {lv}, {ev} score {fmt(s)}"
            cells.append(
                f'<td{" class=top" if top else ""}>{thumbs.img(g, prompt, factor, lv, alt)}'
                f'<span class="score">{fmt(s)}{" ★" if top else ""}</span></td>'
            )
        body.append("<tr>" + "".join(cells) + "</tr>")
    rank_cells = ['<th scope="row">ranking<br><span class="muted">mean, all prompts</span></th>']
    for lv in shown:
        items = "".join(f"<li>{e(g)} <span class='muted'>{fmt(v, 3)}</span></li>" for g, v in ranking[lv])
        rank_cells.append(f'<td class="rank"><ol>{items}</ol></td>')
    body.append('<tr class="ranking">' + "".join(rank_cells) + "</tr>")
    more = "" if len(shown) == len(levels) else (
        f'<p class="muted">Showing {len(shown)} of {len(levels)} levels (levels where the winner changes first).</p>')
    caption_text, changes = winner_caption(winners)
    caption = f"{e(ev)} · {e(factor)} · prompt {e(prompt)}: {e(caption_text)}"
    return (f'<details class="strip" data-prompt="{e(prompt)}"{" open" if changes else ""}>'
            f'<summary>{caption}</summary>{more}'
            f'<div class="scroll"><table class="strip"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div></details>')


def _strips(data: ReportData, thumbs: Thumbs) -> str:
    prompts = thumbs.prompts or sorted(
        {p for f in data.records.values() for p in f["prompt_id"]})[:1]
    out = []
    for ev in data.evaluators:
        frame = data.records.get(ev)
        if frame is None:
            continue
        factors = _ordered({f for f in frame["factor"]} - {"baseline", "probe"}, factor_names())
        parts = [_strip(ev, frame, f, p, thumbs) for f in factors for p in prompts]
        out.append(f'<details class="ev" data-ev="{e(ev)}"><summary>{e(ev)}</summary>{"".join(parts)}</details>')
    return ('<section id="strips"><h2>Factor strips</h2><p class="muted">One prompt\'s scenes (one row per '
            "generator) across each factor's levels, with this evaluator's score under each image (★ best "
            "for this prompt) and the generator ranking over all prompts; ⇄ marks a level whose winner "
            "differs from the first level's; strips with a winner change start open. Click a thumbnail "
            "for the stored render.</p>"
            + "".join(out) + "</section>")


def _probe_pairs(data: ReportData, thumbs: Thumbs) -> str:
    prompts = thumbs.prompts or sorted({p for f in data.records.values() for p in f["prompt_id"]})[:1]
    comp = data.records.get(data.companion) if data.companion else None
    out = []
    for ev in data.evaluators:
        frame = data.records.get(ev)
        if frame is None:
            continue
        probes = _ordered(set(frame.loc[frame["factor"] == "probe", "level"]), probe_names())
        parts = []
        for probe in probes:
            rows = []
            for prompt in prompts:
                intact = _scores_at(frame, prompt, "baseline", "c0")
                edited = _scores_at(frame, prompt, "probe", probe)
                c_in = _scores_at(comp, prompt, "baseline", "c0") if comp is not None else {}
                c_ed = _scores_at(comp, prompt, "probe", probe) if comp is not None else {}
                for g in sorted(set(intact) | set(edited)):
                    a, b = intact.get(g), edited.get(g)
                    drop = "—" if a is None or b is None else ("drops ✓" if b < a else "tie" if b == a else "rises ✗")
                    if g in c_in and g in c_ed:
                        damaging = c_ed[g] < c_in[g]
                        verdict = ("damaging" if damaging else "not damaging") + f" ({fmt(c_in[g], 3)} → {fmt(c_ed[g], 3)})"
                    else:
                        verdict = "no companion in this report"
                    rows.append(
                        f'<div class="pair" data-prompt="{e(prompt)}"><div class="side">'
                        f'{thumbs.img(g, prompt, "baseline", "c0", f"{g} prompt {prompt} intact, score {fmt(a)}")}'
                        f'<span>intact<br><b>{fmt(a)}</b></span></div><div class="side">'
                        f'{thumbs.img(g, prompt, "probe", probe, f"{g} prompt {prompt} {probe}, score {fmt(b)}")}'
                        f'<span>{e(probe)}<br><b>{fmt(b)}</b></span></div>'
                        f'<p><b>{e(g)}</b> · prompt {e(prompt)}<br>{e(ev)}: {drop}<br>companion: {e(verdict)}</p></div>'
                    )
            parts.append(f'<h4>{e(probe)}</h4><div class="pairs">{"".join(rows)}</div>')
        if parts:
            out.append(f'<details class="ev" data-ev="{e(ev)}"><summary>{e(ev)}</summary>{"".join(parts)}</details>')
    if not out:
        from harness.report.figures import NO_PROBE_NOTE

        return f'<section id="probes"><h2>Probe pairs</h2><p class="muted">{e(NO_PROBE_NOTE)}</p></section>'
    return ('<section id="probes"><h2>Probe pairs</h2><p class="muted">Each probe edit next to the intact '
            "scene, with this evaluator's scores and whether the symbolic companion confirms the edit "
            "damages the scene.</p>" + "".join(out) + "</section>")


def _comparison(data: ReportData) -> str:
    from harness.report.html_overview import indicative_suffix, mark_regressions

    doc = data.comparison
    if not isinstance(doc, dict):
        return ""
    parts = [f"<p>baseline <code>{e(str(doc.get('baseline')))}</code> → candidate "
             f"<code>{e(str(doc.get('candidate')))}</code> · exit code {e(str(doc.get('exit_code')))}</p>"]
    for pair in doc.get("pairs", []):
        header = ["metric", "factor / probe", "baseline", "candidate", "difference", "95% CI", "margin", "verdict"]
        rows = []
        for m in pair.get("metrics", []):
            ci = m.get("ci") or [None, None]
            sign = "+" if m.get("harmful") == "increase" else "−"
            rows.append([str(m.get("kind")), str(m.get("subject") or "—"), fmt(m.get("baseline")),
                         fmt(m.get("candidate")), fmt(m.get("difference")), f"[{fmt(ci[0])}, {fmt(ci[1])}]",
                         f"{sign}{fmt(m.get('margin'))}", str(m.get("verdict")) + indicative_suffix(pair)])
        title = f"{pair.get('baseline_evaluator')} → {pair.get('candidate_evaluator')}"
        parts.append(mark_regressions(_table_html(title, header, rows, f"cmp-{pair.get('candidate_evaluator')}").replace(
            '<details class="table"', '<details class="table" open', 1)))
    return '<section id="comparison"><h2>Release comparison</h2>' + "".join(parts) + "</section>"


def _value_html(value: object) -> str:
    if isinstance(value, dict):
        if not value:
            return '<span class="muted">{}</span>'
        return "<dl>" + "".join(f"<dt>{e(str(k))}</dt><dd>{_value_html(v)}</dd>" for k, v in value.items()) + "</dl>"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return e(", ".join(fmt(v) if isinstance(v, float) else str(v) for v in value)) or '<span class="muted">[]</span>'
        return "<ol>" + "".join(f"<li>{_value_html(v)}</li>" for v in value) + "</ol>"
    if isinstance(value, float):
        return e(fmt(value))
    return e("null" if value is None else str(value))


def _cards(data: ReportData) -> str:
    from harness.report.verdict_words import card_sample_html

    out = []
    for ev, card in data.cards.items():
        cid = card.get("card_id", "") if isinstance(card, dict) else ""
        out.append(f'<details class="card" data-ev="{e(ev)}"><summary>{e(ev)} <code class="muted">{e(str(cid))}</code>'
                   f'{card_sample_html(card)}</summary><a href="cards/{e(ev)}.json">cards/{e(ev)}.json</a>{_value_html(card)}</details>')
    return '<section id="cards"><h2>Evaluator Configuration Cards</h2>' + "".join(out) + "</section>"


def _provenance(data: ReportData) -> str:
    m = data.manifest if isinstance(data.manifest, dict) else {}
    source = m.get("source") or {}
    inputs = [[str(i.get("path")), str(i.get("role")), str(i.get("sha256", ""))[:16]] for i in m.get("inputs", [])]
    # render_host names the machine and is never compared (docs/report-format.md): left out so
    # the page is the same wherever the report is rebuilt
    shown = {k: m.get(k) for k in ("packages", "options")}
    return (
        '<section id="provenance"><h2>Provenance</h2>'
        f"<p>run <code>{e(data.run_id)}</code> · <span id=\"prov-source\">source <code>"
        f"{e(str(source.get('revision')))}</code> (commit <code>{e(str(source.get('commit')))}</code>)"
        f"</span> · schema <code>{e(str(m.get('schema')))}</code> · render host: see "
        '<a href="manifest.json">manifest.json</a></p>'
        + _table_html("Inputs", ["path", "role", "sha256 (16 hex)"], inputs, "inputs")
        + f'<details class="card"><summary>Packages and options</summary>{_value_html(shown)}</details>'
        + "</section>"
    )


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def csp_hash(text: str) -> str:
    """The CSP source expression allowing exactly the inline element whose content is ``text``
    (``'sha256-<base64 of the sha256 of its UTF-8 bytes>'``)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def csp(css: str, js: str) -> str:
    """The page's Content-Security-Policy: nothing is fetched but embedded images; the one
    inline style and the one inline script run only because their hashes are listed, so no
    injected script, event handler, ``javascript:`` URL or style can run."""
    return (f"default-src 'none'; img-src data: file: 'self'; style-src {csp_hash(css)}; "
            f"script-src {csp_hash(js)}; base-uri 'none'; form-action 'none'")


def script_json(value: object) -> str:
    """``value`` as JSON safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` escaped as
    ``\\u003c``, ``\\u003e``, ``\\u0026`` (no ``</script>`` or ``<!--`` can end or change it)."""
    text = json.dumps(value, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def build_html(report: Path, cache_dir: Path | None = None) -> str:
    """The page of the report directory ``report`` (see module docstring); with ``cache_dir``
    its factor strips and probe pairs come from the report-piece cache when their inputs are
    unchanged (:func:`thumb_sections`; the same bytes either way)."""
    data = ReportData(report)
    thumbs = Thumbs(data)
    strips, probes = thumb_sections(data, thumbs, cache_dir)
    competence = _competence(data)
    humans = _humans(data)
    searched = _search(data)
    from harness.report.html_overview import verdict_matrix

    matrix = verdict_matrix(data.results.get("results", []), data.cards, data.comparison)
    registered = _registered(data)
    body = [matrix, competence, humans, searched, _verdict(data), _figures(data), strips, probes, _comparison(data),
            registered, _tables(data), _cards(data), _provenance(data)]
    nav = [("verdict-matrix", "Verdict")] + ([("competence", "Competence")] if competence else [])
    nav += [("humans", "Humans")] if humans else []
    nav += [("search", "Search")] if searched else []
    nav += [("verdict", "Failing checks")]
    nav += [("figures", "Figures"), ("strips", "Factor strips"), ("probes", "Probe pairs")]
    if data.comparison is not None:
        nav.append(("comparison", "Comparison"))
    nav += [("registered", "Registered")] if registered else []
    nav += [("tables", "Tables"), ("cards", "Cards"), ("provenance", "Provenance")]
    ev_options = "".join(f'<option value="{e(ev)}">{e(ev)}</option>' for ev in data.evaluators)
    prompt_options = "".join(f'<option value="{e(p)}">{e(p)}</option>' for p in thumbs.prompts)
    prompt_select = (f'<label>Prompt <select id="f-prompt">{prompt_options}</select></label>'
                     if len(thumbs.prompts) > 1 else "")
    thumbs_json = script_json(dict(sorted(thumbs.used.items())))
    css, js = _asset("report.css"), _asset("report.js")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{e(csp(css, js))}\">"
        f"<title>t3d-audit report {e(data.run_id)}</title><style>{css}</style></head><body>"
        '<a class="skip" href="#main">Skip to content</a>'
        f'<header><h1>t3d-audit report <code>{e(data.run_id)}</code></h1><nav aria-label="Sections"><ul>'
        + "".join(f'<li><a href="#{k}">{v}</a></li>' for k, v in nav)
        + '</ul></nav><form class="filters" role="search">'
        f'<label>Evaluator <select id="f-ev"><option value="">all</option>{ev_options}</select></label>'
        '<label><input type="checkbox" id="f-failing"> failing only</label>'
        f"{prompt_select}</form></header>"
        '<main id="main">' + "".join(body) + "</main>"
        f'<script type="application/json" id="thumb-data">{thumbs_json}</script>'
        f"<script>{js}</script></body></html>\n"
    )


# files `t3d-audit html` may (re)list in the manifest: the page, and the comparison that
# `compare --out` writes into a report directory for the page to show (docs/release-gate.md)
RELISTED = (HTML_NAME, "comparison.json", "comparison.md")


def write_html(report: Path, cache_dir: Path | None = None) -> Path:
    """Write ``<report>/report.html`` (temporary file, then rename) and, when the report has a
    manifest, record the sha256 of the files of :data:`RELISTED` among its outputs; returns
    the page's path. ``cache_dir``: the page and its sections come from the report-piece cache
    where their inputs are unchanged (:func:`cached_page`).

    The manifest is verified first: any other file it lists that is missing or whose sha256
    differs (an edited report) is a :class:`~harness.core.errors.CardError` and nothing is
    written, so rebuilding the page never re-blesses an edited report."""
    import os
    from pathlib import PurePosixPath

    from harness.cards.provenance import load_manifest, refuse_edited_outputs, write_manifest
    from harness.core.hashing import sha256_file

    report = Path(report)
    path = report / HTML_NAME
    manifest = load_manifest(report) if (report / "manifest.json").is_file() else None
    if manifest is not None:
        refuse_edited_outputs(report, manifest, keep=RELISTED)
    text = cached_page(report, cache_dir)
    tmp = report / f".{HTML_NAME}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    if manifest is not None:
        outputs = [e for e in manifest["outputs"] if e["path"] not in RELISTED]
        outputs += [{"path": name, "sha256": sha256_file(report / name)} for name in RELISTED
                    if (report / name).is_file()]  # fmt: skip
        outputs.sort(key=lambda e: PurePosixPath(e["path"]))  # output_entries' order
        if manifest.get("outputs") != outputs:
            manifest["outputs"] = outputs
            write_manifest(manifest, report)
    return path


# ----------------------------------------------------------------------------- cached sections


def _page_code() -> list[Path]:
    """The sources and assets the page is made from (its report-piece keys hash them)."""
    from harness.report.pieces import report_sources

    return report_sources()


def page_key(report: Path) -> str:
    """The ``html-page`` piece's cache key: every file of the report directory the page is
    built from (all but ``report.html``, by sha256), the page's sources and assets, the
    numpy, pandas and Pillow versions and, when some are, the registered statistics shown."""
    from harness.core.code_identity import package_versions, source_hash
    from harness.core.hashing import sha256_file
    from harness.report.pieces import piece_key
    from harness.report.registered import report_metrics

    report = Path(report)
    files = sorted(p for p in report.rglob("*") if p.is_file())
    registered = [m.name for m in report_metrics()]  # the page's registered section
    return piece_key("html-page", {
        "code": source_hash(_page_code()),
        "packages": package_versions(["numpy", "pandas", "pillow"]),
        "files": {p.relative_to(report).as_posix(): sha256_file(p)
                  for p in files if p.relative_to(report).as_posix() != HTML_NAME},
        **({"registered": registered} if registered else {}),
    })


def cached_page(report: Path, cache_dir: Path | None = None) -> str:
    """:func:`build_html` of ``report``; with ``cache_dir`` the page is reused from the
    ``html-page`` report piece (:mod:`harness.report.pieces`) when :func:`page_key` finds
    one, else built (its sections through :func:`thumb_sections`) and stored."""
    if cache_dir is None:
        return build_html(report)
    from harness.report.pieces import piece_entries

    entries = piece_entries(Path(cache_dir), "html-page")
    key = page_key(report)
    payload = entries.get(key)
    if payload is not None:
        try:
            return payload.decode("utf-8")
        except UnicodeDecodeError:
            pass
    text = build_html(report, cache_dir)
    entries.put(key, text.encode("utf-8"))
    return text


def _build_thumb_sections(data: ReportData, thumbs: Thumbs) -> tuple[str, str]:
    try:
        return _strips(data, thumbs), _probe_pairs(data, thumbs)
    finally:
        _INDEXES.clear()


def thumb_sections_key(data: ReportData) -> str:
    """The ``html-sections`` piece's cache key: every input of :func:`_strips` and
    :func:`_probe_pairs` (the score files, evaluators and companion, every file under
    ``thumbs/``), the sources that read and lay them out, and the Pillow, pandas and numpy
    versions (embedded thumbnails, score means)."""
    from harness.core.code_identity import package_versions, source_hash
    from harness.core.hashing import sha256_file
    from harness.report.pieces import piece_key

    thumb_dir = data.dir / THUMB_DIR
    return piece_key("html-sections", {
        "code": source_hash(_page_code()),
        "packages": package_versions(["numpy", "pandas", "pillow"]),
        "evaluators": list(data.evaluators),
        "companion": data.companion,
        "scores": {p.name: sha256_file(p) for p in sorted((data.dir / "scores").glob("*.csv"))},
        "thumbs": {p.relative_to(thumb_dir).as_posix(): sha256_file(p)
                   for p in sorted(thumb_dir.rglob("*")) if p.is_file()},
    })


def thumb_sections(data: ReportData, thumbs: Thumbs, cache_dir: Path | None = None) -> tuple[str, str]:
    """The factor strips and probe pairs sections (they embed the thumbnails, recorded in
    ``thumbs.used``); with ``cache_dir``, reused from and stored in the ``html-sections``
    report piece (:mod:`harness.report.pieces`) under :func:`thumb_sections_key`."""
    if cache_dir is None:
        return _build_thumb_sections(data, thumbs)
    from harness.core.hashing import canonical_json
    from harness.report.pieces import piece_entries

    entries = piece_entries(Path(cache_dir), "html-sections")
    key = thumb_sections_key(data)
    payload = entries.get(key)
    if payload is not None:
        try:
            doc = json.loads(payload)
            strips, probes, used = doc["strips"], doc["probes"], doc["used"]
        except (ValueError, KeyError, TypeError):
            pass
        else:
            if isinstance(strips, str) and isinstance(probes, str) and isinstance(used, dict):
                thumbs.used.update(used)
                return strips, probes
    before = set(thumbs.used)
    strips, probes = _build_thumb_sections(data, thumbs)
    used = {k: v for k, v in thumbs.used.items() if k not in before}
    entries.put(key, canonical_json({"strips": strips, "probes": probes, "used": used}))
    return strips, probes
