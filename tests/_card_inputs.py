"""Plain card inputs shared by the card tests: a c0 render config, a summary entry and the
keyword arguments of a whole card (``base_inputs``)."""

from __future__ import annotations

import math
from typing import Any

C0 = {
    "resolution_px": 224,
    "focal_length_mm": 50.0,
    "lighting": "city",
    "pitch_deg": 0.0,
    "yaw_deg": 0.0,
    "samples": 8,
    "seed": 0,
    "denoise": False,
}


def stats_entry(**over):
    s = {
        "dispersion": {"pitch": 0.28, "yaw": 0.1},
        "rho": {"pitch": 1.4, "yaw": 0.3},
        "template_rho": 0.5,
        "peak_rho": 1.4,
        "peak_rho_ci": [0.9, 2.1],
        "kendall_w": {"pitch": 0.6, "yaw": 0.9},
        "top1_count": {"pitch": 2, "yaw": 1},
        "min_w": 0.6,
        "max_top1": 2,
        "best_view_inflation": 1.1,
        "discrimination": {"scrambled": 0.55, "keep_half": 0.8},
        "content_accuracy": 0.7,
        "envelopes": {"strict": 4, "sign_crossing": 9, "tie_boundary": 2, "stable_winner": None},
        "failed": 0,
    }
    s.update(over)
    return s


def base_inputs() -> dict[str, Any]:
    stats = stats_entry(
        logo_peak_rho_range=[0.8, 2.4],
        intervals={"rho": {"pitch": [1.0, 2.0]}, "dispersion": {}, "discrimination": {}},
        discrimination={"scrambled": 0.55, "keep_half": 0.8, "worst_objects": math.nan},
        best_view_inflation=math.nan,
    )
    return {
        "evaluator": {"evaluator_id": "tiny-a", "name": "tiny evaluator A", "checkpoint": "tiny-a",
                      "identity_sha256": "ab" * 32, "prompt_free": False},
        "scenes": {"dataset": "bundled", "generators": ["g1", "g2"], "n_scenes": 12, "n_prompts": 2,
                   "scene_set_sha256": "cd" * 32},
        "render": {"renderer": "numpy-box-rasterizer", "c0": dict(C0), "background": "255",
                   "declared_levels": {"pitch": ["0", "45"]}, "probe_seed": 3},
        "captions": {"template": "A view of {prompt}", "n_templates": 337,
                     "paraphrase_rule": "none", "prompt_source": "bundled"},
        "views": [{"pitch_deg": 0, "yaw_deg": 0}, {"pitch_deg": 45.0, "yaw_deg": 180.0}],
        "stats": stats,
        "bootstrap": 200,
        "seed": 42,
        "thresholds": {"peak_rho_max": 1.0, "min_kendall_w": 0.5},
        "evidence": {"raw_score_files": ("released", "scores/tiny-a.csv")},
    }


def card_of_stats(stats: dict[str, Any], thresholds: dict[str, float]) -> dict[str, Any]:
    """A validated card built from one evaluator's ``summary_with_intervals`` entry, with
    ``thresholds`` layered over the base inputs' (a registered statistic's card row)."""
    from harness.cards.card_format import build_card, validate_card

    inputs = base_inputs()
    inputs["stats"] = stats
    inputs["thresholds"] = {**inputs["thresholds"], **thresholds}
    card = build_card(**inputs)
    validate_card(card)
    return card

