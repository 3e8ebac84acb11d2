"""The claim's figures, drawn from its evidence (numbers only; measures nothing):

* ``claim_envelope.png``: the pair's margin Δ = A − B at every grid protocol (grouped by
  factor) and every preset, with its simultaneous-band interval; reversed protocols in red;
* ``claim_presets.png``: the margin under each preset beside c0's;
* ``claim_matrix.png`` (``--all-pairs``): the class of each pairwise claim, row beats column.

The worst configuration's render beside c0's is the search's own figure
(:func:`harness.report.search_figures.worst_vs_c0_figure`). User text (generator names, preset
names) is drawn as text, never as mathtext.
"""

from __future__ import annotations

import math
from pathlib import Path

from harness.claims.all_pairs import CLASSES, PartialOrder
from harness.claims.evidence import PRESET, PairEvidence, ProtocolGap
from harness.report.figures import pyplot, save_figure

RED, BLUE, GREY = "#cc3311", "#0077bb", "#777777"
CLASS_COLOURS = {"robust": "#009988", "protocol-dependent": "#ee7733", "reversed": "#cc3311", "": "#ffffff"}


def _errors(gaps: list[ProtocolGap]) -> tuple[list[float], list[float]]:
    low = [g.gap - g.lo if math.isfinite(g.lo) else 0.0 for g in gaps]
    high = [g.hi - g.gap if math.isfinite(g.hi) else 0.0 for g in gaps]
    return low, high


def group_positions(gaps: list[ProtocolGap]) -> tuple[list[float], list[str]]:
    """Each protocol's x position and the groups' names, in order: a grid factor (the name
    before ``=``) or a preset is one group, and every group gets the same width 1 (group
    ``k`` spans ``[k, k + 1)``, its protocols spread evenly inside), so a factor of 7 levels
    stays readable beside one of 337."""
    groups: dict[str, list[int]] = {}
    for i, g in enumerate(gaps):
        groups.setdefault(g.name if g.kind == PRESET else g.name.split("=", 1)[0], []).append(i)
    xs = [0.0] * len(gaps)
    for k, members in enumerate(groups.values()):
        for rank, i in enumerate(members):
            xs[i] = k + 0.1 + 0.8 * (rank + 0.5) / len(members)
    return xs, list(groups)


def envelope_figure(ev: PairEvidence, path: Path) -> Path:
    """Δ per protocol with its band interval (module doc), one equal-width column per factor
    and preset (:func:`group_positions`)."""
    plt = pyplot()
    gaps = list(ev.protocols)
    xs, groups = group_positions(gaps)
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    for reversed_ in (False, True):
        idx = [i for i in range(len(gaps)) if gaps[i].reversed == reversed_]
        if not idx:
            continue
        sub = [gaps[i] for i in idx]
        low, high = _errors(sub)
        ax.errorbar([xs[i] for i in idx], [g.gap for g in sub], yerr=[low, high], fmt="o", ms=2.5, lw=0.6,
                    color=RED if reversed_ else BLUE, label="B above A" if reversed_ else "A above B")  # fmt: skip
    ax.axhline(0.0, color=GREY, lw=0.8)
    ax.axhline(ev.c0[0], color=BLUE, lw=0.6, ls="--", label="c0")
    for k in range(1, len(groups)):
        ax.axvline(k, color=GREY, lw=0.3, alpha=0.5)
    ax.set_xlim(0, max(len(groups), 1))
    ax.set_xticks([k + 0.5 for k in range(len(groups))], groups, rotation=45, ha="right", fontsize=6,
                  parse_math=False)  # fmt: skip
    ax.set_ylabel(f"margin {ev.a} − {ev.b}", parse_math=False)
    ax.set_title(f"{ev.a} vs {ev.b}: margin per protocol, {100 * ev.level:.0f} % simultaneous band "
                 f"({ev.n_prompts} prompts)", fontsize=8, parse_math=False)  # fmt: skip
    ax.legend(fontsize=6, loc="best")
    fig.tight_layout()
    return save_figure(fig, path)


def presets_figure(ev: PairEvidence, path: Path) -> Path | None:
    """The margin under each preset beside c0's (``None`` without presets)."""
    if not ev.presets:
        return None
    plt = pyplot()
    rows = [ev.grid[0], *ev.presets]
    fig, ax = plt.subplots(figsize=(5.2, 0.5 + 0.32 * len(rows)))
    ys = list(range(len(rows)))
    low, high = _errors(rows)
    colours = [RED if g.reversed else BLUE for g in rows]
    for y, g, lo, hi, c in zip(ys, rows, low, high, colours, strict=True):
        ax.errorbar([g.gap], [y], xerr=[[lo], [hi]], fmt="o", ms=3, lw=0.8, color=c)
    ax.axvline(0.0, color=GREY, lw=0.8)
    ax.set_yticks(ys, ["c0 (grid)" if i == 0 else g.name for i, g in enumerate(rows)], fontsize=7, parse_math=False)
    ax.invert_yaxis()
    ax.set_xlabel(f"margin {ev.a} − {ev.b}", parse_math=False)
    ax.set_title("Presets: margin with its band interval (red: B above A)", fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path)


def matrix_figure(order: PartialOrder, path: Path) -> Path:
    """The class of "row beats column" for every claimed pair (module doc)."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    plt = pyplot()
    names = list(order.order)
    codes = {"": 0, **{c: i + 1 for i, c in enumerate(CLASSES)}}
    grid = [[codes[c] for c in row] for row in order.matrix]
    cmap = ListedColormap([CLASS_COLOURS[""], *(CLASS_COLOURS[c] for c in CLASSES)])
    size = 1.6 + 0.5 * len(names)
    fig, ax = plt.subplots(figsize=(size + 2.2, size))
    ax.imshow(grid, cmap=cmap, vmin=0, vmax=len(CLASSES))
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7, parse_math=False)
    ax.set_yticks(range(len(names)), names, fontsize=7, parse_math=False)
    ax.set_xlabel("beaten (column)")
    ax.set_ylabel("claimed better (row)")
    ax.legend(handles=[Patch(color=CLASS_COLOURS[c], label=c) for c in CLASSES], fontsize=6,
              loc="upper left", bbox_to_anchor=(1.02, 1.0))  # fmt: skip
    ax.set_title("Pairwise claims: row beats column", fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path)
