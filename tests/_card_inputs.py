"""Plain card inputs shared by the card tests: a c0 render config and a summary entry."""

from __future__ import annotations

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
