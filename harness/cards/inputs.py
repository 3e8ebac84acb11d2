"""Gather a card's inputs from an audit session (plain data only, no paths of this machine) and
build the card from them, during the run or from a report directory (``validate --deep``)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harness import components
from harness.cards.card import NOT_REPORTED, build_card

if TYPE_CHECKING:
    from harness.session import AuditSession

PARAPHRASE_RULE = (
    "original prompt plus rewrites from fixtures/prompts/paraphrases.json, duplicates collapsed "
    "after normalisation, each wrapped by the default template; scored at the default render only"
)


def served_models(records: Any) -> list[str]:
    """Distinct non-empty ``served_model`` ids of a records table, sorted ([] without the column)."""
    from harness.records import SERVED_MODEL

    if SERVED_MODEL not in records.columns:
        return []
    return sorted({m for m in records[SERVED_MODEL] if isinstance(m, str) and m})


def evaluator_fields(spec: Any, served: list[str] | None = None) -> dict[str, Any]:
    """The card's evaluator identity group from a spec's ``identity()`` and the model ids its
    endpoint reported serving (``served``; left out of the card when there are none)."""
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
        "served_models": list(served or []),
    }


def declared_views(levels: dict[str, tuple[str, ...]], c0: Any) -> list[dict[str, float]]:
    """Poses the run renders: the pitch sweep at the default yaw, the yaw sweep at 45° pitch."""
    from harness.protocol import YAW_PITCH_DEG

    views = {(float(c0.pitch_deg), float(c0.yaw_deg))}
    views.update((float(p), float(c0.yaw_deg)) for p in levels.get("pitch", ()))
    views.update((YAW_PITCH_DEG, float(y)) for y in levels.get("yaw", ()))
    return [{"pitch_deg": p, "yaw_deg": y} for p, y in sorted(views)]


def card_facts(session: AuditSession, evaluators: Sequence[str]) -> dict[str, Any]:
    """What the cards of ``evaluators`` state beyond the raw scores and the run options.

    Recorded in ``manifest.json`` as ``options.card_facts`` so ``t3d-audit validate --deep``
    can rebuild every card from the report alone. JSON-ready::

        {"scenes": {"dataset", "generators", "n_scenes", "n_prompts", "prompt_source"},
         "companion": <companion evaluator id> | None,
         "evaluators": {id: {"identity": evaluator_fields(spec), "judge": bool,
                             "thresholds": {name: value}}}}
    """
    scenes = session.scene_set
    return {
        "scenes": {
            "dataset": "t3d-audit bundled scenes"
            if session.options.scenes is None
            else f"scene set {session.options.scenes.name}",
            "generators": list(scenes.generators),
            "n_scenes": len(scenes.scenes),
            "n_prompts": len(scenes.prompt_ids),
            "prompt_source": ", ".join(sorted({s.prompt_source for s in scenes.scenes})) or NOT_REPORTED,
        },
        "companion": companion_id(session),
        "evaluators": {
            ev: {
                "identity": evaluator_fields(session.specs[ev], served_models(session.records(ev))),
                "judge": getattr(session.specs[ev], "adapter", "") == "judge",
                "thresholds": session.thresholds_for(ev),
                **({"baseline_card_id": session.baseline_card_ids[ev]}
                   if ev in session.baseline_card_ids else {}),
            }
            for ev in sorted(evaluators)
        },
    }


def run_options(session: AuditSession, evaluators: Sequence[str]) -> dict[str, Any]:
    """``manifest.json#/options``: every run setting the report's numbers and cards depend on.

    JSON-ready (round-tripped), so a card built from it during the run equals the card
    ``validate --deep`` rebuilds from the manifest.
    """
    options = {
        "profile": session.profile.name,
        "bootstrap": session.bootstrap,
        "seed": session.seed,
        "probe_seed": session.options.probe_seed,
        "renderer": session.renderer_identity,
        "evaluators": {ev: session.specs[ev].identity_hash for ev in sorted(evaluators)},
        "scene_set_sha256": components.scene_set_sha256(session.scene_set),
        "plan_sha256": session.plan.key,
        "thresholds": session.options.thresholds.to_dict(),
        "run_id_explicit": bool(session.options.run_id),
        "card_facts": card_facts(session, evaluators),
    }
    return json.loads(json.dumps(options, sort_keys=True, allow_nan=False))


def card_for(session: AuditSession, evaluator_id: str) -> dict[str, Any]:
    """The Evaluator Configuration Card of one evaluator of the session's run."""
    options = run_options(session, [evaluator_id])
    cid = options["card_facts"]["companion"]
    agreement = None
    if cid is not None and cid != evaluator_id:
        agreement = components.companion_agreement(session.records(evaluator_id), session.records(cid))
    return assemble_card(evaluator_id, options, session.summary(evaluator_id), agreement)


def assemble_card(
    evaluator_id: str, options: Mapping[str, Any], stats: Mapping[str, Any] | None, agreement: Any = None
) -> dict[str, Any]:
    """The card of ``evaluator_id`` from plain data: the run ``options`` (as in
    ``manifest.json``, with ``card_facts``), the evaluator's ``stats`` (its summary entry,
    computed from its own records) and ``agreement`` (``CompanionAgreement`` with the run's
    companion; ``None`` when the run has none or this evaluator is the companion).

    The one way cards are built: during the run (:func:`card_for`) and by
    ``t3d-audit validate --deep`` from a report directory.
    """
    from harness.protocol import get_profile

    facts = options["card_facts"]
    ev_facts = facts["evaluators"][evaluator_id]
    scenes = facts["scenes"]
    profile = get_profile(options["profile"])
    is_judge = bool(ev_facts["judge"])
    companion = companion_check(evaluator_id, facts["companion"], agreement)
    return build_card(
        evaluator={**ev_facts["identity"], "identity_sha256": options["evaluators"][evaluator_id]},
        scenes={
            "dataset": scenes["dataset"],
            "generators": list(scenes["generators"]),
            "n_scenes": scenes["n_scenes"],
            "n_prompts": scenes["n_prompts"],
            "scene_set_sha256": options["scene_set_sha256"],
        },
        render={
            "renderer": options["renderer"],
            "c0": profile.c0.to_dict(),
            "background": "255",
            "declared_levels": {k: list(v) for k, v in profile.levels.items()},
            "probe_seed": options["probe_seed"],
        },
        captions={
            "template": components.realize(components.default_template_id(), "{prompt}"),
            "n_templates": len(profile.levels.get("template", ())) or 1,
            "paraphrase_rule": PARAPHRASE_RULE if "paraphrase" in profile.levels else "no paraphrases",
            "prompt_source": scenes["prompt_source"],
        },
        views=declared_views(dict(profile.levels), profile.c0),
        stats=stats,
        bootstrap=options["bootstrap"],
        seed=options["seed"],
        thresholds=ev_facts["thresholds"],
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
        baseline_card_id=ev_facts.get("baseline_card_id"),
    )


COMPANION_ADAPTER = "companion"


def companion_id(session: AuditSession) -> str | None:
    """The run's symbolic companion evaluator (the first by id), ``None`` when it has none."""
    ids = sorted(e for e, s in session.specs.items() if getattr(s, "adapter", "") == COMPANION_ADAPTER)
    return ids[0] if ids else None


def companion_check(
    evaluator_id: str, cid: str | None, agreement: Any
) -> tuple[str, str] | tuple[str, str, dict[str, Any]] | None:
    """The card's companion check: agreement with the run's symbolic companion ``cid``.

    ``None`` when the run has no companion (the field is then ``not_reported``). The companion's
    own card says what it is; every other card gets its c0 agreement with it (``agreement``, a
    ``CompanionAgreement``, see :mod:`harness.stats.companion`), in words and as data.
    """
    if cid is None:
        return None
    what = (
        f"symbolic companion `{cid}`: scores each frozen scene against its prompt spec (object "
        "counts, pairwise relations, asset fidelity) without rendering, so every protocol gives "
        "it the same value"
    )
    if evaluator_id == cid:
        return ("geometry_grounded", f"this evaluator is the {what}")
    return ("geometry_grounded", describe_agreement(what, agreement), agreement_data(agreement))


def agreement_data(a: Any) -> dict[str, Any]:
    """The numbers :func:`describe_agreement` states, as data (fractions, not percentages):
    ``{"pair_agreement", "n_pairs", "ranking_tau", "winner", "companion_winner",
    "probes": {probe: {"drop_credit", "n_edits"}}}``; an undefined number (the prose's "n/a")
    is ``None``."""

    def num(x: float) -> float | None:
        return None if math.isnan(x) else float(x)

    return {
        "pair_agreement": num(a.pair_agreement),
        "n_pairs": int(a.n_pairs),
        "ranking_tau": num(a.ranking_tau),
        "winner": a.winner,
        "companion_winner": a.companion_winner,
        "probes": {
            probe: {"drop_credit": num(credit), "n_edits": int(n)}
            for probe, (credit, n) in a.probe_agreement.items()
        },
    }


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
