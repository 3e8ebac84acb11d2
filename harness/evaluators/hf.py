"""transformers adapters: Long-CLIP, BLIP-2 ITM/ITC, BLIP-VQA and VQAScore.

Loading: ``from_pretrained(<local dir>, local_files_only=True)`` when the weights were found
locally (override dir, Hugging Face cache snapshot, or a local checkpoint path); otherwise,
when online, ``from_pretrained(<repo id>)`` lets transformers download. transformers loads
safetensors (or ``torch.load(weights_only=True)`` for legacy ``.bin``).

Text longer than the model's window is truncated by the model's own tokenizer to
``spec.max_text_tokens`` and the ScoreResult says ``truncated=True``.

Scores (all float64):

* ``hf_clip`` (Long-CLIP): CLIPScore ``2.5 * max(cos, 0)`` from ``get_image_features`` /
  ``get_text_features``; an embedding evaluator with ``score_grid``.
* ``blip2_itm``: ``softmax(itm_logits)[:, 1]``, P(match), per pair.
* ``blip2_itc``: max over the Q-Former query embeddings of cos(query, text); ``score_grid``
  runs one forward per image batch against all distinct captions.
* ``blip_vqa``: P(answer token) at the first decoder step after BOS, full-vocabulary softmax.
* ``vqascore``: P("Yes") for the question template at the first decoder step (encoder-decoder
  language models) or the next token after the prompt (decoder-only).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import numpy as np

from harness.core.errors import EvaluatorError
from harness.core.paths import CACHE_ENV
from harness.evaluators import weights
from harness.evaluators._torch import (
    EmbeddingScoring,
    batched,
    clipscore,
    distinct_images,
    distinct_texts,
    load_failure,
    resolve_device,
    to_pil,
)
from harness.evaluators.base import EvaluatorSpec, ScoreResult, check_image, check_pairs
from harness.evaluators.cache import EmbeddingCache


# --------------------------------------------------------------------------- loading
def load_pretrained(spec: EvaluatorSpec, model_cls: object, device: str) -> tuple[object, object]:
    """``(model in eval mode on device, processor)`` for a transformers spec."""
    from transformers import AutoProcessor

    found = weights.require(spec)
    if found is not None and not found.path.is_dir():
        raise weights.missing_weights_error(
            spec, f"{found.path} is a file; transformers needs a save_pretrained directory"
        )
    source = str(found.path) if found is not None else spec.checkpoint
    local_only = found is not None or weights.is_offline()
    try:
        model = model_cls.from_pretrained(source, local_files_only=local_only)
        processor = AutoProcessor.from_pretrained(source, local_files_only=local_only)
    except OSError as exc:
        if found is None:
            raise weights.missing_weights_error(spec, str(exc).splitlines()[0]) from exc
        raise load_failure(spec, exc) from exc
    except Exception as exc:
        raise load_failure(spec, exc) from exc
    model.to(device)
    model.eval()
    return model, processor


def _tokenizer(processor: object) -> object:
    return getattr(processor, "tokenizer", processor)


def _pixels(processor: object, images: Sequence[np.ndarray], device: str, dtype: object) -> object:
    image_processor = getattr(processor, "image_processor", processor)
    batch = image_processor(images=[to_pil(im) for im in images], return_tensors="pt")
    return batch["pixel_values"].to(device=device, dtype=dtype)


def _features(output: object) -> object:
    """transformers 5 returns a ModelOutput whose ``pooler_output`` holds the projection."""
    return getattr(output, "pooler_output", output)


class _Texts:
    """Tokenisation with truncation to the spec's text window, recording what was cut."""

    def __init__(self, spec: EvaluatorSpec, tokenizer: object, max_length: int):
        self.tokenizer = tokenizer
        self.max_length = max_length

    def truncated(self, text: str) -> bool:
        return len(self.tokenizer(text, truncation=False)["input_ids"]) > self.max_length

    def encode(self, texts: Sequence[str], device: str) -> object:
        return self.tokenizer(
            list(texts),
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        ).to(device)


def _window(spec: EvaluatorSpec, model_limit: int | None) -> int:
    limits = [v for v in (spec.max_text_tokens, model_limit) if v]
    return int(min(limits)) if limits else 512


class _HFModel:
    """A loaded transformers model with its processor, device, dtype and text window."""

    def __init__(self, spec: EvaluatorSpec, model: object, processor: object, device: str, batch: int):
        self.spec = spec
        self.model = model
        self.processor = processor
        self.device = device
        self.batch_size = batch
        self.dtype = next(model.parameters()).dtype
        self.texts = _Texts(spec, _tokenizer(processor), _window(spec, self._model_limit()))

    def _model_limit(self) -> int | None:
        """The model's own text-token limit, if it has one (the spec may set a lower one)."""
        return None


# --------------------------------------------------------------------------- Long-CLIP
class HFClipEvaluator(_HFModel, EmbeddingScoring):
    """A transformers ``CLIPModel`` (Long-CLIP: 248 text positions) scored by CLIPScore."""

    def __init__(self, spec: EvaluatorSpec, model: object, processor: object, device: str, batch: int):
        super().__init__(spec, model, processor, device, batch)
        self.text_cache = EmbeddingCache(spec.identity_hash, os.environ.get(CACHE_ENV) or None)

    def _model_limit(self) -> int | None:
        return getattr(self.model.config.text_config, "max_position_embeddings", None)

    def encode_images(self, batch: list[np.ndarray]) -> np.ndarray:
        import torch

        pixels = _pixels(self.processor, batch, self.device, self.dtype)
        emb = _features(self.model.get_image_features(pixel_values=pixels))
        return torch.nn.functional.normalize(emb.float(), dim=-1).cpu().numpy()

    def encode_texts(self, batch: list[str]) -> np.ndarray:
        import torch

        enc = self.texts.encode(batch, self.device)
        emb = _features(self.model.get_text_features(**enc))
        return torch.nn.functional.normalize(emb.float(), dim=-1).cpu().numpy()

    def transform(self, cos: np.ndarray) -> np.ndarray:
        return clipscore(cos)

    def truncated(self, text: str) -> bool:
        return self.texts.truncated(text)

    def close(self) -> None:
        self.model = None


def build_clip(spec: EvaluatorSpec, *, device: str = "auto", batch_size: int = 32):
    from transformers import CLIPModel

    device = resolve_device(device)
    model, processor = load_pretrained(spec, CLIPModel, device)
    return HFClipEvaluator(spec, model, processor, device, batch_size)


# --------------------------------------------------------------------------- pairwise base
class _PairwiseEvaluator(_HFModel):
    """Batches (image, caption) pairs through ``_score_batch``; a failing batch fails its pairs."""

    def prompt(self, caption: str) -> str:
        """The text sent to the model: the spec's instruction with ``{text}`` filled in."""
        return self.spec.instruction.replace("{text}", caption) if self.spec.instruction else caption

    def score(self, images: Sequence[np.ndarray], captions: Sequence[str]) -> list[ScoreResult]:
        import torch

        check_pairs(self.spec, images, captions)
        for i, image in enumerate(images):
            check_image(self.spec, image, i)
        prompts = [self.prompt(c) for c in captions]
        results: list[ScoreResult | None] = [None] * len(prompts)
        # Batch only prompts of equal token length: no padding, so a pair's score never
        # depends on which other pairs share its batch.
        groups: dict[object, list[int]] = {}
        for i, prompt in enumerate(prompts):
            groups.setdefault(self._length_key(prompt), []).append(i)
        for members in groups.values():
            for batch in batched(members, self.batch_size):
                cut = [self.texts.truncated(prompts[i]) for i in batch]
                try:
                    with torch.inference_mode():
                        values = self._score_batch([images[i] for i in batch],
                                                   [prompts[i] for i in batch])  # fmt: skip
                except (RuntimeError, ValueError) as exc:  # e.g. out of memory on one batch
                    reason = f"{exc.__class__.__name__}: {str(exc).splitlines()[0][:200]}"
                    values = [np.nan] * len(batch)
                else:
                    reason = "non-finite model output"
                for i, value, t in zip(batch, values, cut, strict=True):
                    results[i] = (
                        ScoreResult.ok(float(value), truncated=t)
                        if np.isfinite(value)
                        else ScoreResult.failed(reason, truncated=t)
                    )
        return [r for r in results if r is not None]

    def _length_key(self, prompt: str) -> object:
        """Prompts with equal keys tokenize to equal lengths (batched without padding)."""
        return min(len(self.texts.tokenizer(prompt)["input_ids"]), self.texts.max_length)

    def _score_batch(self, images: Sequence[np.ndarray], prompts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def close(self) -> None:
        self.model = None


# --------------------------------------------------------------------------- BLIP-2
class Blip2Evaluator(_PairwiseEvaluator):
    """BLIP-2 retrieval model, ITM head: pairwise only (no ``score_grid`` attribute, so
    callers that probe ``hasattr(ev, "score_grid")`` score it pair by pair)."""

    def _model_limit(self) -> int | None:
        return getattr(self.model.config.qformer_config, "max_position_embeddings", None)

    @property
    def itm(self) -> bool:
        return bool(self.spec.option("use_image_text_matching_head"))

    def _text_inputs(self, prompts: Sequence[str]) -> dict[str, object]:
        import torch

        enc = self.texts.encode(prompts, self.device)
        ids, mask = enc["input_ids"], enc["attention_mask"]
        image_token = getattr(self.model.config, "image_token_index", None)
        if image_token is not None:  # the model strips num_query_tokens leading image tokens
            n = self.model.config.num_query_tokens
            ids = torch.cat([torch.full((ids.shape[0], n), image_token, device=ids.device), ids], 1)
            mask = torch.cat([torch.ones((mask.shape[0], n), dtype=mask.dtype,
                                         device=mask.device), mask], 1)  # fmt: skip
        return {"input_ids": ids, "attention_mask": mask}

    def _score_batch(self, images: Sequence[np.ndarray], prompts: Sequence[str]) -> np.ndarray:
        pixels = _pixels(self.processor, images, self.device, self.dtype)
        out = self.model(pixel_values=pixels, use_image_text_matching_head=self.itm,
                         **self._text_inputs(prompts))  # fmt: skip
        logits = out.logits_per_image.float()
        if self.itm:
            return logits.softmax(dim=-1)[:, 1].cpu().numpy().astype(np.float64)
        return logits.diagonal().cpu().numpy().astype(np.float64)  # (B images, B texts)


class Blip2ItcEvaluator(Blip2Evaluator):
    """BLIP-2 retrieval model, ITC head: pairwise and ``score_grid``."""

    def score_grid(self, images: Iterable[np.ndarray], captions: Sequence[str]) -> np.ndarray:
        """``(n_images, n_captions)``; one forward per image batch against all captions."""
        import torch

        unique_caps, cap_rows = distinct_texts(list(captions))
        prompts = [self.prompt(c) for c in unique_caps]
        rows, unique = distinct_images(self.spec, images)
        chunks = []
        with torch.inference_mode():
            text_inputs = self._text_inputs(prompts) if prompts else None
            for batch in batched(unique, self.batch_size):
                if text_inputs is None:
                    chunks.append(np.zeros((len(batch), 0)))
                    continue
                pixels = _pixels(self.processor, [im for _, im in batch], self.device, self.dtype)
                out = self.model(pixel_values=pixels, use_image_text_matching_head=False,
                                 **text_inputs)  # fmt: skip
                chunks.append(out.logits_per_image.float().cpu().numpy().astype(np.float64))
        if not chunks:
            return np.zeros((0, len(cap_rows)))
        grid = np.concatenate(chunks)
        return grid[np.ix_(rows, cap_rows)]


def build_blip2(spec: EvaluatorSpec, *, device: str = "auto", batch_size: int = 32):
    from transformers import Blip2ForImageTextRetrieval

    device = resolve_device(device)
    model, processor = load_pretrained(spec, Blip2ForImageTextRetrieval, device)
    cls = Blip2Evaluator if spec.option("use_image_text_matching_head") else Blip2ItcEvaluator
    return cls(spec, model, processor, device, batch_size)


# --------------------------------------------------------------------------- BLIP-VQA
def _answer_token(spec: EvaluatorSpec, tokenizer: object, answer: str) -> int:
    ids = tokenizer(answer, add_special_tokens=False)["input_ids"]
    if not ids:
        raise EvaluatorError(f"evaluator {spec.id!r}: answer {answer!r} has no token")
    return int(ids[0])


class BlipVqaEvaluator(_PairwiseEvaluator):
    """BLIP VQA: P(answer) at the first decoder step, softmax over the whole vocabulary."""

    def __init__(self, *args: object):
        super().__init__(*args)
        self.answer_id = _answer_token(self.spec, self.texts.tokenizer, self.spec.option("answer"))

    def _model_limit(self) -> int | None:
        return getattr(self.model.config.text_config, "max_position_embeddings", None)

    def _score_batch(self, images: Sequence[np.ndarray], prompts: Sequence[str]) -> np.ndarray:
        import torch

        pixels = _pixels(self.processor, images, self.device, self.dtype)
        enc = self.texts.encode(prompts, self.device)
        image_embeds = self.model.vision_model(pixel_values=pixels)[0]
        image_mask = torch.ones(image_embeds.shape[:-1], dtype=torch.long, device=self.device)
        question = self.model.text_encoder(
            input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
            encoder_hidden_states=image_embeds, encoder_attention_mask=image_mask,
        )[0]  # fmt: skip
        bos = torch.full((len(prompts), 1), self.model.decoder_start_token_id, device=self.device)
        logits = self.model.text_decoder(
            input_ids=bos, encoder_hidden_states=question,
            encoder_attention_mask=enc["attention_mask"],
        ).logits[:, 0, :]  # fmt: skip
        probs = logits.float().softmax(dim=-1)[:, self.answer_id]
        return probs.cpu().numpy().astype(np.float64)


def build_blip_vqa(spec: EvaluatorSpec, *, device: str = "auto", batch_size: int = 32):
    from transformers import BlipForQuestionAnswering

    device = resolve_device(device)
    model, processor = load_pretrained(spec, BlipForQuestionAnswering, device)
    return BlipVqaEvaluator(spec, model, processor, device, batch_size)


# --------------------------------------------------------------------------- VQAScore
class VqaScoreEvaluator(_PairwiseEvaluator):
    """VQAScore: P("Yes") for the question template on an InstructBLIP/BLIP-2 style VLM."""

    def __init__(self, *args: object):
        super().__init__(*args)
        self.answer_id = _answer_token(self.spec, self.texts.tokenizer, self.spec.option("answer"))
        self.decoder_only = bool(
            getattr(self.model.config, "use_decoder_only_language_model", False)
        )

    def _model_limit(self) -> int | None:
        qformer = getattr(self.model.config, "qformer_config", None)
        return getattr(qformer, "max_position_embeddings", None)

    def _length_key(self, prompt: str) -> object:
        qformer_tok = getattr(self.processor, "qformer_tokenizer", None)
        lm = super()._length_key(prompt)
        if qformer_tok is None:
            return lm
        return lm, min(len(qformer_tok(prompt)["input_ids"]), self.texts.max_length)

    def _score_batch(self, images: Sequence[np.ndarray], prompts: Sequence[str]) -> np.ndarray:
        import torch

        inputs = self.processor(
            images=[to_pil(im) for im in images], text=list(prompts), return_tensors="pt",
            padding=True, truncation=True, max_length=self.texts.max_length,
        ).to(self.device)  # fmt: skip
        inputs["pixel_values"] = inputs["pixel_values"].to(self.dtype)
        if self.decoder_only:
            logits = self.model(**inputs).logits
            last = inputs["attention_mask"].sum(dim=1) - 1  # right padding
            step = logits[torch.arange(len(prompts), device=self.device), last]
        else:
            start = self.model.config.text_config.decoder_start_token_id
            dec = torch.full((len(prompts), 1), int(start or 0), device=self.device)
            step = self.model(**inputs, decoder_input_ids=dec).logits[:, 0, :]
        probs = step.float().softmax(dim=-1)[:, self.answer_id]
        return probs.cpu().numpy().astype(np.float64)


def build_vqascore(spec: EvaluatorSpec, *, device: str = "auto", batch_size: int = 8):
    from transformers import AutoConfig, Blip2ForConditionalGeneration

    device = resolve_device(device)
    found = weights.require(spec)
    source = str(found.path) if found is not None else spec.checkpoint
    try:
        model_type = AutoConfig.from_pretrained(
            source, local_files_only=found is not None or weights.is_offline()
        ).model_type
    except OSError as exc:
        raise weights.missing_weights_error(spec, str(exc).splitlines()[0]) from exc
    if model_type == "instructblip":
        from transformers import InstructBlipForConditionalGeneration as model_cls
    elif model_type == "blip-2":
        model_cls = Blip2ForConditionalGeneration
    else:
        raise EvaluatorError(
            f"evaluator {spec.id!r}: VQAScore supports InstructBLIP and BLIP-2 models, "
            f"not {model_type!r}",
            where=spec.checkpoint,
        )
    model, processor = load_pretrained(spec, model_cls, device)
    return VqaScoreEvaluator(spec, model, processor, device, batch_size)
