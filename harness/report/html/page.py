"""``report.html``: one self-contained page to look at a report directory.

A writer over the report directory only (scores/, summary.json, tables/, figures/, cards/,
results.json, manifest.json, thumbs/, search/, claims/, comparison.json if present), never the caches, so
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
* the search beyond the grid (``search/``) and the claims the run's tests made
  (``claims/<name>/``: verdict, evidence, card ID, the paper block, figures, a link to the
  claim's own page);
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
import json
from pathlib import Path

from harness.report.html.data import ReportData, e, fmt, plural, read_report_file
from harness.report.html.strips import Thumbs, thumb_sections
from harness.vocab.metrics import HUMAN_AGREEMENT, MAX_TOP1, MIN_W, PEAK_RHO

HTML_NAME = "report.html"
ASSETS = Path(__file__).parent.parent / "html_assets"
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
    missing = data.results.get("missing") or []
    why = f"missing {', '.join(missing[:10])}" if missing else f"the run ran {data.results.get('selection')}"
    note = "" if complete is not False else '<p class="warn">⚠ Partial report: ' + e(why) + "</p>"
    from harness.checks.evidence import check_outcomes, evidence_summary

    checks = check_outcomes(data.results.get("results"))
    if checks:
        note += '<p class="evidence">' + e(evidence_summary(checks)) + "</p>"
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


def _png_uri(path: Path) -> str:
    """The PNG file ``path`` as a ``data:`` URI (the page requests nothing)."""
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _captioned_png(png: Path, owner: str, alt: str, caption: str) -> str:
    """A figure of the PNG ``png`` inline, captioned "``owner``: ``caption``" (``alt`` and
    ``caption`` are the page's own words); ``""`` when the file is absent."""
    if not png.is_file():
        return ""
    return (f'<figure class="fig"><img src="{_png_uri(png)}" alt="{alt} of {e(owner)}">'
            f"<figcaption>{e(owner)}: {caption}</figcaption></figure>")  # fmt: skip


def _search(data: ReportData) -> str:
    """The search beyond the grid (a profile's search block, docs/search.md "In an audit"): per
    evaluator the worst configuration, its discovery and held-out effect, optimism, whether it
    is confirmed, the flip region, the search trace, the confirmed worst configuration's render
    beside c0's and the flip-region figure (``search/<evaluator>.json``, ``_trace.png``,
    ``_worst_vs_c0.png``, ``_flip_region.png`` of the report directory); empty when no search
    ran."""
    docs = {p.stem: read_report_file(p) for p in sorted((data.dir / "search").glob("*.json"))}
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
            figures.append(_captioned_png(data.dir / "search" / f"{ev}_{suffix}.png", ev, alt, caption))
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


#: A claim's figures in the report (``claims/<name>/``): file, alt text, caption.
CLAIM_FIGURES = (
    ("claim_envelope.png", "margin envelope", "the pair's margin over the grid with its simultaneous band"),
    ("claim_presets.png", "preset gaps", "the gap under each of the field's presets"),
    ("claim_worst_vs_c0.png", "worst configuration beside c0",
     "one scene rendered at c0 (left) and at the search's confirmed worst configuration (right)"),
)


def _claims(data: ReportData) -> str:
    """The claims the run's tests made (``audit_claim``, docs/claims.md "In an audit"): per
    claim its verdict line, evidence level and card ID, the paper block (Markdown) to paste,
    its figures and a link to its own page (``claims/<name>/claim.json``, ``claim.md``,
    ``claim.html`` and the figures of the report directory); empty when no test made one."""
    folders = sorted(p.parent for p in (data.dir / "claims").glob("*/claim.json"))
    rows, blocks = [], []
    for folder in folders:
        doc = read_report_file(folder / "claim.json")
        if not isinstance(doc, dict):
            continue
        verdict = doc.get("verdict") if isinstance(doc.get("verdict"), dict) else {}
        href = f"claims/{folder.name}/claim.html"
        rows.append(
            f'<tr data-ev="{e(str(doc.get("evaluator")))}"><th scope="row">{e(str(doc.get("evaluator")))}</th>'
            f"<td>{e(str(verdict.get('line', '—')))}</td><td>{e(str(verdict.get('evidence', '—')))}</td>"
            f"<td><code>{e(str(doc.get('card_id', '—')))}</code></td>"
            f'<td><a href="{e(href)}">{e(folder.name)}</a></td></tr>'
        )
        md = folder / "claim.md"
        paper = md.read_text(encoding="utf-8", errors="replace") if md.is_file() else ""
        figures = []
        for name, alt, caption in CLAIM_FIGURES:
            figures.append(_captioned_png(folder / name, folder.name, alt, caption))
        blocks.append(f"<h3>{e(folder.name)}</h3><pre>{e(paper)}</pre>{''.join(figures)}")
    if not rows:
        return ""
    return (
        '<section id="claims"><h2>Claims</h2><p class="muted">"A beats B" under each evaluator, as the '
        "run's tests asked it: checked on the grid (one simultaneous band over every protocol), under "
        "the field's presets and by the search beyond the grid. Each block below is the paper-ready "
        "Markdown; the LaTeX and the card sit beside it. See docs/claims.md.</p>"
        '<table class="sortable"><thead><tr><th scope="col">Evaluator</th><th scope="col">verdict</th>'
        '<th scope="col">evidence</th><th scope="col">card ID</th><th scope="col">files</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{''.join(blocks)}</section>"
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
    from harness.report.html.overview import figure_html, missing_figure_html

    out = []
    for name, alt in FIGURES:
        path = data.dir / "figures" / name
        if not path.is_file():
            out.append(missing_figure_html(name))
            continue
        out.append(figure_html(name, alt, _png_uri(path)))
    if not any(item.startswith("<figure") for item in out):
        return ""
    return '<section id="figures"><h2>Figures</h2><div class="figs">' + "".join(out) + "</div></section>"


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


def _comparison(data: ReportData) -> str:
    from harness.report.html.overview import indicative_suffix, mark_regressions

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
    claimed = _claims(data)
    from harness.report.html.overview import verdict_matrix

    matrix = verdict_matrix(data.results.get("results", []), data.cards, data.comparison)
    registered = _registered(data)
    body = [matrix, competence, humans, searched, claimed, _verdict(data), _figures(data), strips, probes, _comparison(data),
            registered, _tables(data), _cards(data), _provenance(data)]
    nav = [("verdict-matrix", "Verdict")] + ([("competence", "Competence")] if competence else [])
    nav += [("humans", "Humans")] if humans else []
    nav += [("search", "Search")] if searched else []
    nav += [("claims", "Claims")] if claimed else []
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
