"""Build a card from plain run data: the run options with their card facts (as recorded in
``manifest.json#/options``), the evaluator's summary and its companion agreement.

The audit session gathers those inputs (``RunCards.run_options``, no paths of this
machine) and ``validate --deep`` reads them back from a report directory; both hand them to
:func:`assemble_card`, so the card is built one way. Nothing here knows about the session.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from harness.captions import realize
from harness.cards.card_format import NOT_REPORTED, OBJECT_FRAMING, ROOM_FRAMING, build_card
from harness.core.errors import CardError
from harness.core.numbers import finite_or_none
from harness.vocab.factors import PARAPHRASE, PITCH, TEMPLATE, YAW
from harness.vocab.metrics import HUMAN_AGREEMENT

if TYPE_CHECKING:
    import pandas as pd

    from harness.evaluators.base import EvaluatorSpec
    from harness.protocol.configurations import RenderConfig
    from harness.stats.companion_agreement import CompanionAgreement

PARAPHRASE_RULE = (
    "original prompt plus rewrites from fixtures/prompts/paraphrases.json, duplicates collapsed "
    "after normalisation, each wrapped by the default template; scored at the default render only"
)


def served_models(records: pd.DataFrame) -> list[str]:
    """Distinct non-empty ``served_model`` ids of a records table, sorted ([] without the column)."""
    from harness.protocol.records import SERVED_MODEL

    if SERVED_MODEL not in records.columns:
        return []
    return sorted({m for m in records[SERVED_MODEL] if isinstance(m, str) and m})


def evaluator_fields(spec: EvaluatorSpec, served: list[str] | None = None) -> dict[str, object]:
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


def declared_views(
    levels: dict[str, tuple[str, ...]], c0: RenderConfig, yaw_pitch_deg: float = 45.0,
    profile: object = None, view_policy: str = "single",
) -> list[dict[str, float]]:
    """Poses the run renders: the pitch sweep at the default yaw, the yaw sweep at
    ``yaw_pitch_deg`` (45° for rooms, the c0 pitch for single objects); under a multi-view
    ``view_policy`` every view of every configuration of ``profile``."""
    if view_policy != "single" and profile is not None:
        if view_policy.startswith("preset:"):
            import harness.protocol.presets  # noqa: F401  (registers the preset:NAME policies)
        views = {(float(r.pitch_deg), float(r.yaw_deg)) for r in profile.render_configs(view_policy)}
        return [{"pitch_deg": p, "yaw_deg": y} for p, y in sorted(views)]
    views = {(float(c0.pitch_deg), float(c0.yaw_deg))}
    views.update((float(p), float(c0.yaw_deg)) for p in levels.get(PITCH, ()))
    views.update((float(yaw_pitch_deg), float(y)) for y in levels.get(YAW, ()))
    return [{"pitch_deg": p, "yaw_deg": y} for p, y in sorted(views)]


def assemble_card(
    evaluator_id: str,
    options: Mapping[str, object],
    stats: Mapping[str, object] | None,
    agreement: CompanionAgreement | None = None,
) -> dict[str, object]:
    """The card of ``evaluator_id`` from plain data: the run ``options`` (as in
    ``manifest.json``, with ``card_facts``), the evaluator's ``stats`` (its summary entry,
    computed from its own records) and ``agreement`` (``CompanionAgreement`` with the run's
    companion; ``None`` when the run has none or this evaluator is the companion).

    The one way cards are built: during the run (``RunCards.card``) and by
    ``t3d-audit validate --deep`` from a report directory.
    """
    from harness.protocol.profiles import get_profile

    facts = options["card_facts"]
    ev_facts = facts["evaluators"][evaluator_id]
    scenes = facts["scenes"]
    # manifests written before scene kinds existed describe rooms
    profile = get_profile(options["profile"]).for_scene_kind(scenes.get("kind", "room"))
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
            "import_conventions": list(scenes.get("import_conventions", ())),
        },
        render={
            "renderer": options["renderer"],
            "c0": profile.c0.to_dict(),
            "framing": OBJECT_FRAMING if profile.scene_kind == "object" else ROOM_FRAMING,
            "background": "255",
            "declared_levels": {k: list(v) for k, v in profile.levels.items()},
            "probe_seed": options["probe_seed"],
        },
        captions={
            "template": realize(profile.c0_template, "{prompt}"),
            "n_templates": len(profile.levels.get(TEMPLATE, ())) or 1,
            "paraphrase_rule": PARAPHRASE_RULE if PARAPHRASE in profile.levels else "no paraphrases",
            "prompt_source": scenes["prompt_source"],
        },
        views=declared_views(dict(profile.levels), profile.c0, profile.view.yaw_pitch_deg,
                             profile, options.get("view_policy", "single")),
        view_policy=options.get("view_policy", "single"),
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
        known_missing=(["render grids"]
        if companion is not None
        else ["companion validation (geometry-grounded, multi-view or human)", "render grids"])
        + not_applicable_notes(scenes.get("factors_not_applicable")),
        companion=companion,
        baseline_card_id=ev_facts.get("baseline_card_id"),
        human_agreement=ev_facts.get(HUMAN_AGREEMENT),
        search=ev_facts.get("search"),
        repeatability=ev_facts.get("repeatability"),
    )


def not_applicable_notes(counts: Mapping[str, int] | None) -> list[str]:
    """Card lines for factors that do not apply to some scenes (``card_facts`` ``scenes``
    ``factors_not_applicable``: factor -> number of scenes)."""
    return [
        f"{factor} effect: not applicable to {n} scene(s) of 3D Gaussian splats (baked "
        "radiance); those scenes have no rows for it, so their effect is not a null effect"
        for factor, n in sorted((counts or {}).items())
    ]


def companion_check(
    evaluator_id: str, cid: str | None, agreement: CompanionAgreement | None
) -> tuple[str, str] | tuple[str, str, dict[str, object]] | None:
    """The card's companion check: agreement with the run's symbolic companion ``cid``.

    ``None`` when the run has no companion (the field is then ``not_reported``). The companion's
    own card says what it is; every other card gets its c0 agreement with it (``agreement``, a
    ``CompanionAgreement``, see :mod:`harness.stats.companion_agreement`), in words and as data.
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
    if agreement is None:
        raise CardError(
            f"no companion agreement given for {evaluator_id!r}",
            where="card companion_check",
            hint=f"compute it from the records of {evaluator_id!r} and {cid!r}",
        )
    return ("geometry_grounded", describe_agreement(what, agreement), agreement_data(agreement))


def agreement_data(a: CompanionAgreement) -> dict[str, object]:
    """The numbers :func:`describe_agreement` states, as data (fractions, not percentages):
    ``{"pair_agreement", "n_pairs", "ranking_tau", "winner", "companion_winner",
    "probes": {probe: {"drop_credit", "n_edits"}}}``; an undefined number (the prose's "n/a")
    is ``None``."""
    num = finite_or_none
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


def describe_agreement(what: str, a: CompanionAgreement) -> str:
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
