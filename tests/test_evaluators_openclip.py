"""open_clip adapter and CLIP-IQA on a tiny random-init model saved and loaded from disk.

The model is an open_clip config registered from a JSON file, saved as safetensors to a temp
dir and loaded through the same ``pretrained=<path>`` code path the real checkpoints use.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.core.errors import EvaluatorError
from harness.evaluators import builders, registry, weights
from tests._extras import needs
from tests._net_helpers import loopback_only  # noqa: F401  (autouse: loopback only)

# looked up, not imported: a module-level importorskip imported open_clip (and torch) at
# collection in every xdist worker, seconds each even where these tests are deselected
pytestmark = [pytest.mark.slow, needs("torch"), needs("open_clip")]  # imports torch and open_clip (seconds), then runs tiny models

TINY_CFG = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 8, "head_width": 16},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(config path, checkpoint path, the saved torch model)."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    root = tmp_path_factory.mktemp("openclip")
    config = root / "t3d-tiny-clip.json"
    config.write_text(json.dumps(TINY_CFG))
    open_clip.add_model_config(config)
    torch.manual_seed(0)
    model = open_clip.create_model("t3d-tiny-clip").eval()
    ckpt = root / "tiny.safetensors"
    save_file(model.state_dict(), str(ckpt))
    return config, ckpt, model


@pytest.fixture(scope="module")
def evaluator(tiny):
    config, ckpt, _ = tiny
    spec = builders.openclip_local_spec("tiny-clip", config, ckpt)
    return spec.build(device="cpu", batch_size=4)


def images(n, seed=0, size=(40, 48)):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (*size, 3), dtype=np.uint8) for _ in range(n)]


CAPTIONS = ["a bedroom", "A top-down view of a kitchen with a table", "a room " * 12]


def reference_cos(model, preprocess, image, caption):
    """Cosine computed directly with the saved open_clip model (no harness code)."""
    import open_clip
    import torch
    from PIL import Image

    tok = open_clip.get_tokenizer("t3d-tiny-clip")
    with torch.no_grad():
        im = model.encode_image(preprocess(Image.fromarray(image)).unsqueeze(0), normalize=True)
        tx = model.encode_text(tok([caption], context_length=16), normalize=True)
    return float((im @ tx.T).item())


def test_loaded_weights_give_clipscore_of_the_saved_model(tiny, evaluator):
    _, _, model = tiny
    ims = images(3)
    results = evaluator.score(ims, CAPTIONS)
    for im, cap, res in zip(ims, CAPTIONS, results, strict=True):
        cos = reference_cos(model, evaluator.preprocess, im, cap)
        assert res.status == "ok"
        assert res.score == pytest.approx(2.5 * max(cos, 0.0), abs=1e-5)


def test_grid_equals_pairwise_and_dedupes(evaluator, monkeypatch):
    import torch

    ims = images(4, seed=1)
    ims_with_dupes = [*ims, ims[0], ims[2]]
    captions = [*CAPTIONS, CAPTIONS[0]]
    calls = {"image_rows": 0, "text_rows": 0}
    enc_i, enc_t = evaluator.model.encode_image, evaluator.model.encode_text

    # distinct rows per model call: calls are padded to the fixed batch shape by repeating the
    # last row (harness.evaluators._torch.fixed_shape), which encodes nothing new
    def count_image(x, **kw):
        calls["image_rows"] += torch.unique(x, dim=0).shape[0]
        return enc_i(x, **kw)

    def count_text(x, **kw):
        calls["text_rows"] += torch.unique(x, dim=0).shape[0]
        return enc_t(x, **kw)

    monkeypatch.setattr(evaluator.model, "encode_image", count_image)
    monkeypatch.setattr(evaluator.model, "encode_text", count_text)
    evaluator.text_cache._memory.clear()
    grid = evaluator.score_grid(ims_with_dupes, captions)
    assert grid.shape == (6, 4)
    assert calls == {"image_rows": 4, "text_rows": 3}  # distinct inputs only
    np.testing.assert_allclose(grid[4], grid[0])
    np.testing.assert_allclose(grid[:, 3], grid[:, 0])
    for i, im in enumerate(ims):
        pair = evaluator.score([im] * len(captions), captions)
        np.testing.assert_allclose([r.score for r in pair], grid[i], atol=1e-5)
    calls.update(image_rows=0, text_rows=0)
    evaluator.score_grid(ims[:1], captions)
    assert calls == {"image_rows": 1, "text_rows": 0}  # text embeddings come from the cache
    assert grid.min() >= 0.0 and grid.max() <= 2.5


def test_batch_size_does_not_change_scores(tiny):
    config, ckpt, _ = tiny
    spec = builders.openclip_local_spec("tiny-clip", config, ckpt)
    ims = images(5, seed=2)
    a = spec.build(device="cpu", batch_size=1).score_grid(ims, CAPTIONS)
    b = spec.build(device="cpu", batch_size=8).score_grid(ims, CAPTIONS)
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_truncation_is_recorded(evaluator):
    results = evaluator.score(images(2), ["a bedroom", "a very long caption " * 10])
    assert [r.truncated for r in results] == [False, True]


def test_sigmoid_scale_uses_model_temperature(tiny):
    config, ckpt, model = tiny
    spec = builders.openclip_local_spec(
        "tiny-sig", config, ckpt, score_scale=builders.SIGLIP_SCALE
    )
    ev = spec.build(device="cpu")
    im = images(1)[0]
    cos = reference_cos(model, ev.preprocess, im, "a bedroom")
    expected = 1 / (1 + np.exp(-(float(model.logit_scale.detach().exp()) * cos)))
    assert ev.score([im], ["a bedroom"])[0].score == pytest.approx(expected, rel=1e-4)


def test_weights_dir_override_feeds_the_same_loader(tiny, tmp_path, monkeypatch):
    config, ckpt, _ = tiny
    base = builders.openclip_local_spec("tiny-override", config, ckpt)
    spec = base.with_changes(checkpoint="some_tag", checkpoint_sha256="")
    override = tmp_path / "w"
    override.mkdir()
    (override / "tiny-override.safetensors").write_bytes(ckpt.read_bytes())
    monkeypatch.setenv(weights.WEIGHTS_DIR_ENV, str(override))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ev = spec.build(device="cpu")
    ref = base.build(device="cpu")
    ims = images(2)
    np.testing.assert_allclose(ev.score_grid(ims, CAPTIONS), ref.score_grid(ims, CAPTIONS))


def test_missing_local_checkpoint_offline_is_a_clear_error(tiny, tmp_path, monkeypatch):
    config, ckpt, _ = tiny
    spec = builders.openclip_local_spec("tiny-gone", config, ckpt).with_changes(
        checkpoint=str(tmp_path / "gone.safetensors")
    )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(weights.WEIGHTS_DIR_ENV, raising=False)
    with pytest.raises(EvaluatorError, match="tiny-gone"):
        spec.build(device="cpu")


def test_corrupt_checkpoint_is_a_load_error(tiny, tmp_path):
    config, _, _ = tiny
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a safetensors file")
    spec = builders.openclip_local_spec("tiny-bad", config, bad)
    with pytest.raises(EvaluatorError, match="could not be loaded"):
        spec.build(device="cpu")


def test_bad_images_are_rejected(evaluator):
    with pytest.raises(EvaluatorError, match=r"shape \(4, 4\)"):
        evaluator.score([np.zeros((4, 4), np.uint8)], ["x"])
    with pytest.raises(EvaluatorError, match="float32"):
        evaluator.score([np.zeros((4, 4, 3), np.float32)], ["x"])


def test_clip_iqa_is_prompt_free_softmax_over_antonyms(tiny):
    config, ckpt, model = tiny
    local = builders.openclip_local_spec("tiny-backbone", config, ckpt)
    spec = registry.get("clip-iqa").with_changes(
        model_name=local.model_name, checkpoint=local.checkpoint, hub_repo="", hub_files=(),
        options=tuple(sorted({**dict(registry.get("clip-iqa").options),
                              "model_config": local.option("model_config")}.items())),
    )  # fmt: skip
    ev = spec.build(device="cpu")
    ims = images(3, seed=4)
    a = ev.score(ims, ["", "", ""])
    b = ev.score(ims, ["a bedroom", "x", "y"])
    assert [r.score for r in a] == [r.score for r in b]
    good = reference_cos(model, ev.backbone.preprocess, ims[0], "Good photo.")
    bad = reference_cos(model, ev.backbone.preprocess, ims[0], "Bad photo.")
    expected = 1 / (1 + np.exp(-100 * (good - bad)))
    assert a[0].score == pytest.approx(expected, abs=1e-4)
    grid = ev.score_grid(ims, ["", "z"])
    np.testing.assert_allclose(grid[:, 0], grid[:, 1])


def test_text_embeddings_shared_on_disk_between_evaluators(tiny, tmp_path, monkeypatch):
    config, ckpt, _ = tiny
    monkeypatch.setenv("T3D_AUDIT_CACHE_DIR", str(tmp_path))
    spec = builders.openclip_local_spec("tiny-shared", config, ckpt)
    first = spec.build(device="cpu")
    grid = first.score_grid(images(2), CAPTIONS)
    second = spec.build(device="cpu")  # e.g. another xdist worker scoring another generator
    rows = {"n": 0}
    encode = second.model.encode_text

    def counting(x, **kw):
        rows["n"] += x.shape[0]
        return encode(x, **kw)

    monkeypatch.setattr(second.model, "encode_text", counting)
    np.testing.assert_allclose(second.score_grid(images(2), CAPTIONS), grid, atol=1e-6)
    assert rows["n"] == 0
    assert len(list((tmp_path / "text_emb").rglob("*.npy"))) == len(CAPTIONS)


def test_same_config_name_in_two_places_builds_the_right_architecture(tiny, tmp_path):
    import open_clip
    import torch
    from safetensors.torch import save_file

    config, ckpt, _ = tiny
    other_cfg = json.loads(json.dumps(TINY_CFG))
    other_cfg["embed_dim"] = 8
    other = tmp_path / config.name  # same stem, different architecture
    other.write_text(json.dumps(other_cfg))
    open_clip.add_model_config(other)
    torch.manual_seed(1)
    other_ckpt = tmp_path / "other.safetensors"
    save_file(open_clip.create_model(config.stem).state_dict(), str(other_ckpt))
    small = builders.openclip_local_spec("tiny-8", other, other_ckpt).build(device="cpu")
    big = builders.openclip_local_spec("tiny-16", config, ckpt).build(device="cpu")
    assert small.text_embeddings(["a room"])[0].shape == (1, 8)
    assert big.text_embeddings(["a room"])[0].shape == (1, 16)
