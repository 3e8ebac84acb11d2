"""transformers adapters on tiny random-init models written with ``save_pretrained``.

Each model and its processor (with a WordPiece tokenizer built from a vocabulary written
here: nothing is downloaded) is saved to a temp dir and loaded back through the adapters'
``from_pretrained(<dir>, local_files_only=True)`` path with ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.core.errors import EvaluatorError
from harness.evaluators import registry
from tests._extras import needs
from tests._net_helpers import loopback_only  # noqa: F401  (autouse: loopback only)

# looked up, not imported: a module-level importorskip imported transformers (and torch) at
# collection in every xdist worker, seconds each even where these tests are deselected
pytestmark = [pytest.mark.slow, needs("torch"), needs("transformers")]  # imports torch and transformers, then runs tiny models

WORDS = ["yes", "no", "Yes", "a", "an", "the", "room", "bed", "lamp", "table", "chair", "kitchen", "with", "of", "view", "top", "down", "scene", "bedroom", "photo", "does", "this", "figure", "show", "please", "answer", "or"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[DEC]", *WORDS,
         *"abcdefghijklmnopqrstuvwxyz", "?", ",", ".", '"', ":", "-"]  # fmt: skip
VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
              image_size=32, patch_size=8)  # fmt: skip
CAPTIONS = ["a room", "a bedroom with a bed and a lamp " * 8, "a kitchen"]


def wordpiece(lowercase=True):
    from transformers import BertTokenizerFast

    return BertTokenizerFast(
        vocab={w: i for i, w in enumerate(VOCAB)}, do_lower_case=lowercase, bos_token="[DEC]"
    )


def image_processor():
    from transformers import BlipImageProcessor

    return BlipImageProcessor(size={"height": 32, "width": 32})


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """{name: directory} of tiny saved models."""
    import torch
    from transformers import (
        Blip2Config,
        Blip2ForImageTextRetrieval,
        Blip2Processor,
        BlipConfig,
        BlipForQuestionAnswering,
        BlipProcessor,
        CLIPConfig,
        CLIPImageProcessor,
        CLIPModel,
        CLIPProcessor,
        InstructBlipConfig,
        InstructBlipForConditionalGeneration,
        InstructBlipProcessor,
        T5Config,
    )

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("hf")
    tok = wordpiece()
    n = len(VOCAB)
    dirs = {}

    text = dict(vocab_size=n, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                num_attention_heads=2, max_position_embeddings=24, encoder_hidden_size=32,
                bos_token_id=VOCAB.index("[DEC]"), pad_token_id=0, sep_token_id=3)  # fmt: skip
    blip = BlipForQuestionAnswering(BlipConfig(text_config=text, vision_config=VISION,
                                               projection_dim=16))  # fmt: skip
    dirs["blip-vqa"] = _save(root / "blip-vqa", blip,
                             BlipProcessor(image_processor=image_processor(), tokenizer=tok))

    qformer = dict(vocab_size=n, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                   num_attention_heads=2, max_position_embeddings=24, encoder_hidden_size=32,
                   cross_attention_frequency=1, pad_token_id=0, use_qformer_text_input=True)
    blip2 = Blip2ForImageTextRetrieval(Blip2Config(vision_config=VISION, qformer_config=qformer,
                                                   num_query_tokens=4, image_text_hidden_size=16))
    dirs["blip2"] = _save(root / "blip2", blip2,
                          Blip2Processor(image_processor=image_processor(), tokenizer=tok,
                                         num_query_tokens=None))  # fmt: skip

    clip_cfg = CLIPConfig(
        text_config=dict(vocab_size=n, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, max_position_embeddings=24, bos_token_id=2,
                         eos_token_id=3, pad_token_id=0),
        vision_config=VISION, projection_dim=16,
    )  # fmt: skip
    clip_proc = CLIPProcessor(
        image_processor=CLIPImageProcessor(size={"shortest_edge": 32},
                                           crop_size={"height": 32, "width": 32}),
        tokenizer=tok,
    )  # fmt: skip
    dirs["clip"] = _save(root / "clip", CLIPModel(clip_cfg), clip_proc)

    lm_tok = wordpiece(lowercase=False)
    iproc = InstructBlipProcessor(image_processor=image_processor(), tokenizer=lm_tok,
                                  qformer_tokenizer=wordpiece(), num_query_tokens=4)  # adds <image>
    t5 = T5Config(vocab_size=len(lm_tok), d_model=32, d_kv=16, d_ff=64, num_layers=1,
                  num_decoder_layers=1, num_heads=2, decoder_start_token_id=0, pad_token_id=0,
                  eos_token_id=3).to_dict()  # fmt: skip
    icfg = InstructBlipConfig(vision_config=VISION, qformer_config={**qformer,
                              "max_position_embeddings": 64}, text_config=t5, num_query_tokens=4,
                              image_token_index=lm_tok.convert_tokens_to_ids("<image>"))  # fmt: skip
    dirs["instructblip"] = _save(root / "iblip", InstructBlipForConditionalGeneration(icfg), iproc)
    return dirs


def _save(path, model, processor):
    model.eval().save_pretrained(path)
    processor.save_pretrained(path)
    return path


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))


def build(evaluator_id, path, batch_size=2):
    spec = registry.get(evaluator_id).with_changes(checkpoint=str(path), hub_repo="", hub_files=())
    return spec.build(device="cpu", batch_size=batch_size)


def images(n, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (40, 48, 3), dtype=np.uint8) for _ in range(n)]


def test_long_clip_grid_matches_pairs_and_reference(saved):
    import torch
    from PIL import Image
    from transformers import CLIPModel, CLIPProcessor

    ev = build("longclip-vit-l14", saved["clip"])
    ims = images(3)
    grid = ev.score_grid([*ims, ims[1]], CAPTIONS)
    assert grid.shape == (4, 3)
    np.testing.assert_allclose(grid[3], grid[1])
    pairs = ev.score(ims, CAPTIONS)
    np.testing.assert_allclose([r.score for r in pairs], np.diag(grid[:3]), atol=1e-5)
    assert [r.truncated for r in pairs] == [False, True, False]
    model = CLIPModel.from_pretrained(saved["clip"]).eval()
    proc = CLIPProcessor.from_pretrained(saved["clip"])
    with torch.no_grad():
        out = model(**proc(text=["a room"], images=[Image.fromarray(ims[0])], return_tensors="pt"))
        cos = torch.nn.functional.cosine_similarity(out.image_embeds, out.text_embeds).item()
    assert pairs[0].score == pytest.approx(2.5 * max(cos, 0.0), abs=1e-5)


def test_blip2_itm_probabilities_and_batch_invariance(saved):
    ims = images(3, seed=1)
    a = build("blip2-itm", saved["blip2"], batch_size=1).score(ims, CAPTIONS)
    b = build("blip2-itm", saved["blip2"], batch_size=3).score(ims, CAPTIONS)
    assert all(0.0 <= r.score <= 1.0 and r.status == "ok" for r in a)
    np.testing.assert_allclose([r.score for r in a], [r.score for r in b], atol=1e-5)
    assert not hasattr(build("blip2-itm", saved["blip2"]), "score_grid")  # pairwise only


def test_blip2_itc_grid_matches_pairs(saved):
    ev = build("blip2-itc", saved["blip2"])
    ims = images(3, seed=2)
    grid = ev.score_grid([*ims, ims[0]], [*CAPTIONS, CAPTIONS[2]])
    assert grid.shape == (4, 4)
    np.testing.assert_allclose(grid[3], grid[0])
    np.testing.assert_allclose(grid[:, 3], grid[:, 2])
    pairs = ev.score(ims, CAPTIONS)
    np.testing.assert_allclose([r.score for r in pairs], np.diag(grid[:3, :3]), atol=1e-5)
    assert np.all(np.abs(grid) <= 1.0 + 1e-6)


def test_blip_vqa_yes_probability(saved):
    import torch

    ev = build("blip-vqa", saved["blip-vqa"])
    ims = images(2, seed=3)
    res = ev.score(ims, CAPTIONS[:2])
    assert [r.truncated for r in res] == [False, True]
    yes = VOCAB.index("yes")
    assert ev.answer_id == yes
    # reference: the decoder's first-step distribution, computed here without the adapter
    model = ev.model
    pixels = ev.processor.image_processor(images=[ims[0]], return_tensors="pt")["pixel_values"]
    enc = ev.processor.tokenizer(["a room?"], return_tensors="pt")
    with torch.no_grad():
        img = model.vision_model(pixel_values=pixels)[0]
        q = model.text_encoder(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                               encoder_hidden_states=img)[0]  # fmt: skip
        logits = model.text_decoder(input_ids=torch.tensor([[VOCAB.index("[DEC]")]]),
                                    encoder_hidden_states=q).logits[0, 0]  # fmt: skip
    assert res[0].score == pytest.approx(logits.softmax(-1)[yes].item(), rel=1e-5)
    # batch composition never changes a pair's score (equal-length batches, no padding)
    mixed = ev.score([ims[0], ims[1], ims[0]], ["a room", CAPTIONS[1], "a bed"])
    assert mixed[0].score == pytest.approx(res[0].score, rel=1e-5)


def test_vqascore_on_instructblip(saved):
    ev = build("vqascore", saved["instructblip"])
    ims = images(3, seed=4)
    res = ev.score(ims, CAPTIONS)
    assert all(r.status == "ok" and 0.0 < r.score < 1.0 for r in res)
    assert [r.truncated for r in res] == [False, True, False]
    single = ev.score(ims[:1], CAPTIONS[:1])[0]
    assert single.score == pytest.approx(res[0].score, rel=1e-4)
    assert ev.answer_id == wordpiece(lowercase=False).convert_tokens_to_ids("Yes")


def test_missing_model_dir_offline_is_a_clear_error(tmp_path):
    spec = registry.get("blip-vqa")
    with pytest.raises(EvaluatorError) as info:
        spec.build(device="cpu")
    assert "blip-vqa" in str(info.value) and "huggingface-cli download" in str(info.value)
    bad = tmp_path / "not-a-model"
    bad.mkdir()
    with pytest.raises(EvaluatorError, match="could not be loaded"):
        spec.with_changes(checkpoint=str(bad)).build(device="cpu")
