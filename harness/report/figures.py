"""Report figures (matplotlib, Agg backend) drawn from the summary dict alone.

* ``dispersion.png``: heatmap evaluator × factor of the dispersion D in percent (study Fig. 2).
* ``discrimination.png``: directional discrimination per probe and evaluator, with the 50 %
  chance line (study Fig. 3); when no content probe applies (single-object scenes) it says so
  (:data:`NO_PROBE_NOTE`) instead of drawing empty axes.
* ``peak_rho.png``: peak ρ per evaluator with its bootstrap 95 % interval and the ρ = 1 line
  (study Fig. 6), on an axis from 0, linear (symlog above 1 when an interval passes 20; ≈0
  for a prompt-free companion).
* ``envelopes.png``: generator pairs per evaluator whose margin envelope is strict, crosses
  zero or touches a tie (study Table 9).
* ``interactions.png`` (only with factorial blocks): heatmap evaluator × block of the
  interaction share η² in percent, each cell annotated with the block's sign-crossing pairs.

Colours are the Okabe–Ito palette, with hatching, so no figure relies on hue alone.

PNG files are written without a software/date stamp so equal summaries give equal bytes on
one machine. matplotlib is imported here only, when a report is written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

from harness.core.numbers import finite_or_nan
from harness.stats.summary import BlockSummary, EvaluatorSummary
from harness.vocab.factors import factor_names
from harness.vocab.metrics import DISCRIMINATION, DISPERSION, ENVELOPES
from harness.vocab.probes import probe_names

_PNG_META = {"Software": None}
# Okabe & Ito (2008): distinguishable under the common colour-vision deficiencies
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
RHO_ZERO = 1e-9  # ρ below this is drawn as 0 (a prompt-free evaluator's rounding noise)
LINEAR_RHO_MAX = 20.0  # beyond this the peak-ρ axis turns symlog above ρ = 1
DPI = 200  # high-DPI: legible when shown scaled down, sharp when opened at full size


NO_PROBE_NOTE = (
    "No content probe applies to these scenes (single generated objects: keep_half, "
    "biggest_only and scrambled need several objects, worst_objects needs retrieval "
    "candidates), so directional discrimination is not measured."
)


def probes_measured(summary: Mapping[str, object]) -> bool:
    """Whether some evaluator has a finite discrimination value for some probe."""
    return any(
        math.isfinite(finite_or_nan(v))
        for ev in summary.get("evaluators", {}).values()
        for v in (ev.get(DISCRIMINATION) or {}).values()
    )


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the Agg backend (no display), imported when first drawn."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 8, "svg.hashsalt": "t3d-audit"})
    return plt


def _ordered(keys: set[str], order: tuple[str, ...]) -> list[str]:
    return [k for k in order if k in keys] + sorted(keys - set(order))


def dispersion_heatmap(summary: Mapping[str, object], path: Path) -> Path:
    """Evaluator × factor heatmap of D (percent); NaN cells left blank."""
    import numpy as np

    plt = pyplot()
    evs = sorted(summary["evaluators"])
    factors = _ordered({f for e in evs for f in summary["evaluators"][e].get(DISPERSION, {})}, factor_names())
    data = np.array(
        [[finite_or_nan(summary["evaluators"][e][DISPERSION].get(f)) * 100 for f in factors] for e in evs]
    ).reshape(len(evs), len(factors))
    fig, ax = plt.subplots(figsize=(2.0 + 0.9 * max(len(factors), 1), 1.2 + 0.45 * max(len(evs), 1)))
    image = ax.imshow(np.ma.masked_invalid(data), cmap="viridis", aspect="auto")
    finite = data[np.isfinite(data)]
    middle = (float(finite.min()) + float(finite.max())) / 2 if finite.size else 0.0
    ax.set_xticks(range(len(factors)), factors, rotation=35, ha="right")
    ax.set_yticks(range(len(evs)), evs)
    for i in range(len(evs)):
        for j in range(len(factors)):
            if math.isfinite(data[i, j]):
                # dark text on viridis' bright (yellow-green) half, white on its dark half
                colour = "black" if data[i, j] > middle and finite.max() > finite.min() else "white"
                ax.text(j, i, f"{data[i, j]:.1f}", ha="center", va="center", color=colour, fontsize=8)
    fig.colorbar(image, ax=ax, label="dispersion D (%)")
    ax.set_title("Score dispersion across factor levels")
    return save_figure(fig, path)


def discrimination_bars(summary: Mapping[str, object], path: Path) -> Path | None:
    """Grouped bars: tie-adjusted directional discrimination per probe, 50 % chance line;
    ``None`` (nothing drawn, an older file removed) when no probe has a finite value, e.g. on
    scenes where no probe applies."""
    import numpy as np

    if not probes_measured(summary):
        Path(path).unlink(missing_ok=True)
        return None
    evs = sorted(summary["evaluators"])
    probes = _ordered({p for e in evs for p in summary["evaluators"][e].get(DISCRIMINATION, {})}, probe_names())
    plt = pyplot()
    # at least 5 in wide: the title and the legend (below the axes) never cover the bars
    fig, ax = plt.subplots(figsize=(max(5.0, 1.5 + 0.6 * max(len(evs), 1) * max(len(probes), 1) / 2), 3.6))
    width = 0.8 / max(len(probes), 1)
    x = np.arange(len(evs))
    for k, probe in enumerate(probes):
        values = [finite_or_nan(summary["evaluators"][e][DISCRIMINATION].get(probe)) * 100 for e in evs]
        ax.bar(x + (k - (len(probes) - 1) / 2) * width, values, width, label=probe,
               color=OKABE_ITO[1 + k % 7], hatch=("", "//", "..", "xx")[k % 4],
               edgecolor="black", linewidth=0.4)
    ax.axhline(50, color="black", linestyle="--", linewidth=1, label="chance (50%)")
    ax.set_xticks(x, evs, rotation=35, ha="right")
    ax.set_ylim(0, 100)
    ax.set_ylabel("directional discrimination (%)")
    ax.legend(fontsize=7, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.32))
    ax.set_title("Content probes: does the score drop\nwhen the scene is degraded?")
    return save_figure(fig, path)


def peak_rho_intervals(summary: Mapping[str, object], path: Path) -> Path:
    """Peak ρ per evaluator with bootstrap 95 % intervals and the ρ = 1 reference line.

    Linear axis from 0 (symlog above ρ = 1 when some interval reaches past
    :data:`LINEAR_RHO_MAX`); ρ below :data:`RHO_ZERO` (a prompt-free companion's float noise,
    ~1e-31) is drawn at 0 and labelled ``≈0`` instead of stretching a log axis over 30 decades.
    """
    fig, _ax = peak_rho_figure(summary)
    return save_figure(fig, path)


def peak_rho_figure(summary: Mapping[str, object]) -> tuple[object, object]:
    """The (figure, axes) of :func:`peak_rho_intervals`, unsaved."""
    plt = pyplot()
    evs = sorted(summary["evaluators"])
    fig, ax = plt.subplots(figsize=(5.0, 0.9 + 0.3 * max(len(evs), 1)))
    top = 1.0
    for i, ev in enumerate(evs):
        typed = EvaluatorSummary.from_entry(ev, summary["evaluators"][ev])
        peak = _rho_shown(typed.peak_rho)
        lo, hi = typed.peak_rho_ci or (None, None)
        lo, hi = _rho_shown(lo), _rho_shown(hi)
        if math.isfinite(lo) and math.isfinite(hi):
            ax.plot([lo, hi], [i, i], color=OKABE_ITO[5], linewidth=2.5, solid_capstyle="butt")
            top = max(top, hi)
        if math.isfinite(peak):
            ax.plot([peak], [i], "o", color=OKABE_ITO[6], markersize=5)
            top = max(top, peak)
            label = "≈0" if peak == 0 else f"{peak:.3g}"
            ax.annotate(label, (peak, i), xytext=(4, 4), textcoords="offset points", fontsize=6)
        else:
            ax.annotate("n/a", (0, i), xytext=(4, -2), textcoords="offset points", fontsize=6)
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    if top > LINEAR_RHO_MAX:
        ax.set_xscale("symlog", linthresh=1.0, linscale=1.0)
        ax.set_xlim(0, top * 1.5)
    else:
        ax.set_xlim(0, max(1.5, top) * 1.1)
    ax.set_ylim(-0.7, len(evs) - 0.3)
    ax.set_yticks(range(len(evs)), evs)
    ax.set_xlabel("peak ρ (config. / generator variance), 95% CI; ρ = 1 dashed")
    ax.set_title("Peak configuration ratio")
    return fig, ax


def _rho_shown(value: object) -> float:
    """ρ as drawn: NaN stays NaN, anything below :data:`RHO_ZERO` is 0."""
    x = finite_or_nan(value)
    return 0.0 if math.isfinite(x) and x < RHO_ZERO else x


def envelope_bars(summary: Mapping[str, object], path: Path) -> Path:
    """Stacked bars per evaluator: generator pairs whose margin envelope across the shared
    protocols is strict (one sign), crosses zero, or touches a tie."""
    import numpy as np

    plt = pyplot()
    evs = sorted(summary["evaluators"])
    kinds = (("strict", "strict ordering"), ("sign_crossing", "sign crossing"), ("tie_boundary", "tie boundary"))
    fig, ax = plt.subplots(figsize=(5.0, 1.3 + 0.3 * max(len(evs), 1)))
    left = np.zeros(len(evs))
    for k, (key, label) in enumerate(kinds):
        values = np.array([finite_or_nan((summary["evaluators"][e].get(ENVELOPES) or {}).get(key)) for e in evs])
        values = np.nan_to_num(values, nan=0.0)
        ax.barh(range(len(evs)), values, left=left, color=OKABE_ITO[(2, 6, 7)[k]],
                hatch=("", "//", "..")[k], edgecolor="black", linewidth=0.4, label=label)
        left += values
    ax.set_yticks(range(len(evs)), evs)
    ax.set_xlabel("generator pairs")
    # beside the axes, not under them: below, it covered the x-axis label
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("Generator-pair margin envelopes across shared protocols")
    return save_figure(fig, path)


def save_figure(fig: object, path: Path) -> Path:
    """Write ``fig`` as a PNG at ``path`` (deterministic bytes) and close it; returns ``path``.
    Published atomically (:func:`harness.core.fileio.write_bytes_atomic`): a symlink at ``path``
    is replaced, never written through."""
    import io

    from harness.core.fileio import write_bytes_atomic

    path = Path(path)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata=_PNG_META)
    write_bytes_atomic(path, buffer.getvalue())
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def interaction_heatmap(summary: Mapping[str, object], path: Path) -> Path | None:
    """Evaluator × block heatmap of the interaction share (percent), annotated
    ``η² % / crossings``; ``None`` (nothing drawn) when no evaluator has blocks."""
    import numpy as np

    typed = {e: EvaluatorSummary.from_entry(e, entry) for e, entry in summary["evaluators"].items()}
    evs = sorted(e for e, s in typed.items() if s.blocks)
    blocks = sorted({b for e in evs for b in typed[e].blocks})
    if not evs or not blocks:
        return None
    plt = pyplot()

    def cell(e: str, b: str) -> BlockSummary:
        return typed[e].blocks.get(b) or BlockSummary()

    data = np.array([[finite_or_nan(cell(e, b).interaction_share) * 100 for b in blocks] for e in evs])
    fig, ax = plt.subplots(figsize=(2.4 + 1.4 * len(blocks), 1.2 + 0.35 * len(evs)))
    image = ax.imshow(np.ma.masked_invalid(data), cmap="magma", vmin=0.0, vmax=100.0, aspect="auto")
    ax.set_xticks(range(len(blocks)), [b.replace(":", " × ") for b in blocks], rotation=20, ha="right")
    ax.set_yticks(range(len(evs)), evs)
    for i, e in enumerate(evs):
        for j, b in enumerate(blocks):
            if math.isfinite(data[i, j]):
                crossings = finite_or_nan(cell(e, b).sign_crossings)
                text = f"{data[i, j]:.1f}%" + (f" / {crossings:.0f}×" if math.isfinite(crossings) else "")
                ax.text(j, i, text, ha="center", va="center", fontsize=6,
                        color="white" if data[i, j] < 60 else "black")
    fig.colorbar(image, ax=ax, label="interaction share η² (%)")
    ax.set_title("Block interaction share η² / sign-crossing pairs")
    return save_figure(fig, path)


def write_figures(summary: Mapping[str, object], out_dir: Path) -> list[Path]:
    """The figures under ``out_dir`` (``discrimination.png`` only when a probe was measured,
    ``interactions.png`` only with factorial blocks); returns the paths written."""
    out_dir = Path(out_dir)
    paths = [
        dispersion_heatmap(summary, out_dir / "dispersion.png"),
        discrimination_bars(summary, out_dir / "discrimination.png"),
        peak_rho_intervals(summary, out_dir / "peak_rho.png"),
        envelope_bars(summary, out_dir / "envelopes.png"),
        interaction_heatmap(summary, out_dir / "interactions.png"),
    ]
    return [p for p in paths if p is not None]
