"""``claim.html``: one self-contained page of a claim (the verdict, the evidence, the figures
and the paper block), built like ``report.html`` (:mod:`harness.report.html.page`): the
report's stylesheet inline, figures as data URIs, nothing fetched, every value escaped
(:data:`harness.report.html.data.e`), and a Content-Security-Policy that lets only the page's
own style apply (by its sha256 hash) and runs no script at all. The bytes depend only on the
claim document, the paper block and the figures' bytes.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence

from harness.report.html.data import e, fmt
from harness.report.html.page import ASSETS, csp_hash

#: Figure file names and their alternative texts, in page order.
FIGURES = (
    ("claim_envelope.png", "The pair's margin at every grid protocol and preset with its simultaneous-band interval."),
    ("claim_presets.png", "The pair's margin under each preset beside c0's."),
    ("claim_worst_vs_c0.png", "One scene rendered at c0 beside the search's worst configuration."),
    ("claim_matrix.png", "The class of every pairwise claim, row beats column."),
)


def page_csp(css: str) -> str:
    """No script, no fetch: only embedded images and the page's own stylesheet."""
    return (f"default-src 'none'; img-src data:; style-src {csp_hash(css)}; script-src 'none'; "
            "base-uri 'none'; form-action 'none'")


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{e(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _pair_section(pair: Mapping[str, object]) -> str:
    verdict = pair.get("verdict") or {}
    ev = pair.get("evidence") or {}
    search = pair.get("search") or {}
    parts = [f"<h3>{e(str(pair.get('a')))} vs {e(str(pair.get('b')))}</h3>",
             f"<p class=\"verdict\"><strong>{e(str(verdict.get('line', '')))}</strong></p>",
             f"<p>Evidence: {e(str(verdict.get('evidence', '')))}. {e(str(verdict.get('scope', '')))}</p>"]  # fmt: skip
    details = verdict.get("details") or []
    if details:
        parts.append("<ul>" + "".join(f"<li>{e(str(d))}</li>" for d in details) + "</ul>")
    protocols = [*(ev.get("grid") or []), *(ev.get("presets") or [])]
    reversing = [p for p in protocols if isinstance(p.get("gap"), int | float) and p["gap"] < 0]
    if reversing:
        parts.append("<h4>Protocols where B scores higher</h4>" + _table(
            ["protocol", "kind", "margin", "band low", "band high"],
            [[p["name"], p["kind"], fmt(p["gap"]), fmt(p["band"][0]), fmt(p["band"][1])] for p in reversing[:50]]))
    if search.get("ran"):
        held = search.get("held_out") or {}
        worst = (search.get("worst") or {}).get("text", "")
        flip = search.get("flip_region") or {}
        parts.append("<h4>Search beyond the grid</h4>" + _table(
            ["worst configuration", "discovery", "held-out", "interval", "confirmed", "flip share", "where"],
            [[worst, fmt((search.get("discovery") or {}).get("estimate")), fmt(held.get("estimate")),
              f"[{fmt((held.get('interval') or [None, None])[0])}, {fmt((held.get('interval') or [None, None])[1])}]",
              held.get("reason") or ("yes" if search.get("confirmed") else "no"),
              fmt(flip.get("share")), flip.get("where", "–")]]))  # fmt: skip
    elif search:
        parts.append(f"<p>Search: {e(str(search.get('skipped', '')))}</p>")
    return "<section>" + "".join(parts) + "</section>"


def build_page(doc: Mapping[str, object], markdown: str, latex: str, figures: Mapping[str, bytes]) -> str:
    """The page (module doc). ``doc``: the claim document (``claim --json``), ``figures``: PNG
    bytes by file name (those of :data:`FIGURES` that exist)."""
    css = (ASSETS / "report.css").read_text(encoding="utf-8")
    title = f"t3d-audit claim: {doc.get('evaluator')}"
    scores = doc.get("scores") or []
    pairs = doc.get("pairs") or []
    body = [f"<h1>{e(title)}</h1>",
            f"<p>Profile {e(str(doc.get('profile')))}, {e(str(doc.get('prompts')))} prompts, generators "
            f"{e(', '.join(map(str, doc.get('generators') or [])))}; card <code>{e(str(doc.get('card_id')))}</code></p>"]  # fmt: skip
    order = doc.get("partial_order")
    if order:
        body.append(f"<section id=\"order\"><h2>Partial order</h2><p>{e(str(order.get('sentence', '')))}</p>"
                    + _table(["claim", "class", "verdict", "evidence"],
                             [[f"{r['first']} beats {r['second']}", r["class"], r["verdict"], r["evidence"]]
                              for r in order.get("pairs") or []]) + "</section>")  # fmt: skip
    body.append("<section id=\"claims\"><h2>Verdict</h2>" + "".join(_pair_section(p) for p in pairs) + "</section>")
    body.append("<section id=\"scores\"><h2>Scores at c0</h2>" + _table(
        ["generator", "score", "interval low", "interval high"],
        [[s["generator"], fmt(s["mean"]), fmt(s["interval"][0]), fmt(s["interval"][1])] for s in scores]) + "</section>")
    concordance = doc.get("concordance")
    if concordance:
        body.append(f"<section id=\"presets\"><h2>Presets</h2><p>{e(str(concordance.get('answer', '')))}</p></section>")
    shown = [(name, alt) for name, alt in FIGURES if name in figures]
    if shown:
        body.append("<section id=\"figures\"><h2>Figures</h2>" + "".join(
            f"<figure class=\"fig\"><img src=\"data:image/png;base64,{base64.b64encode(figures[name]).decode('ascii')}\" "
            f"alt=\"{e(alt)}\"><figcaption>{e(alt)}</figcaption></figure>" for name, alt in shown) + "</section>")  # fmt: skip
    body.append("<section id=\"paper\"><h2>Paper block</h2><h3>Markdown (claim.md)</h3>"
                f"<pre>{e(markdown)}</pre><h3>LaTeX (claim.tex)</h3><pre>{e(latex)}</pre></section>")  # fmt: skip
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{e(page_csp(css))}\">"
            f"<title>{e(title)}</title><style>{css}</style></head><body><main id=\"main\">"
            + "".join(body) + "</main></body></html>\n")  # fmt: skip
