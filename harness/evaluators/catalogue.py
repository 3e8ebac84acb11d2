"""The study's evaluator catalogue: the 20 evaluators of Table 12 plus the bundled reference set.

Data, one builder call per row (:mod:`harness.evaluators.builders`). Identity values (open_clip
model names and pretrained tags, Hugging Face repo ids, preprocessing) were taken from
open_clip 3.3's pretrained table and the model cards; the open_clip ``-quickgelu`` model names
are used wherever the tag was trained with QuickGELU (OpenAI, MetaCLIP, DFN), because plain
names would build the wrong activation for those weights.
"""

from __future__ import annotations

from harness.evaluators.base import EvaluatorSpec
from harness.evaluators.builders import (
    CLIPSCORE_RANGE,
    CLIPSCORE_SCALE,
    COSINE_RANGE,
    OPENAI_MEAN,
    OPENAI_STD,
    OPENCLIP_FILES,
    PROBABILITY_RANGE,
    SIGLIP_SCALE,
    freeze_options,
    hf_spec,
    image_preprocessing,
    judge_spec,
    openclip_spec,
)
from harness.evaluators.reference.specs import all_reference_specs


def _openai(id: str, arch: str, size: int, hub: str, label: str) -> EvaluatorSpec:
    # open_clip serves the OpenAI weights from timm's Hugging Face mirror (safetensors); the
    # original openaipublic .pt files are TorchScript archives, which torch.load cannot open
    # with weights_only=True, so they are not used.
    return openclip_spec(
        id, f"{arch}-quickgelu", "openai", family="CLIP (OpenAI)", image_size=size,
        context_length=77, hub_repo=hub,
        description=f"OpenAI CLIP {label} (Radford et al. 2021)",
    )  # fmt: skip


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
            options=freeze_options({"prompts": ["Good photo.", "Bad photo."], "logit_scale": 100.0,
                             "image_size": 224,
                             "interpolation": "bicubic", "resize_mode": "shortest",
                             "mean": list(OPENAI_MEAN), "std": list(OPENAI_STD)}),
            description="CLIP-IQA (Wang et al. 2023), prompt-free quality control on OpenAI "
                        "CLIP RN50; excluded from alignment counts",
        ),
    ]  # fmt: skip
    return specs


def catalogue_specs() -> list[EvaluatorSpec]:
    """What the registry starts with: :func:`builtin_specs`, then the bundled reference
    evaluators (the trained models whose weights are present, the companion, planted-*)."""
    return builtin_specs() + all_reference_specs()
