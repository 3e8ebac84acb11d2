"""The first screen of ``report.html``: the verdict matrix, and figures a person can open.

:func:`verdict_matrix` — evaluators (rows) × check families (columns, one per audit test file:
``test_configuration_ratio.py`` → "configuration ratio"), each cell coloured by its outcome
and, for a failure, by how far the worst failing check lies past its threshold (its margin):

- ``pass``: every test of the family passed; ``pass near`` when a passing check sits within
  10 % of its threshold;
- ``fail``: a test failed, the worst check within 2× of its threshold; ``fail far``: beyond;
- ``skipped``: every test skipped (the title says why); ``none``: no test of the family ran for
  this evaluator (the cell says so).

The comparison's regressions (``comparison.json``) join the headline above the matrix.
:func:`figure_html` gives each figure a full-size view: the displayed image is a link to an
in-page view (``:target``, no script, CSP-clean) holding the same full-resolution PNG, and to
the file under ``figures/``. Values are escaped where they enter the page.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from harness.report.verdict_words import (
    PANEL,
    expected_verdict_note,
    headline_text,
    small_sample_banner_html,
)

e = html.escape
NEAR = 0.10  # a passing check within 10 % of its threshold is "near"
FAR = 2.0  # a failing check beyond 2x its threshold is "far"


def family_of(test: str) -> str:
    """``audit_tests/test_configuration_ratio.py::test_rho[x]`` → ``configuration ratio``."""
    stem = PurePosixPath(str(test).split("::", 1)[0]).stem
    return (stem[5:] if stem.startswith("test_") else stem).replace("_", " ")


def excess(check: Mapping[str, object]) -> float | None:
    """How far the tested value lies past (> 1) or inside (< 1) its threshold, as a ratio in
    the threshold's direction; ``None`` when it cannot be said (no value, a zero threshold)."""
    try:
        tested, threshold = float(check.get("tested")), float(check.get("threshold"))
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(tested) and math.isfinite(threshold)) or tested <= 0 or threshold <= 0:
        return None
    return tested / threshold if check.get("op") == "<=" else threshold / tested


def cell(results: Sequence[Mapping[str, object]]) -> tuple[str, str, str]:
    """``(css class, text, title)`` of one matrix cell from the family's results of one evaluator."""
    if not results:
        return "none", "not run", "no test of this family ran for this evaluator"
    outcomes = [str(r.get("outcome")) for r in results]
    checks = [c for r in results for c in (r.get("checks") or [])]
    failed = outcomes.count("failed")
    if failed:
        worst = max((x for c in checks if c.get("passed") is False for x in [excess(c)] if x is not None), default=None)
        far = worst is not None and worst > FAR
        past = f", worst {worst:.1f}× its threshold" if worst is not None else ""
        return ("fail far" if far else "fail"), f"✗ {failed} of {len(results)} failed", f"{failed} of {len(results)} tests failed{past}"
    if outcomes.count("skipped") == len(outcomes):
        reasons = sorted({str(r.get("reason") or "") for r in results} - {""})
        why = f": {reasons[0]}" if reasons else " (this run's profile or thresholds do not gate it)"
        return "skipped", "skipped", f"every test skipped{why}"
    margins = [x for c in checks if c.get("passed") is True for x in [excess(c)] if x is not None]
    near = any(x > 1 - NEAR for x in margins)
    passed = outcomes.count("passed")
    title = f"{passed} of {len(results)} tests passed" + (", a check within 10 % of its threshold" if near else "")
    return ("pass near" if near else "pass"), f"✓ {passed} of {len(results)} passed", title


def regressions(comparison: Mapping[str, object] | None) -> list[str]:
    """``evaluator: kind[subject]`` of every confirmed regression of a comparison."""
    out = []
    for pair in (comparison or {}).get("pairs") or []:
        for m in pair.get("metrics") or []:
            if m.get("verdict") == "regression":
                subject = f"[{m['subject']}]" if m.get("subject") else ""
                out.append(f"{pair.get('candidate_evaluator')}: {m.get('kind')}{subject}")
    return out


def verdict_matrix(results: Sequence[Mapping[str, object]], cards: Mapping[str, object],
                   comparison: Mapping[str, object] | None) -> str:
    """The ``verdict-matrix`` section (see the module docstring)."""
    by: dict[tuple[str, str], list[Mapping[str, object]]] = {}
    outcomes: dict[str, list[str]] = {}
    for r in results:
        ev = str(r.get("evaluator") or PANEL)
        by.setdefault((ev, family_of(str(r.get("test", "")))), []).append(r)
        outcomes.setdefault(ev, []).append(str(r.get("outcome")))
    evaluators = sorted(ev for ev in outcomes if ev != PANEL) + ([PANEL] if PANEL in outcomes else [])
    families = sorted({f for _, f in by})
    failing = any("failed" in o for o in outcomes.values())
    found = regressions(comparison)
    verdict = "fail" if failing or found else "pass"
    words = headline_text(outcomes)
    expected = expected_verdict_note(evaluators, verdict == "fail" and not found)
    if expected:
        words += f". {expected}"
    if found:
        words += f"; the release comparison finds {len(found)} regression{'s' if len(found) != 1 else ''}: " + ", ".join(found)
    head = "".join(f'<th scope="col">{e(f)}</th>' for f in families)
    rows = []
    for ev in evaluators:
        cells = []
        for f in families:
            cls, text, title = cell(by.get((ev, f), []))
            cells.append(f'<td class="m {cls}" title="{e(title)}">{e(text)}</td>')
        name = "panel (selected evaluators)" if ev == PANEL else ev
        rows.append(f'<tr data-ev="{e(ev)}"><th scope="row">{e(name)}</th>{"".join(cells)}</tr>')
    return (
        '<section id="verdict-matrix"><h2>Verdict</h2>'
        f'<p class="headline"><span class="badge {verdict}">{"✗ FAIL" if verdict == "fail" else "✓ PASS"}</span> '
        f"{e(words)}</p>" + small_sample_banner_html(cards)
        + '<table class="matrix"><caption>Tests passed per evaluator and check family. Red: a test '
        "failed (dark: a check more than 2× past its threshold); green: all passed (pale: a check "
        "within 10 % of its threshold); grey: skipped or not run (hover a cell for why). Details "
        'follow below.</caption><thead><tr><th scope="col">evaluator</th>'
        + head + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></section>"
    )


# heatmaps with a number in every cell take the full row: their numbers stay readable
WIDE_FIGURES = frozenset({"dispersion.png", "interactions.png"})


def figure_html(name: str, alt: str, uri: str) -> str:
    """A figure with a full-size view: click the image for the in-page view at full
    resolution (scroll when larger than the window), or open ``figures/<name>``."""
    key = "full-" + name.rsplit(".", 1)[0]
    wide = " wide" if name in WIDE_FIGURES else ""
    return (
        f'<figure class="fig{wide}"><a href="#{e(key)}" title="open at full size"><img src="{uri}" alt="{e(alt)}"></a>'
        f'<figcaption>{e(alt)} · <a href="#{e(key)}">full size</a> · '
        f'<a href="figures/{e(name)}">PNG file</a></figcaption></figure>'
        f'<div class="lightbox" id="{e(key)}" role="dialog" aria-label="{e(alt)} at full size">'
        f'<a class="close" href="#figures">close ✕</a><img src="{uri}" alt="{e(alt)} at full size"></div>'
    )


def indicative_suffix(pair: Mapping[str, object]) -> str:
    """`` (indicative)`` for a comparison pair bootstrapped over a small sample, else ``""``."""
    from harness.checks.wording import is_small_sample

    return " (indicative)" if is_small_sample(pair.get("n_prompts")) else ""


_REGRESSION_ROW = re.compile(r"<tr>((?:(?!</tr>).)*<td>regression(?: \(indicative\))?</td></tr>)")


def mark_regressions(table: str) -> str:
    """``table`` (a comparison table's HTML) with its regression rows in class ``regression``."""
    return _REGRESSION_ROW.sub(r'<tr class="regression">\1', table)


# Why a figure of the report is not drawn (nothing empty is drawn: harness.report.figures)
MISSING_FIGURES = {
    "discrimination.png": "No content-probe figure: no probe was measured on this run's scenes "
    "(single-object scenes have no layout to edit, or the profile lists no probe).",
    "interactions.png": "No interaction figure: this run's profile declares no factorial blocks.",
}


def missing_figure_html(name: str) -> str:
    """A line in place of a figure the report does not have, saying why (``""`` when the
    figure is not one a report may leave out)."""
    why = MISSING_FIGURES.get(name)
    return f'<p class="muted nofig" data-figure="{e(name)}">{e(why)}</p>' if why else ""
