"""Registry entries of the bundled reference evaluators.

:func:`reference_specs` returns the default profile's evaluator set; :func:`planted_specs` the
planted-fragility evaluators (tests and the documented demo). The registry starts with both
(:func:`harness.evaluators.catalogue.catalogue_specs`).

=================  ===================================================================
id                 what
=================  ===================================================================
ref-vit-clip       tiny ViT CLIP (open_clip ``t3d-ref-vit-clip``), ClipLoss, CLIPScore scale
ref-rn-clip        tiny ModifiedResNet CLIP (``t3d-ref-rn-clip``), ClipLoss, CLIPScore scale
ref-siglip         tiny ViT with the SigLIP loss (``t3d-ref-sigmoid``), sigmoid scale
ref-clipiqa        CLIP-IQA antonym pair on ref-vit-clip's weights (prompt-free control)
companion          symbolic companion check (scene vs prompt spec, no rendering)
planted-*          companion + a planted protocol effect (see ``planted.py``)
=================  ===================================================================

The companion and planted evaluators need scenes, not images: their adapters build objects
with ``needs_scene = True`` and ``score_items(items)`` (see ``items.py``).
"""

from __future__ import annotations

from dataclasses import replace

from harness.core.paths import REPO_ROOT
from harness.evaluators.base import EvaluatorSpec
from harness.evaluators.builders import (
    PROBABILITY_RANGE,
    SIGLIP_SCALE,
    freeze_options,
    openclip_local_spec,
)
from harness.evaluators.reference.models import CONFIG_DIR, RECIPES
from harness.evaluators.reference.planted import PLANTED_IDS

REFERENCE_IDS = ("ref-vit-clip", "ref-rn-clip", "ref-siglip", "ref-clipiqa", "companion")
WEIGHTS_DIR = "fixtures/evaluators"
COMPANION_SCALE = (
    "mean of count recall, count precision, relation satisfaction and asset fidelity "
    "(components absent from a spec are skipped); range [0, 1]"
)


# companion [0, 1] plus planted offsets of at most +-0.5 (planted.py), with room to spare
PLANTED_RANGE = (-1.0, 2.0)


def weights_path(model_id: str) -> str:
    """Repository-relative path of a bundled model's weights."""
    return f"{WEIGHTS_DIR}/{model_id}.safetensors"


def _model_specs() -> list[EvaluatorSpec]:
    out = []
    for rid, recipe in RECIPES.items():
        weights = REPO_ROOT / weights_path(rid)
        if not weights.is_file():
            continue  # not trained yet: `t3d-audit train-reference --model <id>`
        kwargs = {"score_scale": SIGLIP_SCALE} if recipe.loss == "siglip" else {}
        out.append(
            openclip_local_spec(
                rid,
                CONFIG_DIR / f"{recipe.model_name}.json",
                weights,
                family="reference (bundled, trained on harness renders)",
                description=f"{rid}: tiny open_clip {recipe.model_name} trained with "
                f"{'SigLipLoss' if recipe.loss == 'siglip' else 'ClipLoss'} on the harness's "
                f"own renders; card {WEIGHTS_DIR}/{rid}.card.json",
                **kwargs,
            )
        )
    return out


def _clipiqa_spec(vit: EvaluatorSpec) -> EvaluatorSpec:
    options = dict(vit.options)
    options.pop("scale", None)
    options.update({"prompts": ["Good photo.", "Bad photo."], "logit_scale": 100.0})
    return EvaluatorSpec(
        id="ref-clipiqa",
        family="Quality (scoped)",
        adapter="clip_iqa",
        model_name=vit.model_name,
        checkpoint=vit.checkpoint,
        checkpoint_sha256=vit.checkpoint_sha256,
        preprocessing=vit.preprocessing,
        score_scale='softmax(100 * [cos(img, "Good photo."), cos(img, "Bad photo.")])[0]: '
        "P(good); range [0, 1]",
        score_range=PROBABILITY_RANGE,
        instruction='antonym prompt pair ("Good photo.", "Bad photo.")',
        needs_text=False,
        max_text_tokens=vit.max_text_tokens,
        options=freeze_options(options),
        description="CLIP-IQA (Wang et al. 2023) on the bundled ref-vit-clip weights; "
        "prompt-free control, excluded from alignment counts",
    )


def companion_spec() -> EvaluatorSpec:
    return EvaluatorSpec(
        id="companion",
        family="Symbolic companion",
        adapter="companion",
        model_name="t3d-audit symbolic companion check",
        checkpoint="harness/evaluators/reference/companion.py",
        preprocessing="none: reads the structured scene and its prompt spec, never an image",
        score_scale=COMPANION_SCALE,
        score_range=(0.0, 1.0),
        needs_text=False,
        description="scene vs prompt spec: object counts, relations, asset fidelity; "
        "protocol-invariant by construction (the card's companion check)",
    )


def planted_specs() -> list[EvaluatorSpec]:
    """The planted-fragility evaluators over the companion (known answers, :data:`PLANTED_IDS`)."""
    return [
        EvaluatorSpec(
            id=name,
            family="Planted fragility (self-validation)",
            adapter="planted",
            model_name=f"companion + {name.removeprefix('planted-')} effect",
            checkpoint="harness/evaluators/reference/planted.py",
            preprocessing="none: reads the structured scene, its prompt spec and the configuration",
            score_scale=COMPANION_SCALE + " plus the planted offset (planted.py)",
            score_range=PLANTED_RANGE,
            needs_text=True,
            options=(("effect", name),),
            description=f"{name}: known, documented protocol effect for the audit's self-test",
        )
        for name in PLANTED_IDS
    ]


def reference_specs() -> list[EvaluatorSpec]:
    """The default profile's evaluator set: the trained models, CLIP-IQA on ref-vit-clip, and
    the companion. Models whose weights are missing are left out."""
    models = _model_specs()
    out = list(models)
    vit = [s for s in models if s.id == "ref-vit-clip"]
    if vit:
        out.append(_clipiqa_spec(vit[0]))
    out.append(companion_spec())
    return out


def all_reference_specs() -> list[EvaluatorSpec]:
    """Reference set plus planted evaluators (an entry-point target)."""
    return reference_specs() + planted_specs()


def preset_planted_specs() -> list[EvaluatorSpec]:
    """The protocol-preset known answers (``planted.PRESET_PLANTED``), outside the registry:
    ``t3d-audit concordance`` and ``reproduce`` select them by id (docs/protocols.md)."""
    from dataclasses import replace

    from harness.evaluators.reference.planted import PRESET_PLANTED

    template = planted_specs()[0]
    return [
        replace(template, id=name, options=(("effect", name),),
                model_name=f"companion + {name.removeprefix('preset-').removeprefix('planted-')} effect",
                description=f"{name}: known protocol-preset effect (docs/protocols.md)")
        for name in PRESET_PLANTED
    ]


def search_planted_specs() -> list[EvaluatorSpec]:
    """The search's known-answer planted evaluators (``planted.SEARCH_PLANTED``, e.g.
    planted-offgrid: pitch 50–60° under light below 3500 K), outside the registry."""
    from harness.evaluators.reference.planted import SEARCH_PLANTED

    base = next(s for s in planted_specs() if s.id == "planted-robust")
    return [replace(base, id=name, options=(("effect", name),),
                    model_name=f"companion + {name.removeprefix('planted-')} effect",
                    description=f"{name}: off-grid planted effect, the search's known answer")
            for name in SEARCH_PLANTED]  # fmt: skip


def repeatability_planted_specs() -> list[EvaluatorSpec]:
    """The repeatability check's known answer (``planted.REPEATABILITY_PLANTED``: planted-jitter,
    seeded per-call noise), outside the registry; a project offers it through
    ``pytest_audit_evaluators`` (docs/evaluators.md, "Repeatability")."""
    from harness.evaluators.reference.planted import REPEATABILITY_PLANTED

    base = next(s for s in planted_specs() if s.id == "planted-robust")
    return [replace(base, id=name, options=(("effect", name),),
                    model_name=f"companion + {name.removeprefix('planted-')} effect",
                    description=f"{name}: per-call seeded noise, the repeatability check's known answer")
            for name in REPEATABILITY_PLANTED]  # fmt: skip


def noisy_planted_specs() -> list[EvaluatorSpec]:
    """The known answers with seeded per-record noise (``planted.NOISY_PLANTED``:
    planted-boundary, every configuration's ρ against c0 exactly at 1; planted-noise, noise and
    no effect), outside the registry; a project offers them through ``pytest_audit_evaluators``
    or a test builds them (docs/intervals.md, "Known answers")."""
    from harness.evaluators.reference.planted import NOISY_PLANTED

    base = next(s for s in planted_specs() if s.id == "planted-robust")
    models = {"planted-boundary": "known generator qualities + seeded noise at every configuration but c0",
              "planted-noise": "companion + seeded noise at every configuration"}
    return [replace(base, id=name, options=(("effect", name),), model_name=models[name],
                    score_scale="the base score plus seeded normal noise (planted.py): unbounded",
                    score_range=None,  # normal noise has no bound
                    description=f"{name}: seeded per-record noise, a known answer of the interval policy")
            for name in NOISY_PLANTED]  # fmt: skip
