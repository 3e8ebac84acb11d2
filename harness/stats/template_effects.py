"""Caption-template effects (study Table 3 and Appendix E.1).

Slot choices come from the caption grammar (``harness.captions.get_template(id).slots``),
passed in as plain data so these functions stay pure. Each slot is compared on a *matched
subset* of templates, chosen by rules on the other slots, to keep it from being confounded
by the slots it co-occurs with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from harness.stats._nan import nanmean, nanmedian

NONE_LABEL = "(none)"
PRESENT, ABSENT = "present", "absent"

# slot -> {other slot: PRESENT | ABSENT}: the study's matched subsets (Appendix E.1).
DEFAULT_RULES: dict[str, dict[str, str]] = {
    "viewpoint": {},
    "noun": {"viewpoint": PRESENT},  # all five nouns span the same skeletons
    "frame": {},
    "connective": {"noun": PRESENT},  # a connective exists only with a noun
    "article": {"viewpoint": ABSENT},  # a / an / none are genuine alternatives only here
}


@dataclass(frozen=True)
class SlotEffect:
    """One slot's effect: ``shifts`` maps choice → (choice mean / slot mean − 1), a fraction;
    ``dispersion`` is (max − min choice mean) / slot mean; ``n_templates`` the subset size."""

    slot: str
    dispersion: float
    shifts: Mapping[str, float]
    n_templates: int


def slot_effects(
    template_means: Mapping[str, float],
    slots: Mapping[str, Mapping[str, str | None]],
    rules: Mapping[str, Mapping[str, str]] = DEFAULT_RULES,
) -> dict[str, SlotEffect]:
    """Per-slot effects for one evaluator.

    ``template_means``: template id → mean score over scenes (score units);
    ``slots``: template id → {slot: choice or None}. The slot mean is the plain mean of the
    choice means, so every choice weighs the same whatever its template count.
    """
    out: dict[str, SlotEffect] = {}
    for slot, rule in rules.items():
        groups: dict[str, list[float]] = {}
        for tid, value in template_means.items():
            choice = slots.get(tid)
            if choice is None or slot not in choice or not np.isfinite(value):
                continue
            if not all((choice.get(o) is not None) == (want == PRESENT) for o, want in rule.items()):
                continue
            label = choice[slot] if choice[slot] is not None else NONE_LABEL
            groups.setdefault(label, []).append(float(value))
        if len(groups) < 2:
            continue
        means = {k: float(np.mean(v)) for k, v in groups.items()}
        centre = float(np.mean(list(means.values())))
        if centre == 0:
            continue
        out[slot] = SlotEffect(
            slot=slot,
            dispersion=(max(means.values()) - min(means.values())) / abs(centre),
            shifts={k: (v - centre) / abs(centre) for k, v in sorted(means.items(), key=lambda kv: -kv[1])},
            n_templates=sum(len(v) for v in groups.values()),
        )
    return out


def average_slot_effects(per_evaluator: Sequence[Mapping[str, SlotEffect]]) -> dict[str, SlotEffect]:
    """Plain average over evaluators of each slot's dispersion and choice shifts (Table 3)."""
    slots: dict[str, list[SlotEffect]] = {}
    for effects in per_evaluator:
        for name, eff in effects.items():
            slots.setdefault(name, []).append(eff)
    out: dict[str, SlotEffect] = {}
    for name, effs in slots.items():
        choices = sorted({c for e in effs for c in e.shifts})
        shifts = {c: float(np.mean([e.shifts[c] for e in effs if c in e.shifts])) for c in choices}
        out[name] = SlotEffect(
            slot=name,
            dispersion=float(np.mean([e.dispersion for e in effs])),
            shifts=dict(sorted(shifts.items(), key=lambda kv: -kv[1])),
            n_templates=effs[0].n_templates,
        )
    return out


@dataclass(frozen=True)
class TemplateGain:
    """Best template vs the default for one evaluator.

    ``gain``: median over scenes (positive default score) of σ(best)/σ(default) − 1;
    ``default_rank``: 1 + number of templates whose mean beats the default's.
    """

    best: str
    default: str
    gain: float
    default_rank: int
    n_templates: int


def template_gain(scores: np.ndarray, levels: Sequence[str], default: str) -> TemplateGain | None:
    """Best template by mean score and its gain over ``default``; ``scores`` (G, P, T).

    Returns None when the default template was not measured or no template has a score
    (every record failed).
    """
    if default not in levels:
        return None
    means = nanmean(scores.reshape(-1, scores.shape[-1]), axis=0)  # (T,)
    k = list(levels).index(default)
    if not np.isfinite(means).any():
        return None
    best = int(np.nanargmax(means))
    base = scores[..., k]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(base > 0, scores[..., best] / base, np.nan)
    return TemplateGain(
        best=levels[best],
        default=default,
        gain=float(nanmedian(ratio)) - 1.0,
        default_rank=1 + int((means > means[k]).sum()),
        n_templates=len(levels),
    )
