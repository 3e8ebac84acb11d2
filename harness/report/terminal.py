"""The terminal summary table printed at the end of an audit run (plain text, fixed width).

Competence at c0 (agreement with the symbolic companion, from the cards) stands next to the
fragility columns (peak movement and the factor that moves scores most, peak ρ, min W, top-1
changes), and :func:`headlines` says in one sentence per
evaluator whether it is competent at the default view yet moved by the protocol
(:mod:`harness.report.competence`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from harness.vocab.metrics import MAX_TOP1, MIN_W, MOVEMENT, PEAK_MOVEMENT, PEAK_RHO
from harness.vocab.probes import SCRAMBLED

# row keys of the table (display columns, not summary keys)
CI_COLUMN = "peak_rho_ci"  # peak ρ's 95 % interval, "*" on a small sample
FAILED_COLUMN = "failed"  # failed records, a count
REGISTERED_KEY = "registered"  # registered statistics as text (a line under the table, not a column)

COLUMNS = (
    ("evaluator", "evaluator", "<"),
    ("c0_agree", "c0 agree", ">"),
    ("c0_winner", "c0 winner", "<"),
    (PEAK_MOVEMENT, "peak movement", ">"),
    (PEAK_RHO, "peak ρ", ">"),
    (CI_COLUMN, "95% CI", ">"),
    (MIN_W, "min W", ">"),
    (MAX_TOP1, "top-1s", ">"),
    (SCRAMBLED, "scramble", ">"),
    ("best_view", "best-view", ">"),
    (FAILED_COLUMN, "failed records", ">"),
    ("gate", "gate (audit tests)", "<"),
)


def _f(value: object, fmt: str = "{:.2f}") -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "—"
    return fmt.format(number) if math.isfinite(number) else "—"


def _gate(passed: int, failed: int, total: int) -> str:
    """The gate cell: each count says what it counts (as the report's verdict matrix does)."""
    if failed:
        return f"FAIL: {failed} of {total} failed"
    if passed:
        return f"pass: {passed} of {total} passed"
    return f"skipped: {total} of {total}" if total else "no tests ran"


def rows_from(
    summary: Mapping[str, object],
    results: Sequence[Mapping[str, object]],
    cards: Mapping[str, Mapping[str, object]] | None = None,
) -> list[dict[str, str]]:
    """One row per evaluator of ``summary``; ``gate`` counts passed/failed audit tests.

    ``cards`` (evaluator → card) give the c0 companion agreement (``c0 agree``: share of the
    companion's generator pairs ordered alike; ``c0 winner``); "—" without one. Rows of
    evaluators with an agreement carry their :func:`~harness.report.competence.headline` under
    the ``headline`` key (not a column); with registered statistics shown in the report
    (:mod:`harness.report.registered`), every row carries them as text under ``registered``."""
    from harness.checks.wording import is_small_sample
    from harness.report.competence import contrasts
    from harness.report.registered import registered_grid, registered_text
    from harness.report.verdict_words import no_agreement_reason, prompt_blocks
    from harness.stats.summary import EvaluatorSummary

    contrast = contrasts(summary, cards or {})
    grid = registered_grid(summary)
    registered = {} if grid is None else {
        ev: ", ".join(f"{c.label} {registered_text(v)}" for c, v in zip(grid.columns, values, strict=True))
        for ev, values in grid.rows
    }
    rows = []
    for ev in sorted(summary.get("evaluators", {})):
        typed = EvaluatorSummary.from_entry(ev, summary["evaluators"][ev])
        mine = [r for r in results if r.get("evaluator") == ev]
        failed = sum(1 for r in mine if r.get("outcome") == "failed")
        passed = sum(1 for r in mine if r.get("outcome") == "passed")
        ci = typed.peak_rho_ci or (None, None)
        small = is_small_sample(prompt_blocks((cards or {}).get(ev)))
        rows.append(
            {
                "evaluator": ev,
                "c0_agree": (
                    _f(contrast[ev].get("pair_agreement"), "{:.0%}") if ev in contrast
                    else f"— {no_agreement_reason((cards or {}).get(ev))}"
                ),
                "c0_winner": str((contrast.get(ev) or {}).get("winner") or "—"),
                PEAK_MOVEMENT: _movement_cell(typed.registered),
                PEAK_RHO: _f(typed.peak_rho),
                CI_COLUMN: f"[{_f(ci[0])}, {_f(ci[1])}]" + ("*" if small else ""),
                MIN_W: _f(typed.min_w),
                MAX_TOP1: _f(typed.max_top1, "{:.0f}"),
                SCRAMBLED: _f(typed.discrimination.get(SCRAMBLED), "{:.0%}"),
                "best_view": _f(typed.best_view_inflation),
                FAILED_COLUMN: _f(typed.failed, "{:.0f}"),
                "gate": _gate(passed, failed, len(mine)),
                **({"headline": contrast[ev]["headline"]} if ev in contrast else {}),
                **({REGISTERED_KEY: registered[ev]} if registered.get(ev) else {}),
            }
        )
    return rows


def _movement_cell(registered: Mapping[str, object]) -> str:
    """``2.41 lighting``: the peak protocol movement and the factor that carries it ("—" when
    the run has none)."""
    from harness.stats.movement import peak_movement_factor

    per_factor = registered.get(MOVEMENT)
    if not isinstance(per_factor, Mapping):
        return "—"
    factor = peak_movement_factor({str(k): v for k, v in per_factor.items()})
    value = _f(registered.get(PEAK_MOVEMENT))
    return value if factor is None or value == "—" else f"{value} {factor}"


def dash_notes(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """What a bare "—" and a ``*`` (small sample) in the table mean, when the table has one
    (the c0 agree cells say their own reason)."""
    bare = any(
        str(r.get(key, "")).strip() == "—" or "[—" in str(r.get(key, "")) or "—]" in str(r.get(key, ""))
        for r in rows for key, _, _ in COLUMNS if key != "c0_agree"
    )
    notes = []
    if bare:
        notes.append(
            "—: c0 winner needs a c0 agreement (see c0 agree); a statistic's — means this run's "
            "profile does not measure it, or it is undefined on its records (e.g. all failed)"
        )
    if any(str(r.get(CI_COLUMN, "")).endswith("*") for r in rows):
        from harness.checks.wording import SMALL_SAMPLE_BLOCKS

        notes.append(
            f"*: interval from fewer than {SMALL_SAMPLE_BLOCKS} prompt blocks, a small sample: "
            "read it as indicative (below 6 nothing is confirmed on it; ρ runs low with few prompts, "
            "so the upper end of a ρ interval is withheld, —, below 20: docs/intervals.md)"
        )
    return notes


def headlines(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """``<evaluator>: <competence and fragility sentence>`` for the rows that have one."""
    return [f"{r['evaluator']}: {r['headline']}" for r in rows if r.get("headline")]


def render_table(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """Lines of a fixed-width table of ``rows`` (as made by :func:`rows_from`), then one
    line of registered statistics per evaluator that has them."""
    widths = {
        key: max([len(title), *(len(str(r.get(key, ""))) for r in rows)]) for key, title, _ in COLUMNS
    }

    def line(values: Mapping[str, str]) -> str:
        cells = []
        for key, _, align in COLUMNS:
            text = str(values.get(key, ""))
            cells.append(text.ljust(widths[key]) if align == "<" else text.rjust(widths[key]))
        return "  ".join(cells).rstrip()

    header = line({key: title for key, title, _ in COLUMNS})
    registered = [f"{r['evaluator']} registered: {r[REGISTERED_KEY]}" for r in rows if r.get(REGISTERED_KEY)]
    return [header, "-" * len(header), *(line(r) for r in rows), *registered]
