"""The Evaluator Configuration Card a claim cites: the evaluator's identity, the scenes the
claim measured, the render and caption protocol of c0, the declared grid, the views and the
thresholds (:func:`harness.cards.card_format.build_card`). A claim computes no audit
statistics, so those fields are ``not_reported``; the card id (``ecc-v1-sha256:...``) is the
hash of the content, the same bytes for the same configuration on any machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.claims.inputs import ClaimInputs


def claim_card(inputs: ClaimInputs, renderer: object, bootstrap: int, seed: int) -> dict[str, object]:
    """The card of the claim's evaluator configuration (module doc)."""
    from harness.captions import realize
    from harness.cards.assemble import (
        NOT_REPORTED,
        PARAPHRASE_RULE,
        declared_views,
        evaluator_fields,
    )
    from harness.cards.card_format import OBJECT_FRAMING, ROOM_FRAMING, build_card
    from harness.checks.thresholds import layered
    from harness.vocab.factors import PARAPHRASE, TEMPLATE

    profile = inputs.profile
    scenes = inputs.scene_set
    thresholds = inputs.thresholds or layered(None, where="built-in thresholds").for_evaluator(inputs.spec.id)
    return build_card(
        evaluator=evaluator_fields(inputs.spec),
        scenes={"dataset": "t3d-audit bundled scenes" if inputs.scenes is None else f"scene set {inputs.scenes.name}",
                "generators": list(inputs.generators), "n_scenes": len(scenes.scenes),
                "n_prompts": len(scenes.prompt_ids), "scene_set_sha256": scenes.selection_sha256()},
        render={"renderer": str(getattr(renderer, "identity", type(renderer).__qualname__)),
                "c0": profile.c0.to_dict(),
                "framing": OBJECT_FRAMING if profile.scene_kind == "object" else ROOM_FRAMING,
                "background": "255", "declared_levels": {k: list(v) for k, v in profile.levels.items()},
                "probe_seed": 0},
        captions={"template": realize(profile.c0_template, "{prompt}"),
                  "n_templates": len(profile.levels.get(TEMPLATE, ())) or 1,
                  "paraphrase_rule": PARAPHRASE_RULE if PARAPHRASE in profile.levels else "no paraphrases",
                  "prompt_source": ", ".join(sorted({s.prompt_source for s in scenes.scenes})) or NOT_REPORTED},
        views=declared_views(dict(profile.levels), profile.c0, profile.view.yaw_pitch_deg),
        stats=None,
        bootstrap=bootstrap,
        seed=seed,
        thresholds=dict(thresholds),
        evidence={"frozen_scenes": ("released", "the scene set's manifest (scene files and assets by sha256)"),
                  "render_grids": ("not_released", "renders stay in the local render cache"),
                  "raw_score_files": ("released", "claim.json (the margins) and scores in the score cache"),
                  "evaluator_responses": ("not_reported", "not kept by a claim"),
                  "hash_manifest": ("not_reported", "a claim writes no manifest; the scene set has one")},
        known_missing=["audit statistics (run t3d-audit audit for them)", "render grids"],
    )  # fmt: skip
