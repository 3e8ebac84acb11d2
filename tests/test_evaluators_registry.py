"""Registry: the Table 12 rows, identity hashing, selection by id/glob, user registration."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.errors import EvaluatorError
from harness.evaluators import builders, catalogue, registry
from harness.evaluators.base import IDENTITY_FIELDS, EvaluatorSpec, ScoreResult

TABLE_12 = {
    # id: (family, open_clip model name or HF id / API snapshot, pretrained tag or repo)
    "clip-vit-b32": ("CLIP (OpenAI)", "ViT-B-32-quickgelu", "openai"),
    "clip-vit-b16": ("CLIP (OpenAI)", "ViT-B-16-quickgelu", "openai"),
    "clip-vit-l14": ("CLIP (OpenAI)", "ViT-L-14-quickgelu", "openai"),
    "clip-vit-l14-336": ("CLIP (OpenAI)", "ViT-L-14-336-quickgelu", "openai"),
    "openclip-vit-l14": ("CLIP (open data)", "ViT-L-14", "laion2b_s32b_b82k"),
    "openclip-vit-h14": ("CLIP (open data)", "ViT-H-14", "laion2b_s32b_b79k"),
    "openclip-vit-bigg14": ("CLIP (open data)", "ViT-bigG-14", "laion2b_s39b_b160k"),
    "metaclip-vit-l14": ("CLIP (open data)", "ViT-L-14-quickgelu", "metaclip_fullcc"),
    "dfn-vit-l14": ("CLIP (open data)", "ViT-L-14-quickgelu", "dfn2b"),
    "eva-clip-vit-l14": ("CLIP (open data)", "EVA02-L-14", "merged2b_s4b_b131k"),
    "clipa-vit-l14": ("CLIP (open data)", "ViT-L-14-CLIPA", "datacomp1b"),
    "longclip-vit-l14": ("CLIP (long-text)", None, "zer0int/LongCLIP-L-Diffusers"),
    "siglip-vit-l16": ("Sigmoid objective", "ViT-L-16-SigLIP-256", "webli"),
    "siglip2-vit-l16": ("Sigmoid objective", "ViT-L-16-SigLIP2-256", "webli"),
    "blip2-itm": ("BLIP-2", None, "Salesforce/blip2-itm-vit-g"),
    "blip2-itc": ("BLIP-2", None, "Salesforce/blip2-itm-vit-g"),
    "blip-vqa": ("VQA-based", None, "Salesforce/blip-vqa-base"),
    "vqascore": ("VQA-based", None, "Salesforce/instructblip-flan-t5-xxl"),
    "gpt4o-judge": ("MLLM judge", "GPT-4o", "gpt-4o-2024-11-20"),
    "clip-iqa": ("Quality (scoped)", "RN50-quickgelu", "openai"),
}


def test_every_table12_row_is_registered_with_exact_identity():
    specs = {s.id: s for s in catalogue.builtin_specs()}
    assert list(specs) == list(TABLE_12)
    for evaluator_id, (family, model_name, checkpoint) in TABLE_12.items():
        spec = specs[evaluator_id]
        assert spec.family == family
        assert spec.checkpoint == checkpoint
        if model_name is not None:
            assert spec.model_name == model_name
        identity = spec.identity()
        assert set(identity) == set(IDENTITY_FIELDS)
        for key in ("preprocessing", "score_scale"):
            assert identity[key], f"{evaluator_id}: empty {key}"


def test_prompt_free_control_and_text_windows():
    specs = {s.id: s for s in catalogue.builtin_specs()}
    assert [s.id for s in specs.values() if not s.needs_text] == ["clip-iqa"]
    assert specs["clipa-vit-l14"].max_text_tokens == 32
    assert specs["longclip-vit-l14"].max_text_tokens == 248
    assert specs["clip-vit-b32"].max_text_tokens == 77
    assert "2.5 * max(cos" in specs["clip-vit-l14"].score_scale
    assert specs["siglip-vit-l16"].option("scale") == "sigmoid"
    assert (
        specs["vqascore"].instruction
    ) == 'Does this figure show "{text}"? Please answer yes or no.'
    assert specs["gpt4o-judge"].option("temperature") == 0.0


def test_identity_hash_is_stable_and_sensitive():
    spec = registry.get("clip-vit-b32")
    assert spec.identity_hash == registry.get("clip-vit-b32").identity_hash
    assert len({s.identity_hash for s in catalogue.builtin_specs()}) == 20
    changed = spec.with_changes(score_scale="raw cosine")
    assert changed.identity_hash != spec.identity_hash
    assert hash(spec) == hash(registry.get("clip-vit-b32"))  # frozen, hashable


def test_identity_is_json_ready():
    for spec in catalogue.builtin_specs():
        assert json.loads(json.dumps(spec.identity())) == spec.identity()


def test_select_by_id_and_glob_keeps_registry_order():
    assert [s.id for s in registry.select(["clip-vit-l14"])] == ["clip-vit-l14"]
    assert [s.id for s in registry.select(["blip*", "clip-vit-b32"])] == [
        "clip-vit-b32",
        "blip2-itm",
        "blip2-itc",
        "blip-vqa",
    ]
    assert len(registry.select(["*"])) >= 20


def test_unknown_selection_lists_close_matches():
    with pytest.raises(EvaluatorError) as info:
        registry.select(["clip-vit-b33"])
    assert "clip-vit-b32" in str(info.value)
    with pytest.raises(EvaluatorError, match="no evaluator matches"):
        registry.select(["nothing-like-it-*"])


def test_register_and_replace():
    spec = registry.get("clip-vit-b32").with_changes(id="my-clip")
    try:
        registry.register(spec)
        assert registry.get("my-clip") is spec
        registry.register(spec)  # same identity again is fine
        with pytest.raises(EvaluatorError, match="already registered"):
            registry.register(spec.with_changes(checkpoint="laion2b_s34b_b79k"))
        registry.register(spec.with_changes(checkpoint="laion2b_s34b_b79k"), replace=True)
        assert registry.get("my-clip").checkpoint == "laion2b_s34b_b79k"
    finally:
        registry.unregister("my-clip")
    with pytest.raises(EvaluatorError):
        registry.get("my-clip")


def test_register_openclip_local_records_checkpoint_hash(tmp_path):
    config = tmp_path / "tiny-cfg.json"
    config.write_text(
        json.dumps(
            {
                "embed_dim": 8,
                "vision_cfg": {"image_size": 32, "layers": 1, "width": 16, "patch_size": 8},
                "text_cfg": {"context_length": 12, "vocab_size": 49408, "width": 16,
                             "heads": 2, "layers": 1},
            }
        )
    )  # fmt: skip
    ckpt = tmp_path / "tiny.safetensors"
    ckpt.write_bytes(b"weights v1")
    spec = builders.openclip_local_spec("tiny-local", config, ckpt)
    assert spec.model_name == "tiny-cfg"
    assert spec.max_text_tokens == 12
    assert "32x32" in spec.preprocessing
    assert spec.weights_available()
    ckpt.write_bytes(b"weights v2")
    assert builders.openclip_local_spec("tiny-local", config, ckpt).identity_hash != (
        spec.identity_hash
    )
    with pytest.raises(EvaluatorError, match="not found"):
        builders.openclip_local_spec("x", config, tmp_path / "missing.pt")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(EvaluatorError, match="not an open_clip config"):
        builders.openclip_local_spec("x", bad, ckpt)


def test_spec_rejects_bad_ids_and_adapters():
    with pytest.raises(EvaluatorError):
        EvaluatorSpec(id="has space", family="f", adapter="open_clip", model_name="m",
                      checkpoint="c", preprocessing="p", score_scale="s")  # fmt: skip
    with pytest.raises(EvaluatorError, match="unknown adapter"):
        EvaluatorSpec(id="x", family="f", adapter="nope", model_name="m", checkpoint="c",
                      preprocessing="p", score_scale="s")  # fmt: skip


def test_score_result_never_stores_failure_as_number():
    assert math.isnan(ScoreResult.failed("boom").score)
    with pytest.raises(ValueError):
        ScoreResult(0.0, "failed", "boom")
    with pytest.raises(ValueError):
        ScoreResult(math.nan, "ok")
    assert ScoreResult.ok(0.0).score == 0.0


@given(st.lists(st.sampled_from([s.id for s in catalogue.builtin_specs()]), min_size=1))
def _select_is_idempotent_and_ordered(ids):
    chosen = [s.id for s in registry.select(ids)]
    assert set(chosen) == set(ids)
    order = [s.id for s in registry.all_specs()]
    assert chosen == sorted(chosen, key=order.index)
    assert [s.id for s in registry.select(chosen)] == chosen


def test_select_is_idempotent_and_ordered():
    """The property, over a warm registry: its first use reads the entry points of every
    installed distribution (~0.2 s, more on a busy machine), a one-off cost that Hypothesis's
    deadline would otherwise charge to whichever example ran first (then flag as flaky)."""
    registry.all_specs()
    _select_is_idempotent_and_ordered()


def test_select_property_survives_a_cold_slow_registry(monkeypatch):
    """Regression: a registry that is cold (and slow to load) when the property starts does
    not exceed the deadline, because the test warms it outside the property."""
    load = registry._load_entry_points

    def slow_load():
        time.sleep(0.5)  # over Hypothesis's 200 ms default deadline
        load()

    monkeypatch.setattr(registry, "_load_entry_points", slow_load)
    with registry.SPECS.scoped():
        registry.SPECS.reset()  # cold: the next read loads again, slowly
        test_select_is_idempotent_and_ordered()


def test_listing_imports_no_torch():
    code = (
        "import sys\n"
        "from harness.evaluators import registry\n"
        "[s.weights_available() for s in registry.all_specs()]\n"
        "print(any(m in sys.modules for m in ('torch', 'open_clip', 'transformers', 'httpx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_entry_point_group_registers_specs(tmp_path, monkeypatch):
    from importlib import metadata

    (tmp_path / "t3d_ep_plugin.py").write_text(
        "from harness.evaluators import registry\n"
        "def specs():\n"
        "    base = registry.get('clip-vit-b16')\n"
        "    return [base.with_changes(id='ep-clip-a'), base.with_changes(id='ep-clip-b')]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = metadata.EntryPoint("demo", "t3d_ep_plugin:specs", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [ep])
    with registry.SPECS.scoped():
        registry.SPECS.reset()
        assert [s.id for s in registry.select(["ep-clip-*"])] == ["ep-clip-a", "ep-clip-b"]
        assert registry.source_of("ep-clip-a").startswith("entry point 'demo'")
    assert "ep-clip-a" not in registry.SPECS


def test_broken_entry_point_is_a_typed_error(monkeypatch):
    from importlib import metadata

    ep = metadata.EntryPoint("bad", "no_such_module_xyz:specs", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [ep])
    with registry.SPECS.scoped(), pytest.raises(EvaluatorError, match="entry point 'bad'"):
        registry.SPECS.reset()
        registry.all_specs()
