"""Spec builders: one constructor per evaluator family, with the scale and range constants.

Each builder fills in its family's identity fields (``adapter``, preprocessing text, score
scale and range, hub files, adapter options); the study's catalogue
(:mod:`harness.evaluators.catalogue`) and user code call them to make
:class:`~harness.evaluators.base.EvaluatorSpec` values. Nothing here registers a spec
(:mod:`harness.evaluators.registry` does) or imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.core.bounded_input import read_json
from harness.core.errors import EvaluatorError
from harness.core.hashing import sha256_file
from harness.core.paths import REPO_ROOT
from harness.evaluators.base import EvaluatorSpec
from harness.evaluators.judge_settings import JudgeSettings

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
    options: dict[str, object] = {
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
        options=freeze_options(options),
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
    options: dict[str, object] | None = None,
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
        options=freeze_options(options or {}),
        description=description,
    )


def judge_spec(
    id: str,
    model: str,
    *,
    model_name: str = "",
    base_url: str = JudgeSettings.base_url,
    api_key_env: str = JudgeSettings.api_key_env,
    instruction: str = "",
    max_tokens: int = JudgeSettings.max_tokens,
    timeout_s: float = JudgeSettings.timeout_s,
    max_retries: int = JudgeSettings.max_retries,
    backoff_base_s: float = JudgeSettings.backoff_base_s,
    backoff_max_s: float = JudgeSettings.backoff_max_s,
    max_concurrency: int = JudgeSettings.max_concurrency,
    family: str = "MLLM judge",
) -> EvaluatorSpec:
    """A hosted judge: ``model`` is the API model snapshot id, sent as ``model``.

    Defaults are :class:`~harness.evaluators.judge_settings.JudgeSettings`'s; an empty
    ``instruction`` means its default instruction.
    """
    settings = JudgeSettings(
        model=model,
        base_url=base_url.rstrip("/"),
        instruction=instruction or JudgeSettings.instruction,
        api_key_env=api_key_env,
        max_tokens=max_tokens,
        timeout_s=timeout_s,
        max_retries=max_retries,
        backoff_base_s=backoff_base_s,
        backoff_max_s=backoff_max_s,
        max_concurrency=max_concurrency,
    )
    return EvaluatorSpec(
        id=id,
        family=family,
        adapter="judge",
        model_name=model_name or model,
        checkpoint=model,
        preprocessing="RGB PNG at native resolution, sent as a base64 data URL (detail=auto)",
        score_scale="integer rating 0-100 from the JSON field 'rating'; anything else -> failed",
        score_range=JUDGE_RANGE,
        instruction=settings.instruction,
        decoding=settings.decoding(),
        needs_text=True,
        options=freeze_options(settings.identity_options()),
        description=f"Hosted MLLM judge {model} over an OpenAI-compatible chat-completions API",
    )


def freeze_options(options: dict[str, object]) -> tuple[tuple[str, object], ...]:
    """Sorted (key, value) pairs with lists turned into tuples (hashable)."""
    return tuple(
        (k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(options.items())
    )


def openclip_local_spec(
    id: str,
    model_config: str | Path,
    checkpoint: str | Path,
    *,
    family: str = "custom open_clip",
    score_scale: str = CLIPSCORE_SCALE,
    description: str = "",
) -> EvaluatorSpec:
    """The spec :func:`harness.evaluators.registry.register_openclip_local` registers."""
    config_path = Path(model_config).expanduser().resolve()
    ckpt_path = Path(checkpoint).expanduser().resolve()
    for what, path in (("model config", config_path), ("checkpoint", ckpt_path)):
        if not path.is_file():
            raise EvaluatorError(f"evaluator {id!r}: {what} not found", where=path)
    try:
        cfg = read_json(config_path)
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
