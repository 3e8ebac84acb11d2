"""The study's tables computed from an :class:`~harness.stats.audit_stats.AuditResult`.

Each table is a :class:`Table` of display cells (percentages as in the paper, ratios with
two decimals, ``–`` for undefined values). Writers emit GitHub Markdown and CSV with the
same cells. Numbering follows the study: 1, 2, 3 (slot effects), 4 (selected reversals),
8 (lighting), 9 (envelopes), 10 (probe outcomes), 13–18, plus a failures table.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.csvcells import neutral
from harness.core.fileio import write_text_atomic
from harness.stats.audit_stats import AuditResult, EvaluatorAudit
from harness.stats.envelopes import SIGN_CROSSING, STRICT, TIE_BOUNDARY
from harness.stats.reversals import Reversal
from harness.stats.summary import Reversals
from harness.vocab.factors import (
    factor_names,
    rendered_factor_names,
    shared_factor_names,
    short_label,
)
from harness.vocab.metrics import DISCRIMINATION, DISPERSION, RHO
from harness.vocab.probes import PROBES, SCRAMBLED, probe_names

DASH = "–"


@dataclass(frozen=True)
class Table:
    """One report table: ``key`` names its files (``table01_decisions.md``/``.csv``)."""

    key: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""

    def to_markdown(self) -> str:
        def esc(cell: str) -> str:
            return cell.replace("|", "\\|")

        lines = [f"**{self.title}**", ""]
        lines.append("| " + " | ".join(esc(c) for c in self.columns) + " |")
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        lines.extend("| " + " | ".join(esc(c) for c in row) + " |" for row in self.rows)
        if self.note:
            lines += ["", self.note]
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow([neutral(c) for c in self.columns])
        writer.writerows([neutral(c) for c in row] for row in self.rows)
        return buf.getvalue()


def probe_label(name: str) -> str:
    """The tables' name of a probe (its registry label, else its name)."""
    return (PROBES.get(name).label or name) if name in PROBES else name


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def pct(x: float | None, digits: int = 0) -> str:
    """Fraction → percent text (0.283 → '28'); undefined → '–'."""
    return f"{100 * x:.{digits}f}" if _finite(x) else DASH


def num(x: float | None, digits: int = 2) -> str:
    return f"{x:.{digits}f}" if _finite(x) else DASH


def signed(x: float | None, digits: int = 2) -> str:
    return f"{x:+.{digits}f}" if _finite(x) else DASH


def interval(ci: Sequence[float], fmt=num, digits: int = 2) -> str:
    lo, hi = ci
    if not (_finite(lo) or _finite(hi)):
        return DASH
    # one end may be withheld (ρ's upper end with few prompts): it reads as a dash
    return f"[{fmt(lo, digits) if _finite(lo) else DASH}, {fmt(hi, digits) if _finite(hi) else DASH}]"


def _present(result: AuditResult, factors: Sequence[str], attr: str) -> list[str]:
    have = {f for ev in result.evaluators.values() for f in getattr(ev, attr)}
    return [f for f in factors if f in have]


#: What ρ's prompt intervals assume, said under every table that prints one (docs/intervals.md).
RHO_INTERVAL_NOTE = (
    "Prompt intervals: the expanded percentile over the run's prompts, confirmed from 6 prompts on. "
    "ρ's estimate is biased low with few prompts and its intervals assume roughly symmetric "
    "per-prompt effects: they run low (95 % intervals covered ρ 87 % of the time at 6 prompts, "
    "81 % with skewed per-prompt effects), so a lower bound above 1 is conservative, and below 20 "
    "prompts a ρ interval's upper end is withheld (—): there it would not cover."
)


def table01(result: AuditResult) -> Table:
    align = [result.evaluators[k] for k in result.alignment]
    n = len(align)
    peak_gt1 = sum(1 for e in align if _finite(e.peak_rho) and e.peak_rho > 1)
    lb_gt1 = sum(1 for e in align if _finite(e.peak_rho_ci[0]) and e.peak_rho_ci[0] > 1)
    counts = Reversals(**result.reversals.counts())
    strict = [e.envelopes.counts()[STRICT] for e in align]
    n_pairs = len(align[0].envelopes.pairs) if align else 0
    n_proto = sorted({e.envelopes.n_protocols for e in align})
    scr = [
        e.probes[SCRAMBLED].outcome.discrimination
        for e in result.evaluators.values()
        if SCRAMBLED in e.probes
    ]
    scr = [x for x in scr if _finite(x)]
    proto = "/".join(str(p) for p in n_proto) or "0"
    boot = result.bootstrap
    rows = [
        ("Does configuration variance exceed generator separation?", f"{peak_gt1}/{n}",
         "Peak ρ > 1 for this generator field."),
        ("Does this persist under prompt resampling?", f"{lb_gt1}/{n}" if boot else DASH,
         f"Bootstrap lower bound of peak ρ exceeds 1 (B = {boot})."),
        ("Does the point-estimate winner change?", f"{counts.descriptive}/{n}",
         "Across tested factor levels, without claiming a confirmed reversal."),
        ("Is an opposite pairwise ordering confirmed after search?",
         f"{counts.simultaneous}/{n}" if boot and not result.reversals.reason else DASH,
         (f"{result.reversals.reason.capitalize()}: descriptive only. " if result.reversals.reason else "")
         + f"Simultaneous band over {result.band.contrasts:,} contrasts "
         f"(q95 = {num(result.band.q95, 3)}); pointwise: {counts.pointwise}/{n}."),
        ("Which pairwise orders survive all tested protocols?",
         f"{min(strict)}–{max(strict)}/{n_pairs}" if strict else DASH,
         f"Strict orders per alignment evaluator over {proto} protocols."),
        ("Does scrambling lower the score?", f"≤ {pct(max(scr))}%" if scr else DASH,
         "Tie-adjusted ceiling across evaluators, including prompt-free controls."),
    ]
    return Table("table01_decisions", "Table 1: Decision-level results",
                 ("Audit question", "Result", "Scope and interpretation"), tuple(rows),
                 f"{len(result.evaluators)} evaluators ({n} alignment); "
                 f"{result.n_failed} failed records excluded.")


def _name(ev: EvaluatorAudit) -> str:
    return ev.evaluator + (" (prompt-free)" if ev.prompt_free else "")


def table02(result: AuditResult) -> Table:
    rows = []
    for ev in result.evaluators.values():
        mark = "†" if _finite(ev.peak_rho_ci[0]) and ev.peak_rho_ci[0] > 1 else ""
        rows.append((
            _name(ev),
            num(ev.template_rho),
            num(ev.peak_rho) + mark if _finite(ev.peak_rho) else DASH,
            num(ev.min_w),
            str(ev.max_top1) if ev.rank else DASH,
            pct(ev.content_accuracy),
            f"{num(ev.best_view_inflation)}×" if _finite(ev.best_view_inflation) else DASH,
        ))
    return Table("table02_evaluators", "Table 2: Per-evaluator audit",
                 ("Evaluator", "template ρ", "peak ρ", "min W", "#top-1", "Content acc. (%)",
                  "Best view"), tuple(rows),
                 "† prompt-bootstrap lower bound of peak ρ above 1. " + RHO_INTERVAL_NOTE)


def table03(result: AuditResult) -> Table:
    order = ("viewpoint", "noun", "frame", "connective", "article")
    rows = []
    for slot in [s for s in order if s in result.slot_effects] + sorted(
        set(result.slot_effects) - set(order)
    ):
        eff = result.slot_effects[slot]
        choices = ", ".join(f"{c} {100 * v:+.0f}%" for c, v in eff.shifts.items())
        rows.append((slot, f"{pct(eff.dispersion)}%", choices))
    return Table("table03_template_slots", "Table 3: Per-slot caption-template effects",
                 ("Slot", "Disp.", "Choices"), tuple(rows),
                 "Averaged over the text-swept evaluators; each slot on its matched subset; "
                 "shifts relative to the slot mean. (none) omits an optional slot.")


def table03_best_template(result: AuditResult) -> Table:
    rows = []
    for ev in result.evaluators.values():
        g = ev.template_gain
        if g is None:
            continue
        rows.append((ev.evaluator, g.best, f"{100 * g.gain:+.0f}%" if _finite(g.gain) else DASH,
                     f"{g.default_rank}/{g.n_templates}"))
    return Table("table03_best_template", "Best caption template vs the default",
                 ("Evaluator", "Best template", "Median gain over default", "Default rank"),
                 tuple(rows), "Gain: median over scenes (positive default score) of "
                 "score(best)/score(default) − 1; rank 1 = highest mean score.")


def table04(result: AuditResult) -> Table:
    best: dict[str, tuple[float, Reversal]] = {}
    for r in result.reversals.instances:
        sep = min(r.ci1[0], -r.ci2[1])  # how far both pointwise intervals clear zero
        if r.kind == "pointwise" and (r.evaluator not in best or sep > best[r.evaluator][0]):
            best[r.evaluator] = (sep, r)
    rows = []
    for _, r in best.values():
        confirmed = _finite(r.band1[0]) and r.band1[0] > 0 and _finite(r.band2[1]) and r.band2[1] < 0
        rows.append((
            f"{r.evaluator} / {r.factor}",
            f"{r.winner1} − {r.winner2}",
            f"{r.level1} ; {r.level2}",
            f"{signed(r.gap1)} {interval(r.ci1, signed)} ; {signed(r.gap2)} {interval(r.ci2, signed)}",
            f"{interval(r.band1, signed)} ; {interval(r.band2, signed)}",
            "yes" if confirmed else "no",
        ))
    return Table("table04_reversals", "Table 4: Selected same-pair pointwise reversals",
                 ("Evaluator / factor", "Pair", "Levels", "Gap [pointwise 95%]",
                  "Simultaneous 95%", "Confirmed"), tuple(rows),
                 "One instance per evaluator (the most separated) with opposite pointwise "
                 "intervals at two levels of one factor; confirmed when both simultaneous "
                 "intervals also exclude zero in opposite directions."
                 + (f" None listed: {result.reversals.reason}." if result.reversals.reason else ""))


def table08(result: AuditResult) -> Table | None:
    light = result.lighting
    if light is None:
        return None
    rows = []
    for lv, z in zip(light.levels, light.z_shift, strict=True):
        ev, cct = light.scalars.get(lv, (math.nan, math.nan))
        rows.append((lv, num(ev), num(cct, 0), signed(z, 3)))
    note = "Mean z-shift: deviation from the scene's mean over maps, standardised per evaluator."
    if light.correlation:
        note += (f" Pearson r with EV = {num(light.correlation.get('ev'))}, "
                 f"with CCT = {num(light.correlation.get('cct'))}.")
    return Table("table08_lighting", "Table 8: Lighting maps", ("Map", "EV", "CCT (K)",
                 "Mean z-shift"), tuple(rows), note)


def table09(result: AuditResult) -> Table:
    rows = []
    for ev in result.evaluators.values():
        c = ev.envelopes.counts()
        n = len(ev.envelopes.pairs)
        rows.append((_name(ev), str(ev.envelopes.n_protocols), f"{c[STRICT]}/{n}",
                     f"{c[SIGN_CROSSING]}/{n}", f"{c[TIE_BOUNDARY]}/{n}",
                     ev.stable_winner or "none"))
    return Table("table09_envelopes", "Table 9: Pairwise ordering over the tested protocols",
                 ("Evaluator", "Protocols", "Strict ordering", "Sign crossing", "Tie boundary",
                  "Stable winner"), tuple(rows),
                 "Descriptive ranges over the finite protocol set, not confidence intervals.")


def table10(result: AuditResult) -> Table:
    rows = []
    for ev in result.evaluators.values():
        for probe, st in ev.probes.items():
            o = st.outcome
            lo, hi = o.sensitivity_bounds
            rows.append((
                ev.evaluator, probe, str(o.n), str(o.drops), str(o.ties), str(o.rises),
                f"{pct(o.strict_drop, 1)} {interval(st.ci['strict_drop'], pct, 1)}",
                f"{pct(o.tie_rate, 1)} {interval(st.ci['tie'], pct, 1)}",
                f"{pct(o.rise_rate, 1)} {interval(st.ci['rise'], pct, 1)}",
                f"{pct(o.discrimination, 1)} {interval(st.ci[DISCRIMINATION], pct, 1)}",
                str(o.n_failed), str(o.n_zero),
                f"[{pct(lo, 1)}, {pct(hi, 1)}]",
            ))
    return Table("table10_probe_outcomes", "Table 10: Probe outcomes (intact vs probe pairs)",
                 ("Evaluator", "Probe", "Pairs", "Drops", "Ties", "Rises", "Strict drop %",
                  "Tie %", "Rise %", "Tie-adjusted %", "Failed", "Zero-involved",
                  "Sensitivity bounds %"), tuple(rows),
                 "Tie-adjusted: drop 1, tie ½, rise 0. Bounds give every failed or zero-involved "
                 "pair any credit in [0, 1]; they cover the zero/failure question, not sampling.")


def _factor_table(result, key, title, factors, cell, note="") -> Table:
    rows = []
    for ev in result.evaluators.values():
        rows.append((_name(ev), *(cell(ev, f) for f in factors)))
    return Table(key, title, ("Evaluator", *(short_label(f) for f in factors)),
                 tuple(rows), note)


def table13(result: AuditResult) -> Table:
    factors = _present(result, factor_names(), DISPERSION)
    return _factor_table(result, "table13_dispersion", "Table 13: Score dispersion (%)", factors,
                         lambda ev, f: pct(ev.dispersion.get(f)), "Normalised range; larger is worse.")


def table14(result: AuditResult) -> Table:
    factors = _present(result, factor_names(), RHO)
    return _factor_table(result, "table14_rho", "Table 14: Configuration-to-signal ratio ρ",
                         factors, lambda ev, f: num(ev.rho.get(f)),
                         "Population variance over generator means; sample variance rescales "
                         "by (G−1)/G.")


def table_movement(result: AuditResult) -> Table | None:
    """Protocol movement per factor (:mod:`harness.stats.movement`) with the peak, its factor
    and its 95 % interval; ``None`` when no evaluator has it."""
    from harness.stats.movement import peak_movement_factor
    from harness.vocab.metrics import MOVEMENT, PEAK_MOVEMENT

    evs = [ev for ev in result.evaluators.values() if isinstance(ev.registered.get(MOVEMENT), Mapping)]
    if not evs:
        return None
    factors = [f for f in factor_names() if any(f in ev.registered[MOVEMENT] for ev in evs)]
    rows = []
    for ev in evs:
        values = ev.registered[MOVEMENT]
        known = {f: float(v) for f, v in values.items() if _finite(v)}
        ci = ev.registered_ci.get(PEAK_MOVEMENT)
        peak_value = ev.registered.get(PEAK_MOVEMENT)
        rows.append((_name(ev), *(num(values.get(f)) for f in factors),
                     num(peak_value if isinstance(peak_value, float) else None),
                     peak_movement_factor(known) or DASH,
                     interval(ci) if isinstance(ci, tuple) else DASH))
    return Table("table_movement", "Protocol movement (c0 within-generator SDs)",
                 ("Evaluator", *(short_label(f) for f in factors), "Peak", "Peak factor", "95% CI"),
                 tuple(rows),
                 "sqrt(mean over scenes of the score's variance over the factor's levels / pooled "
                 "within-generator variance of the c0 scores); larger is worse. Unlike ρ it does not "
                 "fall when an evaluator only spreads the generators further apart at c0.")


def table15(result: AuditResult) -> Table:
    rows = []
    for ev in result.evaluators.values():
        gap = DASH
        if ev.top_gap is not None and not ev.prompt_free:
            lo, hi = ev.top_gap.ci
            star = "*" if _finite(lo) and (lo > 0 or hi < 0) else ""
            gap = f"{signed(ev.top_gap.gap)} {interval(ev.top_gap.ci, signed)}{star}"
        sep = DASH if ev.separable_pairs is None else f"{ev.separable_pairs}/{len(ev.envelopes.pairs)}"
        rows.append((_name(ev), num(ev.peak_rho), interval(ev.peak_rho_ci),
                     interval(ev.logo_peak_rho_range), gap, sep))
    return Table("table15_rho_uncertainty", "Table 15: Peak ρ uncertainty and generator-set "
                 "sensitivity", ("Evaluator", "Peak ρ", "Prompt 95% CI", "Leave-one-gen range",
                                 "Top-1/2 gap [95% CI]", "Separable pairs (baseline)"),
                 tuple(rows), "* interval excludes zero. " + RHO_INTERVAL_NOTE)


def table16(result: AuditResult) -> Table:
    factors = _present(result, shared_factor_names(), "rank")

    def cell(ev, f):
        r = ev.rank.get(f)
        return DASH if r is None else f"{num(r.kendall_w)}/{r.top1_count}"

    return _factor_table(result, "table16_rank_stability",
                         "Table 16: Rank stability (Kendall's W / distinct top-1 winners)",
                         factors, cell, "Paraphrases excluded: their levels are per-prompt strings.")


def table17(result: AuditResult) -> Table:
    probes = [p for p in probe_names() if any(p in e.probes for e in result.evaluators.values())]
    rows = []
    for ev in result.evaluators.values():
        d = ev.discrimination
        rows.append((_name(ev), *(pct(d.get(p)) for p in probes), pct(ev.content_accuracy)))
    return Table("table17_discrimination", "Table 17: Tie-adjusted directional discrimination (%)",
                 ("Evaluator", *(probe_label(p) for p in probes), f"Mean ({len(probes)})"),
                 tuple(rows), "Chance = 50 %.")


def table18(result: AuditResult) -> Table:
    factors = [f for f in rendered_factor_names() if any(f in e.best_worst for e in result.evaluators.values())]

    def cell(ev, f):
        bw = ev.best_worst.get(f)
        return DASH if bw is None else f"{bw[0]}/{bw[1]}"

    return _factor_table(result, "table18_best_worst", "Table 18: Best/worst level per render "
                         "factor", factors, cell, "By mean score over scenes.")


def table_failures(result: AuditResult) -> Table:
    factors = sorted({f for e in result.evaluators.values() for f in e.failed_by_factor})
    rows = [
        (ev.evaluator, str(ev.n_records), str(ev.failed),
         *(str(ev.failed_by_factor.get(f, 0)) for f in factors))
        for ev in result.evaluators.values()
    ]
    return Table("failures", "Failed records (excluded from every statistic)",
                 ("Evaluator", "Records", "Failed", *factors), tuple(rows))


def table_blocks(result: AuditResult) -> Table | None:
    """Factorial blocks: variance decomposition, ranking flips and additivity (only with blocks)."""
    rows = []
    for ev in result.evaluators.values():
        for st in ev.blocks.values():
            mains = "; ".join(
                f"{short_label(f)} {pct(st.main_share[f])}" for f in st.factors
            )
            new = DASH if st.new_sign_crossings is None else str(st.new_sign_crossings)
            rows.append((
                _name(ev), st.id, mains, pct(st.interaction_share),
                interval(st.interaction_share_ci, pct, 0), num(st.rho_interaction),
                interval(st.rho_interaction_ci), num(st.rho_block),
                str(st.sign_crossings), new, str(st.winner_count),
                num(st.additivity_rmse, 4), num(st.max_additivity_error, 4),
            ))
    if not rows:
        return None
    return Table(
        "table_blocks", "Factorial blocks: main effects and interaction (η²), ranking flips, additivity",
        ("Evaluator", "Block", "Main η² (%)", "Interaction η² (%)", "95% CI", "ρ interaction",
         "ρ int. 95% CI", "ρ block", "Sign crossings", "New vs OFAT", "Winners", "Additivity RMSE",
         "Max |obs − add.|"),
        tuple(rows),
        "η²: share of the pooled within-scene protocol sum of squares of the block's cells (0 when "
        "the block moves no score). ρ: mean per-cell variance over the generator variance at c0. "
        "Sign crossings: generator pairs whose margin crosses zero over the block's cells (new: "
        "strictly ordered over the OFAT protocols). Additivity: generator-mean cell scores vs the "
        "OFAT prediction y(a) + y(b) − y(c0), score units.",
    )


def table_block_cells(result: AuditResult) -> Table | None:
    """Per evaluator, block and cell: observed vs OFAT-additive mean score and the winner."""
    import numpy as np

    rows = []
    for ev in result.evaluators.values():
        for st in ev.blocks.values():
            for j, cell in enumerate(st.cells()):
                obs = st.cell_means[:, j]
                pred = st.predicted[:, j]
                ok = np.isfinite(obs)
                top = ev.generators[int(np.nanargmax(obs))] if ok.all() else DASH
                tied = ok.all() and int((obs == np.nanmax(obs)).sum()) > 1
                label = ", ".join(f"{f}={lv}" for f, lv in zip(st.factors, cell, strict=True))
                o = float(np.mean(obs)) if ok.all() else float("nan")
                pr = float(np.mean(pred)) if np.isfinite(pred).all() else float("nan")
                rows.append((_name(ev), st.id, label, num(o, 4), num(pr, 4),
                             signed(o - pr, 4), "tie" if tied else top))
    if not rows:
        return None
    return Table(
        "table_block_cells", "Factorial block cells: observed vs OFAT-additive mean score",
        ("Evaluator", "Block", "Cell", "Observed", "Additive", "Obs. − add.", "Winner"),
        tuple(rows),
        "Means over generators and prompts, score units; the winner is the unique top generator.",
    )


def table_view_policies(results: Mapping[str, AuditResult]) -> Table:
    """How fragility moves between view policies: one row per evaluator × policy (policies in
    the given order, the first the reference for the Δ columns)."""
    policies = list(results)
    probes = [p for p in probe_names() if any(p in ev.probes for r in results.values()
                                             for ev in r.evaluators.values())]
    evaluators = sorted({e for r in results.values() for e in r.evaluators})
    rows = []
    for name in evaluators:
        ref = results[policies[0]].evaluators.get(name)
        for policy in policies:
            ev = results[policy].evaluators.get(name)
            if ev is None:
                continue
            d_rho = ev.peak_rho - ref.peak_rho if ref is not None else float("nan")
            d_w = ev.min_w - ref.min_w if ref is not None else float("nan")
            rows.append((
                name, policy, num(ev.peak_rho), ev.peak_factor or DASH, interval(ev.peak_rho_ci),
                signed(d_rho), num(ev.min_w), signed(d_w), str(ev.max_top1),
                *(pct(ev.discrimination.get(p)) for p in probes), pct(ev.content_accuracy),
            ))
    return Table(
        "table_view_policies", "View policies: fragility per evaluator and policy",
        ("Evaluator", "Policy", "Peak ρ", "Peak factor", "95% CI", f"Δ ρ vs {policies[0]}",
         "min W", f"Δ W vs {policies[0]}", "max top-1",
         *(f"{probe_label(p)} (%)" for p in probes), "Content acc. (%)"),
        tuple(rows),
        "single: the configuration's one camera; mean4 / max4: mean / best score of four views "
        "at azimuths +0, 90, 180, 270° (rooms at the 45° yaw-sweep pitch unless the "
        "configuration sets the pitch); sheet4: one score of a 2 × 2 sheet of those views.",
    )


def table_registered(summary: Mapping[str, object]) -> Table | None:
    """The registered statistics (:mod:`harness.report.registered`) of a ``summary.json``
    mapping: one row per evaluator, one column per metric (per key of a keyed one); ``None``
    when no registered metric is shown in the report."""
    from harness.report.registered import registered_grid

    grid = registered_grid(summary)
    if grid is None:
        return None
    rows = tuple((ev, *(DASH if v is None else f"{v:.4g}" for v in values)) for ev, values in grid.rows)
    return Table("table_registered", "Registered statistics",
                 ("Evaluator", *(c.label for c in grid.columns)), rows,
                 "Statistics registered with harness.vocab.metrics.register_metric; four "
                 "significant digits.")


def build_tables(result: AuditResult) -> list[Table]:
    """All report tables for ``result`` (Table 8 only when lighting was swept; the block
    tables only with factorial blocks; the registered statistics only when some are
    registered for the report)."""
    from harness.report.registered import report_metrics

    tables = [table01(result), table02(result), table03(result), table03_best_template(result),
              table04(result), table08(result),
              table09(result), table10(result), table13(result), table14(result), table_movement(result), table15(result),
              table16(result), table17(result), table18(result), table_failures(result),
              table_blocks(result), table_block_cells(result)]
    if report_metrics():
        tables.append(table_registered(result.to_summary()))
    return [t for t in tables if t is not None]


def write_tables(tables: Iterable[Table] | AuditResult, out_dir: Path) -> list[Path]:
    """Write ``<key>.md`` and ``<key>.csv`` per table plus ``tables.md`` with all of them.

    ``tables`` may be an :class:`AuditResult`, whose :func:`build_tables` are written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    tables = build_tables(tables) if isinstance(tables, AuditResult) else list(tables)
    for t in tables:
        for suffix, text in ((".md", t.to_markdown()), (".csv", t.to_csv())):
            path = out_dir / f"{t.key}{suffix}"
            write_text_atomic(path, text)
            written.append(path)
    combined = out_dir / "tables.md"
    write_text_atomic(combined, "\n".join(t.to_markdown() for t in tables))
    written.append(combined)
    return written
