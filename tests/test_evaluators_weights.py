"""Offline weight resolution: HF cache layout, override dir, local paths, clear errors."""

from __future__ import annotations

import pytest

from harness.core.errors import EvaluatorError
from harness.evaluators import families, registry, weights


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty Hugging Face hub cache; no override dir; offline."""
    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.delenv(weights.WEIGHTS_DIR_ENV, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def fake_snapshot(cache, repo, files, rev="abc123", ref=True):
    root = cache / ("models--" + repo.replace("/", "--"))
    snap = root / "snapshots" / rev
    snap.mkdir(parents=True)
    for name in files:
        (snap / name).write_bytes(b"x")
    if ref:
        (root / "refs").mkdir()
        (root / "refs" / "main").write_text(rev)
    return snap


def test_hf_cache_dir_resolution(monkeypatch, tmp_path):
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert weights.hf_hub_cache() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "direct"))
    assert weights.hf_hub_cache() == tmp_path / "direct"


def test_missing_weights_offline_names_evaluator_and_remedies(hub):
    spec = registry.get("clip-vit-l14")
    assert not spec.weights_available()
    with pytest.raises(EvaluatorError) as info:
        weights.require(spec)
    text = str(info.value)
    assert "clip-vit-l14" in text
    assert "huggingface-cli download timm/vit_large_patch14_clip_224.openai" in text
    assert weights.WEIGHTS_DIR_ENV in text


def test_build_fails_offline_before_importing_the_model(hub):
    spec = registry.get("blip-vqa")
    with pytest.raises(EvaluatorError, match="blip-vqa"):
        spec.build(device="cpu")


def test_online_absent_returns_none_so_library_may_download(hub, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.delenv("T3D_AUDIT_OFFLINE", raising=False)
    assert weights.require(registry.get("clip-vit-b32")) is None


def test_hub_snapshot_found_with_alternative_file(hub):
    snap = fake_snapshot(hub, "timm/vit_base_patch32_clip_224.openai", ["open_clip_model.safetensors"])
    spec = registry.get("clip-vit-b32")
    assert spec.weights_available()
    assert weights.require(spec) == weights.Resolved("hub", snap)


def test_incomplete_snapshot_is_not_available(hub):
    fake_snapshot(hub, "Salesforce/blip-vqa-base", ["config.json"])  # no weights file
    assert not registry.get("blip-vqa").weights_available()


def test_snapshot_without_ref_is_accepted(hub):
    files = ["config.json", "model.safetensors", "preprocessor_config.json", "tokenizer.json"]
    fake_snapshot(hub, "Salesforce/blip-vqa-base", files, ref=False)
    assert registry.get("blip-vqa").weights_available()


def test_hf_snapshot_needs_processor_and_tokenizer_files(hub):
    fake_snapshot(hub, "Salesforce/blip-vqa-base", ["config.json", "model.safetensors"])
    assert not registry.get("blip-vqa").weights_available()


def test_adapters_without_weights_are_always_available():
    spec = registry.get("clip-vit-b32").with_changes(id="scene-checker", adapter="judge")
    families.register_family(families.Family("t3d-test-noweights", "harness.evaluators.judge:build"))
    try:
        plain = spec.with_changes(adapter="t3d-test-noweights")
        assert plain.weights_available()
    finally:
        families.unregister_family("t3d-test-noweights")


def test_separate_tokenizer_must_be_cached(hub):
    fake_snapshot(hub, "timm/ViT-L-16-SigLIP-256", ["open_clip_model.safetensors"])
    spec = registry.get("siglip-vit-l16")
    assert not spec.weights_available()
    with pytest.raises(EvaluatorError, match="tokenizer"):
        weights.require(spec)
    fake_snapshot(hub, "timm/ViT-B-16-SigLIP", ["tokenizer.json"])
    assert spec.weights_available()


def test_override_dir_file_and_directory(hub, tmp_path, monkeypatch):
    override = tmp_path / "weights"
    override.mkdir()
    monkeypatch.setenv(weights.WEIGHTS_DIR_ENV, str(override))
    (override / "clip-vit-b16.safetensors").write_bytes(b"x")
    (override / "blip-vqa").mkdir()
    assert weights.resolve(registry.get("clip-vit-b16")).kind == "override"
    assert weights.resolve(registry.get("blip-vqa")).path == override / "blip-vqa"
    assert weights.resolve(registry.get("clip-vit-b32")) is None


def test_torchscript_url_cache_is_not_used(hub, monkeypatch):
    # ~/.cache/clip/*.pt are TorchScript archives: torch.load(weights_only=True) refuses them
    url_cache = hub.parent / "home" / ".cache" / "clip"
    url_cache.mkdir(parents=True)
    (url_cache / "ViT-B-16.pt").write_bytes(b"x")
    monkeypatch.setenv("HOME", str(hub.parent / "home"))
    assert weights.resolve(registry.get("clip-vit-b16")) is None


def test_local_checkpoint_path(tmp_path, hub):
    ckpt = tmp_path / "model"
    ckpt.mkdir()
    spec = registry.get("blip-vqa").with_changes(checkpoint=str(ckpt))
    assert weights.resolve(spec) == weights.Resolved("path", ckpt)
    assert weights.local_path("openai") is None  # a tag is never a path


def test_judge_availability_is_the_key_variable(monkeypatch):
    spec = registry.get("gpt4o-judge")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert not spec.weights_available()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert spec.weights_available()
