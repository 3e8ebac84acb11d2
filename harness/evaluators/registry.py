"""Evaluator registry: the study's 20 evaluators (Table 12) as data, plus user additions.

Each family has a small constructor (``openclip_spec``, ``hf_spec``, ...) filling in the
family's identity fields; the built-in rows below are one call each. Identity values (open_clip
model names and pretrained tags, Hugging Face repo ids, preprocessing) were taken from
open_clip 3.3's pretrained table and the model cards; the open_clip ``-quickgelu`` model names
are used wherever the tag was trained with QuickGELU (OpenAI, MetaCLIP, DFN), because plain
names would build the wrong activation for those weights.

Users add evaluators in three ways:

* ``register(spec)`` from a ``conftest.py`` or any code run before selection;
* an entry point in group ``t3d_audit.evaluators`` whose object is a spec, an iterable of specs
  or a zero-argument callable returning either;
* :func:`register_openclip_local` for an open_clip model config JSON + a local checkpoint.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.errors import EvaluatorError
from harness.evaluators.base import EvaluatorSpec
from harness.hashing import sha256_file
from harness.paths import REPO_ROOT

ENTRY_POINT_GROUP = "t3d_audit.evaluators"

CLIPSCORE_W = 2.5
CLIPSCORE_SCALE = (
    f"CLIPScore (Hessel et al. 2021): {CLIPSCORE_W} * max(cos(image_emb, text_emb), 0); "
    f"range [0, {CLIPSCORE_W}]"
)
SIGLIP_SCALE = (
    "sigmoid(exp(logit_scale) * cos(image_emb, text_emb) + logit_bias): the model's trained "
    "pairwise match probability; range (0, 1)"
)
CLIPSCORE_RANGE = (0.0, CLIPSCORE_W)
PROBABILITY_RANGE = (0.0, 1.0)  # sigmoid, softmax and P("yes") readouts
COSINE_RANGE = (-1.0, 1.0)
JUDGE_RANGE = (0.0, 100.0)
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)
OPENCLIP_FILES = ("open_clip_model.safetensors|open_clip_pytorch_model.bin",)
HF_MODEL_FILES = (
    "config.json",
    "model.safetensors|model.safetensors.index.json|pytorch_model.bin|pytorch_model.bin.index.json",
    "preprocessor_config.json|processor_config.json",
    "tokenizer.json|tokenizer_config.json|vocab.txt|vocab.json",
)

_lock = threading.RLock()
_specs: dict[str, EvaluatorSpec] = {}
_entry_points_loaded = False


# --------------------------------------------------------------------------- constructors
def image_preprocessing(
    size: int,
    *,
    resize_mode: str = "shortest",
    interpolation: str = "bicubic",
    mean: Sequence[float] = OPENAI_MEAN,
    std: Sequence[float] = OPENAI_STD,
) -> str:
    """One-line description of an open_clip-style image transform (recorded on the card)."""
    if resize_mode == "squash":
        geometry = f"resize to {size}x{size} ignoring aspect ({interpolation})"
    else:
        geometry = f"resize shortest side to {size} ({interpolation}), center crop {size}x{size}"
    means = ", ".join(f"{v:g}" for v in mean)
    stds = ", ".join(f"{v:g}" for v in std)
    return f"RGB; {geometry}; scale to [0,1]; normalize mean=({means}) std=({stds})"


def openclip_spec(
    id: str,
    model_name: str,
    tag: str,
    *,
    family: str,
    image_size: int,
    context_length: int,
    hub_repo: str = "",
    resize_mode: str = "shortest",
    interpolation: str = "bicubic",
    mean: Sequence[float] = OPENAI_MEAN,
    std: Sequence[float] = OPENAI_STD,
    score_scale: str = CLIPSCORE_SCALE,
    hf_tokenizer: str = "",
    model_config: str = "",
    model_config_sha256: str = "",
    checkpoint_sha256: str = "",
    description: str = "",
) -> EvaluatorSpec:
    """A spec for an open_clip model ``model_name`` with pretrained tag or local file ``tag``."""
    options: dict[str, Any] = {
        "interpolation": interpolation,
        "mean": list(mean),
        "resize_mode": resize_mode,
        "std": list(std),
        "image_size": image_size,
    }
    if hf_tokenizer:
        options["hf_tokenizer"] = hf_tokenizer
    if model_config:
        options["model_config"] = model_config
        options["model_config_sha256"] = model_config_sha256
    scale = "sigmoid" if score_scale == SIGLIP_SCALE else "clipscore"
    options["scale"] = scale
    return EvaluatorSpec(
        score_range=PROBABILITY_RANGE if scale == "sigmoid" else CLIPSCORE_RANGE,
        id=id,
        family=family,
        adapter="open_clip",
        model_name=model_name,
        checkpoint=tag,
        checkpoint_sha256=checkpoint_sha256,
        preprocessing=image_preprocessing(
            image_size, resize_mode=resize_mode, interpolation=interpolation, mean=mean, std=std
        ),
        score_scale=score_scale,
        needs_text=True,
        max_text_tokens=context_length,
        hub_repo=hub_repo,
        hub_files=OPENCLIP_FILES if hub_repo else (),
        options=_freeze(options),
        description=description,
    )


def hf_spec(
    id: str,
    adapter: str,
    repo: str,
    *,
    family: str,
    model_name: str,
    preprocessing: str,
    score_scale: str,
    max_text_tokens: int | None,
    score_range: tuple[float, float] = PROBABILITY_RANGE,
    instruction: str = "",
    decoding: str = "",
    options: dict[str, Any] | None = None,
    description: str = "",
) -> EvaluatorSpec:
    """A spec for a transformers model loaded with ``from_pretrained(repo)``."""
    return EvaluatorSpec(
        score_range=score_range,
        id=id,
        family=family,
        adapter=adapter,
        model_name=model_name,
        checkpoint=repo,
        preprocessing=preprocessing,
        score_scale=score_scale,
        instruction=instruction,
        decoding=decoding,
        needs_text=True,
        max_text_tokens=max_text_tokens,
        hub_repo=repo if not Path(repo).is_absolute() else "",
        hub_files=HF_MODEL_FILES if not Path(repo).is_absolute() else (),
        options=_freeze(options or {}),
        description=description,
    )


def judge_spec(
    id: str,
    model: str,
    *,
    model_name: str = "",
    base_url: str = "https://api.openai.com/v1",
    api_key_env: str = "OPENAI_API_KEY",
    instruction: str = "",
    max_tokens: int = 20,
    timeout_s: float = 60.0,
    max_retries: int = 4,
    backoff_base_s: float = 1.0,
    backoff_max_s: float = 60.0,
    max_concurrency: int = 4,
    family: str = "MLLM judge",
) -> EvaluatorSpec:
    """A hosted judge: ``model`` is the API model snapshot id, sent as ``model``."""
    options = {
        "api_key_env": api_key_env, "base_url": base_url.rstrip("/"), "max_tokens": max_tokens,
        "temperature": 0.0, "timeout_s": timeout_s, "max_retries": max_retries,
        "backoff_base_s": backoff_base_s, "backoff_max_s": backoff_max_s,
        "max_concurrency": max_concurrency,
    }  # fmt: skip
    return EvaluatorSpec(
        id=id,
        family=family,
        adapter="judge",
        model_name=model_name or model,
        checkpoint=model,
        preprocessing="RGB PNG at native resolution, sent as a base64 data URL (detail=auto)",
        score_scale="integer rating 0-100 from the JSON field 'rating'; anything else -> failed",
        score_range=JUDGE_RANGE,
        instruction=instruction or JUDGE_INSTRUCTION,
        decoding=f"temperature=0; max_tokens={max_tokens}; n=1; "
        "response_format=json_object; retries on timeouts, connection errors and HTTP 408, 409, "
        "429 and 5xx with exponential backoff",
        needs_text=True,
        options=_freeze(options),
        description=f"Hosted MLLM judge {model} over an OpenAI-compatible chat-completions API",
    )


def _freeze(options: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Sorted (key, value) pairs with lists turned into tuples (hashable)."""
    return tuple(
        (k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(options.items())
    )


# --------------------------------------------------------------------------- built-ins
def _openai(id: str, arch: str, size: int, hub: str, label: str) -> EvaluatorSpec:
    # open_clip serves the OpenAI weights from timm's Hugging Face mirror (safetensors); the
    # original openaipublic .pt files are TorchScript archives, which torch.load cannot open
    # with weights_only=True, so they are not used.
    return openclip_spec(
        id, f"{arch}-quickgelu", "openai", family="CLIP (OpenAI)", image_size=size,
        context_length=77, hub_repo=hub,
        description=f"OpenAI CLIP {label} (Radford et al. 2021)",
    )  # fmt: skip


JUDGE_INSTRUCTION = (
    "You are rating how well a rendered image of a 3D scene matches a text description.\n"
    'Description: "{text}"\n'
    "Consider the objects, their counts, attributes and spatial relations the description "
    "asks for. Give one integer rating from 0 (does not match at all) to 100 (matches "
    "perfectly). Reply with strict JSON only, exactly of the form {\"rating\": <integer>}, "
    "with no other text."
)
VQASCORE_QUESTION = 'Does this figure show "{text}"? Please answer yes or no.'
BLIP_IMAGE = image_preprocessing(384, resize_mode="squash")
BLIP2_IMAGE = image_preprocessing(224, resize_mode="squash")


def builtin_specs() -> list[EvaluatorSpec]:
    """The 20 evaluators of the study's Table 12, in table order."""
    laion = dict(family="CLIP (open data)", image_size=224, context_length=77)
    specs = [
        _openai("clip-vit-b32", "ViT-B-32", 224, "timm/vit_base_patch32_clip_224.openai",
                "ViT-B/32"),
        _openai("clip-vit-b16", "ViT-B-16", 224, "timm/vit_base_patch16_clip_224.openai",
                "ViT-B/16"),
        _openai("clip-vit-l14", "ViT-L-14", 224, "timm/vit_large_patch14_clip_224.openai",
                "ViT-L/14"),
        _openai("clip-vit-l14-336", "ViT-L-14-336", 336, "timm/vit_large_patch14_clip_336.openai",
                "ViT-L/14@336px"),
        openclip_spec("openclip-vit-l14", "ViT-L-14", "laion2b_s32b_b82k", **laion,
                      hub_repo="laion/CLIP-ViT-L-14-laion2B-s32B-b82K",
                      mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5),
                      description="OpenCLIP ViT-L/14 on LAION-2B (Cherti et al. 2023)"),
        openclip_spec("openclip-vit-h14", "ViT-H-14", "laion2b_s32b_b79k", **laion,
                      hub_repo="laion/CLIP-ViT-H-14-laion2B-s32B-b79K",
                      description="OpenCLIP ViT-H/14 on LAION-2B (Cherti et al. 2023)"),
        openclip_spec("openclip-vit-bigg14", "ViT-bigG-14", "laion2b_s39b_b160k", **laion,
                      hub_repo="laion/CLIP-ViT-bigG-14-laion2B-39B-b160k",
                      description="OpenCLIP ViT-bigG/14 on LAION-2B (Cherti et al. 2023)"),
        openclip_spec("metaclip-vit-l14", "ViT-L-14-quickgelu", "metaclip_fullcc", **laion,
                      hub_repo="timm/vit_large_patch14_clip_224.metaclip_2pt5b",
                      description="MetaCLIP ViT-L/14, 2.5B curated pairs (Xu et al. 2024)"),
        openclip_spec("dfn-vit-l14", "ViT-L-14-quickgelu", "dfn2b", **laion,
                      hub_repo="apple/DFN2B-CLIP-ViT-L-14",
                      description="DFN-2B CLIP ViT-L/14 (Fang et al. 2024)"),
        openclip_spec("eva-clip-vit-l14", "EVA02-L-14", "merged2b_s4b_b131k", **laion,
                      hub_repo="timm/eva02_large_patch14_clip_224.merged2b_s4b_b131k",
                      description="EVA02-CLIP ViT-L/14 on Merged-2B (Sun et al. 2023)"),
        openclip_spec("clipa-vit-l14", "ViT-L-14-CLIPA", "datacomp1b", family="CLIP (open data)",
                      image_size=224, context_length=32,
                      hub_repo="UCSC-VLAA/ViT-L-14-CLIPA-datacomp1B", resize_mode="squash",
                      interpolation="bilinear", mean=(0.485, 0.456, 0.406),
                      std=(0.229, 0.224, 0.225), hf_tokenizer="bert-base-uncased",
                      description="CLIPA-v2 ViT-L/14 on DataComp-1B (Li et al. 2023); "
                                  "32-token text window"),
        hf_spec("longclip-vit-l14", "hf_clip", "zer0int/LongCLIP-L-Diffusers",
                family="CLIP (long-text)", model_name="Long-CLIP ViT-L/14",
                preprocessing=image_preprocessing(224), score_scale=CLIPSCORE_SCALE,
                score_range=CLIPSCORE_RANGE, max_text_tokens=248,
                description="Long-CLIP-L (Zhang et al. 2024), BeichenZhang/LongCLIP-L converted "
                            "unchanged to the transformers CLIPModel format (248 positions)"),
        openclip_spec("siglip-vit-l16", "ViT-L-16-SigLIP-256", "webli", family="Sigmoid objective",
                      image_size=256, context_length=64, hub_repo="timm/ViT-L-16-SigLIP-256",
                      resize_mode="squash", mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5),
                      score_scale=SIGLIP_SCALE, hf_tokenizer="timm/ViT-B-16-SigLIP",
                      description="SigLIP ViT-L/16 at 256 px on WebLI (Zhai et al. 2023)"),
        openclip_spec("siglip2-vit-l16", "ViT-L-16-SigLIP2-256", "webli",
                      family="Sigmoid objective", image_size=256, context_length=64,
                      hub_repo="timm/ViT-L-16-SigLIP2-256", resize_mode="squash",
                      mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5), score_scale=SIGLIP_SCALE,
                      hf_tokenizer="timm/ViT-L-16-SigLIP2-256",
                      description="SigLIP 2 ViT-L/16 at 256 px on WebLI (Tschannen et al. 2025)"),
        hf_spec("blip2-itm", "blip2_itm", "Salesforce/blip2-itm-vit-g", family="BLIP-2",
                model_name="BLIP-2 ViT-g Q-Former, ITM head (Blip2ForImageTextRetrieval)",
                preprocessing=BLIP2_IMAGE, max_text_tokens=512,
                score_scale="softmax(itm_logits)[match]: P(image and text match); range [0, 1]",
                options={"use_image_text_matching_head": True},
                description="BLIP-2 image-text matching head (Li et al. 2023a)"),
        hf_spec("blip2-itc", "blip2_itc", "Salesforce/blip2-itm-vit-g", family="BLIP-2",
                model_name="BLIP-2 ViT-g Q-Former, ITC head (Blip2ForImageTextRetrieval)",
                preprocessing=BLIP2_IMAGE, max_text_tokens=512,
                score_scale="max over the 32 Q-Former query embeddings of cos(query, text); "
                            "range [-1, 1]",
                score_range=COSINE_RANGE,
                options={"use_image_text_matching_head": False},
                description="BLIP-2 image-text contrastive head (Li et al. 2023a)"),
        hf_spec("blip-vqa", "blip_vqa", "Salesforce/blip-vqa-base", family="VQA-based",
                model_name="BLIP VQA base (BlipForQuestionAnswering)", preprocessing=BLIP_IMAGE,
                instruction="{text}?", max_text_tokens=512,
                decoding="one decoder step from the answer BOS; no sampling",
                score_scale='P("yes") of the first answer token, softmax over the vocabulary; '
                            "range [0, 1]",
                options={"answer": "yes"},
                description="BLIP-VQA as in T2I-CompBench (Huang et al. 2023), asked the whole "
                            "caption as one question (no noun-phrase split)"),
        hf_spec("vqascore", "vqascore", "Salesforce/instructblip-flan-t5-xxl",
                family="VQA-based",
                model_name="VQAScore on InstructBLIP-FlanT5-XXL "
                           "(InstructBlipForConditionalGeneration)",
                preprocessing=BLIP2_IMAGE, instruction=VQASCORE_QUESTION, max_text_tokens=512,
                decoding="one decoder step from the decoder start token; no sampling",
                score_scale='P("Yes") of the first answer token, softmax over the vocabulary; '
                            "range [0, 1]",
                options={"answer": "Yes"},
                description="VQAScore (Lin et al. 2024). The paper's default CLIP-FlanT5-XXL is "
                            "not in transformers; InstructBLIP-FlanT5-XXL is the closest "
                            "transformers model in t2v_metrics' VQAScore list (same FlanT5-XXL "
                            "language model, same question and P(Yes) readout)"),
        judge_spec("gpt4o-judge", "gpt-4o-2024-11-20", model_name="GPT-4o"),
        EvaluatorSpec(
            id="clip-iqa", family="Quality (scoped)", adapter="clip_iqa",
            model_name="RN50-quickgelu", checkpoint="openai",
            preprocessing=image_preprocessing(224),
            score_scale='softmax(100 * [cos(img, "Good photo."), cos(img, "Bad photo.")])[0]: '
                        "P(good); range [0, 1]",
            score_range=PROBABILITY_RANGE,
            instruction='antonym prompt pair ("Good photo.", "Bad photo.")',
            needs_text=False, max_text_tokens=77,
            hub_repo="timm/resnet50_clip.openai", hub_files=OPENCLIP_FILES,
            options=_freeze({"prompts": ["Good photo.", "Bad photo."], "logit_scale": 100.0,
                             "image_size": 224,
                             "interpolation": "bicubic", "resize_mode": "shortest",
                             "mean": list(OPENAI_MEAN), "std": list(OPENAI_STD)}),
            description="CLIP-IQA (Wang et al. 2023), prompt-free quality control on OpenAI "
                        "CLIP RN50; excluded from alignment counts",
        ),
    ]  # fmt: skip
    return specs


# --------------------------------------------------------------------------- registry API
def _ensure_loaded() -> None:
    global _entry_points_loaded
    with _lock:
        if not _specs:
            for spec in builtin_specs():
                _specs[spec.id] = spec
            # the bundled reference evaluators (trained models present, companion, planted-*)
            from harness.evaluators.reference.specs import all_reference_specs

            for spec in all_reference_specs():
                _specs.setdefault(spec.id, spec)
        if not _entry_points_loaded:
            _entry_points_loaded = True
            _load_entry_points()


def _load_entry_points() -> None:
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            if callable(obj) and not isinstance(obj, EvaluatorSpec):
                obj = obj()
            specs = [obj] if isinstance(obj, EvaluatorSpec) else list(obj)
        except Exception as exc:
            raise EvaluatorError(
                f"entry point {ep.name!r} ({ep.value}) failed to load: {exc}",
                where=ENTRY_POINT_GROUP,
                hint="fix or uninstall the package that provides it",
            ) from exc
        for spec in specs:
            register(spec, replace=True)


def register(spec: EvaluatorSpec, *, replace: bool = False) -> EvaluatorSpec:
    """Add ``spec``; an id already registered with a different identity needs ``replace``."""
    if not isinstance(spec, EvaluatorSpec):
        raise EvaluatorError(f"register() needs an EvaluatorSpec, got {type(spec).__name__}")
    _ensure_loaded()
    with _lock:
        old = _specs.get(spec.id)
        if old is not None and old != spec and not replace:
            raise EvaluatorError(
                f"evaluator id {spec.id!r} is already registered with a different identity",
                hint="choose another id or pass replace=True",
            )
        _specs[spec.id] = spec
    return spec


def unregister(evaluator_id: str) -> None:
    """Remove a registered evaluator (tests and conftests that clean up after themselves)."""
    _ensure_loaded()
    with _lock:
        _specs.pop(evaluator_id, None)


def all_specs() -> list[EvaluatorSpec]:
    """Every registered spec: the built-ins in table order, then additions in order."""
    _ensure_loaded()
    with _lock:
        return list(_specs.values())


def declared_score_ranges(evaluator_ids: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``id → (low, high)`` for the registered evaluators among ``evaluator_ids`` that declare a
    score range (records of other ids are only checked for finite scores)."""
    by_id = {s.id: s for s in all_specs()}
    return {
        e: by_id[e].score_range  # type: ignore[misc]
        for e in sorted(set(evaluator_ids))
        if e in by_id and by_id[e].score_range is not None
    }


def get(evaluator_id: str) -> EvaluatorSpec:
    """The spec registered as ``evaluator_id`` (exact id)."""
    return select([evaluator_id])[0]


def select(patterns: Sequence[str]) -> list[EvaluatorSpec]:
    """Specs matching ids or fnmatch globs, in registry order, without duplicates.

    A pattern that matches nothing raises :class:`EvaluatorError` listing close ids.
    """
    if isinstance(patterns, str):
        patterns = [patterns]
    specs = all_specs()
    ids = [s.id for s in specs]
    chosen: set[str] = set()
    for pattern in patterns:
        pattern = pattern.strip()
        hits = [i for i in ids if fnmatch.fnmatchcase(i, pattern)]
        if not hits:
            close = difflib.get_close_matches(pattern, ids, n=5, cutoff=0.4)
            raise EvaluatorError(
                f"no evaluator matches {pattern!r}",
                hint=(f"did you mean {', '.join(close)}? " if close else "")
                + "run 't3d-audit evaluators' to list them",
            )
        chosen.update(hits)
    return [s for s in specs if s.id in chosen]


def register_openclip_local(
    id: str,
    model_config: str | Path,
    checkpoint: str | Path,
    *,
    family: str = "custom open_clip",
    score_scale: str = CLIPSCORE_SCALE,
    description: str = "",
    replace: bool = False,
) -> EvaluatorSpec:
    """Register an open_clip model from a config JSON and a local checkpoint file.

    ``model_config`` is an open_clip model config file (``{"embed_dim", "vision_cfg",
    "text_cfg", ...}``); its file stem becomes the open_clip model name. ``checkpoint`` is a
    ``.safetensors``/``.pt``/``.bin`` state dict. The checkpoint's sha256 enters the identity,
    so retrained weights never reuse cached scores.
    """
    spec = openclip_local_spec(
        id, model_config, checkpoint, family=family, score_scale=score_scale,
        description=description,
    )  # fmt: skip
    return register(spec, replace=replace)


def openclip_local_spec(
    id: str,
    model_config: str | Path,
    checkpoint: str | Path,
    *,
    family: str = "custom open_clip",
    score_scale: str = CLIPSCORE_SCALE,
    description: str = "",
) -> EvaluatorSpec:
    """The spec :func:`register_openclip_local` registers (without registering it)."""
    config_path = Path(model_config).expanduser().resolve()
    ckpt_path = Path(checkpoint).expanduser().resolve()
    for what, path in (("model config", config_path), ("checkpoint", ckpt_path)):
        if not path.is_file():
            raise EvaluatorError(f"evaluator {id!r}: {what} not found", where=path)
    try:
        cfg = json.loads(config_path.read_text(encoding="utf-8"))
        vision, text = cfg["vision_cfg"], cfg["text_cfg"]
    except (ValueError, KeyError, TypeError) as exc:
        raise EvaluatorError(
            f"evaluator {id!r}: model config is not an open_clip config ({exc})",
            where=config_path,
            hint="it needs embed_dim, vision_cfg and text_cfg as in open_clip/model_configs",
        ) from exc
    size = vision.get("image_size", 224)
    size = size[0] if isinstance(size, list) else int(size)
    pre = cfg.get("preprocess_cfg", {})
    return openclip_spec(
        id, config_path.stem, _portable(ckpt_path), family=family, image_size=size,
        context_length=int(text.get("context_length", 77)),
        resize_mode=pre.get("resize_mode", "shortest"),
        interpolation=pre.get("interpolation", "bicubic"),
        mean=tuple(pre.get("mean", OPENAI_MEAN)), std=tuple(pre.get("std", OPENAI_STD)),
        score_scale=score_scale, model_config=_portable(config_path),
        model_config_sha256=sha256_file(config_path),
        hf_tokenizer=text.get("hf_tokenizer_name", ""),
        checkpoint_sha256=sha256_file(ckpt_path), description=description,
    )  # fmt: skip


def _portable(path: Path) -> str:
    """``path`` relative to the repository root when inside it (identities stay portable)."""
    try:
        return path.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)
