"""Where the public human-judgment data lives for the known-answer tests (skipped when absent).

Default: ``shared/data/human`` in the folder that holds the repository; ``T3D_AUDIT_HUMAN_DATA``
overrides.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def human_data(sub: str) -> Path:
    base = Path(os.environ.get("T3D_AUDIT_HUMAN_DATA", ROOT.parent / "shared" / "data" / "human"))
    path = base / sub
    if not path.exists():
        pytest.skip(f"public human-judgment data not present at {path} (set T3D_AUDIT_HUMAN_DATA)")
    return path


#: TIFA v1.0's published agreement of each metric with the human mean over all 800 images:
#: (np.corrcoef, printed by the notebook as "Spearman's Correlation"; scipy.stats.kendalltau,
#: i.e. tau-b). Yushi-Hu/tifa @ 8e37050f (the notebook's file last changed in 5fdd711),
#: human_annotations/compute_correlation.ipynb, committed cell output.
TIFA_PUBLISHED = {
    "meteor": (0.33965916777485317, 0.27407599432086477),
    "bleu": (0.18334016729588443, 0.18791013860699693),
    "rouge": (0.3288894058298478, 0.24485782545105927),
    "spice": (0.3280527854243443, 0.2317581980131657),
    "clipscore_vitb32": (0.3318181645103688, 0.2314458979024208),
    "tifa_vilt": (0.4932251792578269, 0.3824088520807112),
    "tifa_git-large": (0.5445007948927731, 0.42550824027221545),
    "tifa_ofa-large": (0.4961472092111418, 0.37247819040318836),
    "tifa_blip2-flant5xl": (0.5589831246126169, 0.4359972113027652),
    "tifa_mplug-large": (0.5967201059577838, 0.4717164648720951),
}
