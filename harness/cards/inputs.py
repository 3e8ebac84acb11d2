"""Gather a card's inputs from an audit session (plain data only, no paths of this machine)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from harness import components
from harness.cards.card import NOT_REPORTED, build_card

if TYPE_CHECKING:
    from harness.session import AuditSession

PARAPHRASE_RULE = (
    "original prompt plus rewrites from fixtures/prompts/paraphrases.json, duplicates collapsed "
    "after normalisation, each wrapped by the default template; scored at the default render only"
)


def evaluator_fields(spec: Any) -> dict[str, Any]:
    """The card's evaluator identity group from a spec's ``identity()``."""
    ident = dict(spec.identity())
    checkpoint = ident.get("checkpoint") or NOT_REPORTED
    return {
        "evaluator_id": spec.id,
        "name": ident.get("model_name") or ident.get("family") or spec.id,
        "checkpoint": str(checkpoint),
        "identity_sha256": spec.identity_hash,
        "instruction": ident.get("instruction") or NOT_REPORTED,
        "decoding": ident.get("decoding") or "deterministic forward pass",
        "call_date": ident.get("call_date") or NOT_REPORTED,
        "prompt_free": not bool(getattr(spec, "needs_text", True)),
    }


def declared_views(levels: dict[str, tuple[str, ...]], c0: Any) -> list[dict[str, float]]:
    """Poses the run renders: the pitch sweep at the default yaw, the yaw sweep at 45° pitch."""
    from harness.protocol import YAW_PITCH_DEG

    views = {(float(c0.pitch_deg), float(c0.yaw_deg))}
    views.update((float(p), float(c0.yaw_deg)) for p in levels.get("pitch", ()))
    views.update((YAW_PITCH_DEG, float(y)) for y in levels.get("yaw", ()))
    return [{"pitch_deg": p, "yaw_deg": y} for p, y in sorted(views)]


def card_for(session: AuditSession, evaluator_id: str) -> dict[str, Any]:
    """The Evaluator Configuration Card of one evaluator of the session's run."""
    spec = session.specs[evaluator_id]
    profile = session.profile
    scenes = session.scene_set
    prompt_sources = sorted({s.prompt_source for s in scenes.scenes})
    is_judge = getattr(spec, "adapter", "") == "judge"
    companion = companion_check(session, evaluator_id)
    return build_card(
        evaluator=evaluator_fields(spec),
        scenes={
            "dataset": "t3d-audit bundled scenes"
            if session.options.scenes is None
            else f"scene set {session.options.scenes.name}",
            "generators": list(scenes.generators),
            "n_scenes": len(scenes.scenes),
            "n_prompts": len(scenes.prompt_ids),
            "scene_set_sha256": components.scene_set_sha256(scenes),
        },
        render={
            "renderer": session.renderer_identity,
            "c0": profile.c0.to_dict(),
            "background": "255",
            "declared_levels": {k: list(v) for k, v in profile.levels.items()},
            "probe_seed": session.options.probe_seed,
        },
        captions={
            "template": components.realize(components.default_template_id(), "{prompt}"),
            "n_templates": len(profile.levels.get("template", ())) or 1,
            "paraphrase_rule": PARAPHRASE_RULE if "paraphrase" in profile.levels else "no paraphrases",
            "prompt_source": ", ".join(prompt_sources) or NOT_REPORTED,
        },
        views=declared_views(dict(profile.levels), profile.c0),
        stats=session.summary(evaluator_id),
        bootstrap=session.bootstrap,
        seed=session.seed,
        thresholds=session.thresholds_for(evaluator_id),
        evidence={
            "frozen_scenes": ("released", "manifest.json#/inputs (scene files and assets by sha256)"),
            "render_grids": ("not_released", "renders stay in the local render cache"),
            "raw_score_files": ("released", f"scores/{evaluator_id}.csv"),
            "evaluator_responses": ("not_released", "parsed scores only; raw responses not kept")
            if is_judge
            else ("not_reported", "not applicable: the evaluator returns scores, not responses"),
            "hash_manifest": ("released", "manifest.json"),
        },
        known_missing=["render grids"]
        if companion is not None
        else ["companion validation (geometry-grounded, multi-view or human)", "render grids"],
        companion=companion,
        baseline_card_id=session.baseline_card_ids.get(evaluator_id),
    )


COMPANION_ADAPTER = "companion"


def companion_check(session: AuditSession, evaluator_id: str) -> tuple[str, str] | None:
    """The card's companion check: agreement with the run's symbolic companion evaluator.

    ``None`` when the run has no companion (the field is then ``not_reported``). The companion's
    own card says what it is; every other card gets its c0 agreement with it (see
    :mod:`harness.stats.companion`).
    """
    ids = sorted(e for e, s in session.specs.items() if getattr(s, "adapter", "") == COMPANION_ADAPTER)
    if not ids:
        return None
    cid = ids[0]
    what = (
        f"symbolic companion `{cid}`: scores each frozen scene against its prompt spec (object "
        "counts, pairwise relations, asset fidelity) without rendering, so every protocol gives "
        "it the same value"
    )
    if evaluator_id == cid:
        return ("geometry_grounded", f"this evaluator is the {what}")
    a = components.companion_agreement(session.records(evaluator_id), session.records(cid))
    return ("geometry_grounded", describe_agreement(what, a))


def describe_agreement(what: str, a: Any) -> str:
    """One paragraph for the card from a ``CompanionAgreement``."""

    def pct(x: float) -> str:
        return "n/a" if math.isnan(x) else f"{100 * x:.0f}%"

    parts = [
        f"{what}. At c0 this evaluator orders {pct(a.pair_agreement)} of the {a.n_pairs} "
        "within-prompt generator pairs the companion orders as the companion does (evaluator "
        "ties count half)",
        "generator-mean ranking Kendall tau-b "
        + ("n/a" if math.isnan(a.ranking_tau) else f"{a.ranking_tau:+.2f}"),
        f"c0 winner {a.winner or 'tied'} (companion: {a.companion_winner or 'tied'})",
    ]
    for probe, (credit, n) in a.probe_agreement.items():
        parts.append(f"{probe}: drops on {pct(credit)} of the {n} edits the companion confirms as damaging")
    return "; ".join(parts) + "."
