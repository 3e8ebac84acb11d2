"""Report figures (matplotlib, Agg backend) drawn from the summary dict alone.

* ``dispersion.png``: heatmap evaluator × factor of the dispersion D in percent (study Fig. 2).
* ``discrimination.png``: directional discrimination per probe and evaluator, with the 50 %
  chance line (study Fig. 3).
* ``peak_rho.png``: peak ρ per evaluator with its bootstrap 95 % interval and the ρ = 1 line
  (study Fig. 6).

PNG files are written without a software/date stamp so equal summaries give equal bytes on
one machine. matplotlib is imported here only, when a report is written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FACTOR_ORDER = ("resolution", "focal_length", "lighting", "background", "pitch", "yaw", "template", "paraphrase")
PROBE_ORDER = ("keep_half", "biggest_only", "scrambled", "worst_objects")
_PNG_META = {"Software": None}


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 8, "svg.hashsalt": "t3d-audit"})
    return plt


def _num(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return math.nan
    return out if math.isfinite(out) else math.nan


def _ordered(keys: set[str], order: tuple[str, ...]) -> list[str]:
    return [k for k in order if k in keys] + sorted(keys - set(order))


def dispersion_heatmap(summary: Mapping[str, Any], path: Path) -> Path:
    """Evaluator × factor heatmap of D (percent); NaN cells left blank."""
    import numpy as np

    plt = _plt()
    evs = sorted(summary["evaluators"])
    factors = _ordered({f for e in evs for f in summary["evaluators"][e].get("dispersion", {})}, FACTOR_ORDER)
    data = np.array(
        [[_num(summary["evaluators"][e]["dispersion"].get(f)) * 100 for f in factors] for e in evs]
    ).reshape(len(evs), len(factors))
    fig, ax = plt.subplots(figsize=(1.2 + 0.8 * max(len(factors), 1), 0.8 + 0.35 * max(len(evs), 1)))
    image = ax.imshow(np.ma.masked_invalid(data), cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(factors)), factors, rotation=35, ha="right")
    ax.set_yticks(range(len(evs)), evs)
    for i in range(len(evs)):
        for j in range(len(factors)):
            if math.isfinite(data[i, j]):
                ax.text(j, i, f"{data[i, j]:.1f}", ha="center", va="center", color="white", fontsize=6)
    fig.colorbar(image, ax=ax, label="dispersion D (%)")
    ax.set_title("Score dispersion across factor levels")
    return _save(fig, path)


def discrimination_bars(summary: Mapping[str, Any], path: Path) -> Path:
    """Grouped bars: tie-adjusted directional discrimination per probe, 50 % chance line."""
    import numpy as np

    plt = _plt()
    evs = sorted(summary["evaluators"])
    probes = _ordered({p for e in evs for p in summary["evaluators"][e].get("discrimination", {})}, PROBE_ORDER)
    fig, ax = plt.subplots(figsize=(1.5 + 0.6 * max(len(evs), 1) * max(len(probes), 1) / 2, 3.0))
    width = 0.8 / max(len(probes), 1)
    x = np.arange(len(evs))
    for k, probe in enumerate(probes):
        values = [_num(summary["evaluators"][e]["discrimination"].get(probe)) * 100 for e in evs]
        ax.bar(x + (k - (len(probes) - 1) / 2) * width, values, width, label=probe)
    ax.axhline(50, color="black", linestyle="--", linewidth=1, label="chance (50%)")
    ax.set_xticks(x, evs, rotation=35, ha="right")
    ax.set_ylim(0, 100)
    ax.set_ylabel("directional discrimination (%)")
    ax.legend(fontsize=6, ncols=2)
    ax.set_title("Content probes: score drops when the scene is degraded")
    return _save(fig, path)


def peak_rho_intervals(summary: Mapping[str, Any], path: Path) -> Path:
    """Peak ρ per evaluator with bootstrap 95 % intervals, log scale, ρ = 1 reference line."""
    plt = _plt()
    evs = sorted(summary["evaluators"])
    fig, ax = plt.subplots(figsize=(4.5, 0.8 + 0.3 * max(len(evs), 1)))
    for i, ev in enumerate(evs):
        entry = summary["evaluators"][ev]
        peak = _num(entry.get("peak_rho"))
        ci = entry.get("peak_rho_ci") or [None, None]
        lo, hi = _num(ci[0]), _num(ci[1])
        if math.isfinite(lo) and math.isfinite(hi) and lo > 0:
            ax.plot([lo, hi], [i, i], color="tab:blue", linewidth=2)
        if math.isfinite(peak) and peak > 0:
            ax.plot([peak], [i], "o", color="tab:red")
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_yticks(range(len(evs)), evs)
    ax.set_xlabel("peak ρ (configuration / generator variance), 95% bootstrap CI")
    ax.set_title("Peak configuration ratio")
    return _save(fig, path)


def _save(fig: Any, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=120, metadata=_PNG_META)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def write_figures(summary: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """All three figures under ``out_dir``; returns their paths."""
    out_dir = Path(out_dir)
    return [
        dispersion_heatmap(summary, out_dir / "dispersion.png"),
        discrimination_bars(summary, out_dir / "discrimination.png"),
        peak_rho_intervals(summary, out_dir / "peak_rho.png"),
    ]
