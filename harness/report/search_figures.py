"""The search's figures (docs/search.md), drawn from the search document and two images.

* ``search_trace.png``: the objective's effect of every trial against the trial number, with
  the best so far and the confirmation threshold;
* ``search_worst_vs_c0.png``: one scene rendered at c0 beside the worst configuration;
* ``search_flip_region.png``: the flip-region sample's points on the two float axes that carry
  the flips (or pitch and colour temperature), flipping points marked.

Formats what it is handed (numbers and ``(H, W, 3)`` uint8 arrays); measures nothing.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.report.figures import pyplot, save_figure


def trace_figure(doc: Mapping[str, object], path: Path) -> Path:
    """Effect per trial (dots; failed trials as grey ticks at 0) and the best so far (line)."""
    plt = pyplot()
    values = [math.nan if v is None else float(v) for v in doc.get("trace", [])]
    best, running = [], -math.inf
    for v in values:
        running = max(running, v) if math.isfinite(v) else running
        best.append(running if math.isfinite(running) else math.nan)
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    n = range(len(values))
    ax.plot([i for i in n if math.isfinite(values[i])], [v for v in values if math.isfinite(v)], ".",
            ms=3, color="#4477aa", label="trial")  # fmt: skip
    failed = [i for i in n if not math.isfinite(values[i])]
    if failed:
        ax.plot(failed, [0.0] * len(failed), "|", color="#999999", label="failed")
    ax.plot(list(n), best, "-", color="#cc3311", lw=1.2, label="best so far")
    held = doc.get("held_out") or {}
    threshold = (held.get("threshold") or {}).get("value")
    if threshold is not None:
        ax.axhline(threshold, color="#555555", ls="--", lw=0.8, label=f"threshold {threshold:g}")
    ax.set_xlabel("trial")
    ax.set_ylabel(str(doc.get("objective_label", "effect")))
    ax.set_title(f"Search trace: {doc.get('evaluator')} on {doc.get('profile')}, {doc.get('objective')}")
    ax.legend(fontsize=7, loc="lower right")
    return save_figure(fig, path)


def worst_vs_c0_figure(c0: object, worst: object, scene: str, worst_text: str, path: Path) -> Path:
    """``c0`` and ``worst`` images (``(H, W, 3)`` uint8) of one scene side by side."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 3.6))
    for ax, image, title in ((axes[0], c0, "c0"), (axes[1], worst, "worst configuration")):
        ax.imshow(image)
        ax.set_title(title)
        ax.axis("off")
    fig.suptitle(scene, fontsize=8)
    fig.text(0.5, 0.01, textwrap.fill(worst_text.replace(",", ", "), 110), ha="center", fontsize=5)
    return save_figure(fig, path)


def flip_region_figure(points: Sequence[tuple[dict[str, float], bool | None]], x: str, y: str,
                       share_text: str, path: Path) -> Path:  # fmt: skip
    """Sample points on axes ``x`` and ``y``: flipping ones red, others grey, failed hollow."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 3.8))
    for flag, style in ((False, {"color": "#bbbbbb", "s": 6}), (True, {"color": "#cc3311", "s": 14}),
                        (None, {"facecolors": "none", "edgecolors": "#555555", "s": 10})):  # fmt: skip
        chosen = [p for p, f in points if f is flag]
        if chosen:
            label = {False: "same verdict", True: "verdict flips", None: "failed"}[flag]
            ax.scatter([p[x] for p in chosen], [p[y] for p in chosen], label=label, **style)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(share_text, fontsize=7)
    ax.legend(fontsize=7)
    return save_figure(fig, path)
