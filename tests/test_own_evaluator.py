"""Your own scoring code as an evaluator: the Scorer interface, its three registration routes,
the open family table, the Python API's score(), caching, batching and failures."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main as cli_main
from harness.core.errors import EvaluatorError
from harness.evaluators import Scorer, families, register, registry
from harness.evaluators.base import EvaluatorSpec
from harness.evaluators.scorer import ScorerEvaluator

ROOT = Path(__file__).resolve().parents[1]


class ColorStat(Scorer):
    """Mean of one colour channel, in [0, 1] (not an existing family)."""

    name = "colorstat-test"
    version = "2"
    score_range = (0.0, 1.0)
    needs_text = False
    options = {"channel": 0}  # noqa: RUF012 - a declared identity field
    batch_size = 4
    calls: list[int] = []  # noqa: RUF012 - rows per score_batch call, shared by the class

    def score_batch(self, images, texts):
        type(self).calls.append(len(images))
        c = self.options["channel"]
        return [float(im[..., c].mean() / 255.0) for im in images]


def _images(values) -> list[np.ndarray]:
    return [np.full((6, 5, 3), v, np.uint8) for v in values]


@pytest.fixture()
def colorstat():
    ColorStat.calls.clear()
    yield ColorStat
    registry.unregister(ColorStat.name)


# ----------------------------------------------------------------------------- families


def test_built_in_families_register_through_the_open_table():
    adapters = {f.adapter for f in families.all_families()}
    assert {"open_clip", "hf_clip", "blip2_itm", "blip2_itc", "blip_vqa", "vqascore", "judge",
            "clip_iqa", "companion", "planted", "python", "python_scene"} <= adapters  # fmt: skip
    assert families.get_family("companion").input == "scene"
    assert families.get_family("companion").role == "companion"
    assert families.get_family("judge").keeps_responses
    assert families.get_family("judge").weights == "api_key"
    from harness.evaluators import base

    assert not hasattr(base, "ADAPTERS")  # no closed table remains


def test_every_registered_spec_names_a_registered_family():
    for spec in registry.all_specs():
        assert families.find_family(spec.adapter) is not None, spec.id


def test_an_unknown_adapter_names_the_families_and_the_door():
    with pytest.raises(EvaluatorError, match="unknown adapter 'colorstat'") as info:
        registry.get("clip-vit-b32").with_changes(id="x", adapter="colorstat")
    assert "register_family" in str(info.value) and "open_clip" in str(info.value)


def test_a_plugin_family_with_scene_input_is_measured_without_renders():
    from harness.measure.images import measurement_kind

    fam = families.Family("t3d-test-scene", build=lambda spec, **kw: None, input="scene")
    families.register_family(fam)
    try:
        spec = registry.get("clip-vit-b32").with_changes(id="scene-thing", adapter="t3d-test-scene")
        assert measurement_kind(spec) == "scene"
        assert spec.weights_available()  # weights "none"
        with pytest.raises(EvaluatorError, match="already registered"):
            families.register_family(families.Family("t3d-test-scene", "a.b:c"))
    finally:
        families.unregister_family("t3d-test-scene")


@pytest.mark.parametrize("bad", [dict(input="pixels"), dict(weights="disk"), dict(role="judge"),
                                 dict(build="no_colon")])  # fmt: skip
def test_a_bad_family_is_a_typed_error(bad):
    with pytest.raises(EvaluatorError):
        families.Family("t3d-test-bad", **{"build": "a:b", **bad})


# Identity hashes of every evaluator registered before the family table (`t3d-audit evaluators
# --json` at commit 3dd25ff): cache namespaces and card ids must not move.
BEFORE = {
    "clip-vit-b32": "e4c4c71c6fb4d7c0f204ed776b3fb8c8f9b704ca12b85a5162957b835a3a463f",
    "clip-vit-b16": "19d01f8830a5a0ca4c5454511f9379498eff474db6a89a7cce3d624d037eb22b",
    "clip-vit-l14": "a8bbffb9181a6a2a6d94357e8d3847c048ab2da549c4e61a4c7aba933b531859",
    "clip-vit-l14-336": "894dfb35c0287aab7334031ebfd1b4d57bbece61806ed175d353b98dd2fb4e67",
    "openclip-vit-l14": "38dd6b4b02859e1f375d7a39c9c581e3e25f53f38f6cb25be87615e07aaa9702",
    "openclip-vit-h14": "2f8ebd3878f4cc512ad6846b86dfe63335c33238193832c830ead0201bf131af",
    "openclip-vit-bigg14": "9325c6caa4f568227aabb8660b59daf960910ccb09a45454c170421906b0cdd2",
    "metaclip-vit-l14": "ae88c8bedc17f7bd261a159060759361d1277fe97f76e6b5212d3907fd327e3a",
    "dfn-vit-l14": "4f8393021b4a83fd0e61d6960d43d5cde9466bfbdb61ce5939c42eafa8165677",
    "eva-clip-vit-l14": "187ef48abee6c3b460e3fa23268902050653a6005f9a19a797b29f088255ce11",
    "clipa-vit-l14": "bf242607ef20f9caa14d3f5f642f94073ff2437a022d8095210fd2f6d2097cc5",
    "longclip-vit-l14": "8b278958d39f7a4aa67b2f56bd1153d0999dc299e6fc58ec89e16ca3c247ff68",
    "siglip-vit-l16": "03b7cc708665b2c5fda6becc29f935fd3c844c1fcb0c08a6845aba97d625e212",
    "siglip2-vit-l16": "537f3bc35a826b8c1a3fd32e81fd07b707c9eaa7b7037dca99bf52f15d16eae0",
    "blip2-itm": "18d2392eb69b9a0981ca13c533dd02d6b1edd41d99573b372dd0f5435e9485b9",
    "blip2-itc": "8fd57bde651f68579de6a6eb5eb2c55e4be533c2bd8cd153d65abbadc5acfc94",
    "blip-vqa": "ca104bbb2bc57644074475ef69ba4d2ab37fce3d6962917ecb8affaa2a8f8347",
    "vqascore": "4da3875b8decf16bd4ac09bcae5296b315d3a73f1e34620f98693c46c408640c",
    "gpt4o-judge": "5793206f357a093eada0f7bc2b55787732e199316b26ef07c513330beb07b930",
    "clip-iqa": "e8bf3deea3fcf1b3ff3ba918687f77d56669fc6723f421bfe700d3b2ca99d854",
    "ref-vit-clip": "5724c51ebd12f03990602a5e8fe6d06d3e9a7494c8681f51bfb41d69e6d902e7",
    "ref-rn-clip": "9a9218538f6b52cdbc9822744985dac64b08218181089c8f9e0444b1b3d36fd6",
    "ref-siglip": "8473efefe05022fdddce58f2d989943f18572351d456e381b11f3e3e437c917d",
    "ref-clipiqa": "5342440f90d50227ce5bd6b941d9ee9bcd9b2a60397d0b43b722ef89b7cbed49",
    "companion": "3a8332405b53630ed8dbb7ea28c68d4a8bb62086e30ac08a7e159173061f00cc",
    "planted-pitch": "54de8234d6068a7aadb8a14f55e7ef0fddce85c1199a706b0613cbc25cce95da",
    "planted-template": "41c748705821126831a6a009871b657cc315526611c8dffd5e5310a649625176",
    "planted-lighting": "31072118bf37b65cb94c701abed896039e17bf85150a44b374c372c360a971af",
    "planted-bow": "1b1adc732e7a99ee1d9548dd9ccac14751c15a913dbb50fbe4ff7491dd6bb8c7",
    "planted-interaction": "d31cc2607f54e1bd3a34aa40ead6c6369a2b62734fba17b7ccd0c71700f1d936",
    "planted-robust": "85824401ecba0e3d46e05b4bfdd5263bcb3ada20ac5c559717d10221d8f6f642",
}


def test_built_in_identity_hashes_did_not_move():
    now = {s.id: s.identity_hash for s in registry.all_specs() if s.id in BEFORE}
    assert now == {k: v for k, v in BEFORE.items() if k in now}
    assert len(now) >= 20  # the study's Table 12 at least


# ----------------------------------------------------------------------------- declaration


def test_the_declared_identity_is_the_spec(colorstat):
    spec = colorstat.spec()
    assert isinstance(spec, EvaluatorSpec)
    assert (spec.id, spec.adapter, spec.needs_text, spec.score_range) == (
        "colorstat-test", "python", False, (0.0, 1.0))
    assert spec.option("version") == "2" and spec.option("channel") == 0
    assert spec.option("batch_size") == 4

    class Bumped(ColorStat):
        version = "3"

    assert Bumped.spec().identity_hash != spec.identity_hash  # a new version: a new cache


@pytest.mark.parametrize("attrs, match", [
    ({"name": ""}, "needs a name"),
    ({"name": "bad id!"}, "evaluator id"),
    ({"input": "video"}, "input must be"),
    ({"batch_size": 0}, "batch_size"),
    ({"score_range": (1.0, 0.0)}, "score_range"),
    ({"options": {"nested": {"a": 1}}}, "not a string, number"),
    ({"options": {"bad": float("nan")}}, "not a string, number"),
    ({"options": [1, 2]}, "options must be a mapping"),
])  # fmt: skip
def test_a_bad_declaration_is_a_typed_error(attrs, match):
    cls = type("Bad", (ColorStat,), attrs)
    with pytest.raises(EvaluatorError, match=match):
        registry.register(cls)


# ----------------------------------------------------------------------------- registration


def test_register_as_decorator(colorstat):
    decorated = register(colorstat)
    assert decorated is colorstat
    assert registry.get("colorstat-test") == colorstat.spec()


def test_register_a_call_and_an_instance(colorstat):
    registry.register(colorstat)
    assert registry.get("colorstat-test").adapter == "python"
    instance = colorstat()
    registry.register(instance)  # same identity: accepted, and that instance is used
    ev = registry.get("colorstat-test").build()
    assert ev.scorer is instance


def test_a_different_identity_under_a_taken_id_needs_replace(colorstat):
    registry.register(colorstat)
    other = type("Other", (ColorStat,), {"version": "9"})
    with pytest.raises(EvaluatorError, match="already registered"):
        registry.register(other)
    registry.register(other, replace=True)
    assert registry.get("colorstat-test").option("version") == "9"


def test_register_refuses_other_objects():
    with pytest.raises(EvaluatorError, match="Scorer subclass"):
        registry.register(object())


def test_an_unregistered_scorer_spec_cannot_be_built():
    with pytest.raises(EvaluatorError, match="not registered in this process"):
        type("Ghost", (ColorStat,), {"name": "ghost-scorer"}).spec().build()


# ----------------------------------------------------------------------------- scoring


def test_fixed_shape_batches_and_scores_independent_of_batching(colorstat):
    ev = ScorerEvaluator(colorstat.spec(), colorstat(), batch_size=32)
    results = ev.score(_images([0, 51, 102, 153, 204, 255]), [""] * 6)
    assert colorstat.calls == [4, 4]  # 6 rows: 4, then 2 padded to 4
    assert [r.score for r in results] == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    alone = [ev.score(_images([v]), [""])[0].score for v in (0, 51, 102, 153, 204, 255)]
    assert alone == [r.score for r in results]


class Fragile(Scorer):
    name = "fragile-test"
    score_range = (0.0, 1.0)
    batch_size = 2

    def score_batch(self, images, texts):
        if any("boom" in t for t in texts):
            raise RuntimeError("the model fell over")
        return [{"nan": math.nan, "big": 7.0, "word": "x"}.get(t, 0.5) for t in texts]


def test_failures_are_nan_with_a_reason():
    ev = ScorerEvaluator(Fragile.spec(), Fragile(), batch_size=8)
    res = ev.score(_images([1, 2, 3, 4, 5, 6]), ["ok", "nan", "big", "word", "boom", "ok"])
    assert [r.status for r in res] == ["ok", "failed", "failed", "failed", "failed", "failed"]
    assert all(math.isnan(r.score) for r in res[1:])
    assert "non-finite" in res[1].error and "outside the declared range" in res[2].error
    assert "not a number" in res[3].error
    assert res[4].error == res[5].error == "RuntimeError: the model fell over"  # its whole batch


def test_a_wrong_number_of_scores_is_a_failure():
    short = type("Short", (Fragile,), {"score_batch": lambda self, i, t: [0.5]})
    res = ScorerEvaluator(short.spec(), short(), 8).score(_images([1, 2]), ["a", "b"])
    assert {r.status for r in res} == {"failed"} and "returned 1 scores for 2 rows" in res[0].error


def test_scene_input_scores_items_without_images():
    from harness.measure.images import measurement_kind

    class SceneCount(Scorer):
        name = "scene-count-test"
        input = "scene"

        def score_batch(self, items, texts):
            return [float(len(t)) for t in texts]

    spec = SceneCount.spec()
    assert spec.adapter == "python_scene" and measurement_kind(spec) == "scene"
    ev = ScorerEvaluator(spec, SceneCount(), 4)
    item = type("Item", (), {"caption": "a red chair"})()
    assert [r.score for r in ev.score_items([item])] == [11.0]


def test_api_score_caches_and_accepts_pil_arrays_and_paths(colorstat, tmp_path):
    from PIL import Image

    from harness.api import score

    Image.new("RGB", (4, 4), (255, 0, 0)).save(tmp_path / "red.png")
    inputs = [tmp_path / "red.png", Image.new("RGBA", (4, 4), (0, 0, 0, 0)),
              np.zeros((4, 4), np.uint8)]  # fmt: skip
    first = score(colorstat, inputs, cache=tmp_path / "cache")
    assert [r.score for r in first] == pytest.approx([1.0, 1.0, 0.0])  # transparent → white
    assert colorstat.calls == [4]
    again = score(colorstat(), inputs, cache=tmp_path / "cache")
    assert colorstat.calls == [4]  # second call computes nothing
    assert [r.score for r in again] == [r.score for r in first]
    assert all(r.metadata.get("cached") == "true" for r in again)


def test_api_score_by_id_and_failures_are_not_cached(tmp_path):
    from harness.api import score

    registry.register(Fragile)
    try:
        res = score("fragile-test", _images([1, 2]), ["boom", "ok"], cache=tmp_path)
        assert [r.status for r in res] == ["failed", "failed"]
        res = score("fragile-test", _images([1, 2]), ["ok", "ok"], cache=tmp_path)
        assert [r.status for r in res] == ["ok", "ok"]
    finally:
        registry.unregister("fragile-test")


@pytest.mark.parametrize("images, texts, match", [
    ([np.zeros((4, 4, 3), np.float32)], ["a"], "dtype"),
    ([np.zeros((4, 4, 2), np.uint8)], ["a"], "shape"),
    ([np.zeros((4, 4, 3), np.uint8)], ["a", "b"], "1 images but 2 texts"),
    ([np.zeros((4, 4, 3), np.uint8)], None, "needs texts"),
])  # fmt: skip
def test_api_score_bad_input_is_a_typed_error(images, texts, match):
    from harness.api import score

    with pytest.raises(EvaluatorError, match=match):
        score(Fragile, images, texts, cache=False)


# ----------------------------------------------------------------------------- CLI


def test_cli_lists_and_scores_a_registered_scorer(colorstat, tmp_path, capsys):
    from PIL import Image

    register(colorstat)
    assert cli_main(["evaluators", "colorstat-test", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["identity_hash"] == colorstat.spec().identity_hash
    assert listed[0]["weights_available"] is True
    (tmp_path / "imgs").mkdir()
    Image.new("RGB", (4, 4), (51, 0, 0)).save(tmp_path / "imgs" / "a.png")
    (tmp_path / "caps.json").write_text(json.dumps({"a.png": "anything"}))
    argv = ["score", "--evaluator", "colorstat-test", "--images", str(tmp_path / "imgs"),
            "--captions", str(tmp_path / "caps.json"), "--out", str(tmp_path / "out.csv"),
            "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    assert cli_main(argv) == 0
    assert cli_main(argv) == 0
    assert colorstat.calls == [4]  # the second run is served from the score cache
    text = (tmp_path / "out.csv").read_text()
    assert "colorstat-test" in text and ",0.2," in text


ENTRY_MODULE = '''
from harness.evaluators import Scorer


class GreenShare(Scorer):
    """Mean green channel of the image, in [0, 1]."""
    name = "greenshare"
    score_range = (0.0, 1.0)
    needs_text = False

    def score_batch(self, images, texts):
        return [float(im[..., 1].mean() / 255) for im in images]
'''


def test_an_entry_point_package_is_listed_and_scores(tmp_path):
    """A tiny installed distribution (a dist-info on sys.path) whose entry point names a Scorer."""
    from PIL import Image

    site = tmp_path / "site"
    dist = site / "greenshare_pkg-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "greenshare_pkg.py").write_text(ENTRY_MODULE)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: greenshare-pkg\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[t3d_audit.evaluators]\ngreenshare = greenshare_pkg:GreenShare\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    listed = subprocess.run([sys.executable, "-m", "harness", "evaluators", "green*"],
                            capture_output=True, text=True, env=env, cwd=tmp_path, check=True)  # fmt: skip
    assert re.match(r"greenshare\tcustom\tGreenShare\tversion 1, code sha256:[0-9a-f]{16}\tweights:yes\tno-text", listed.stdout)
    (tmp_path / "imgs").mkdir()
    Image.new("RGB", (4, 4), (0, 102, 0)).save(tmp_path / "imgs" / "g.png")
    (tmp_path / "caps.json").write_text(json.dumps({"g.png": "x"}))
    subprocess.run([sys.executable, "-m", "harness", "score", "--evaluator", "greenshare",
                    "--images", "imgs", "--captions", "caps.json", "--out", "out.csv",
                    "--cache-dir", "cache"], env=env, cwd=tmp_path, check=True)  # fmt: skip
    assert ",0.4," in (tmp_path / "out.csv").read_text()


# ----------------------------------------------------------------------------- docs


def _doc_block() -> str:
    text = (ROOT / "docs" / "evaluators.md").read_text(encoding="utf-8")
    section = text.split("## Your own scoring code", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_docs_section_runs_verbatim(tmp_path):
    block = _doc_block()
    section = (ROOT / "docs" / "evaluators.md").read_text().split("## Your own scoring code", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert len(("## Your own scoring code" + section).strip().splitlines()) <= 30
    script = tmp_path / "own.py"
    script.write_text(textwrap.dedent(block))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "T3D_AUDIT_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, check=True)  # fmt: skip
    assert done.stdout.strip() == "[85.5, 0.0]"
    assert "[85.5, 0.0]" in section  # the doc states what it prints


# ----------------------------------------------------------------------------- API: agreement


def test_api_agreement_is_the_cli_document(tmp_path, capsys):
    from harness.api import agreement

    ratings, scores = tmp_path / "ratings.csv", tmp_path / "scores.csv"
    rows = ["item_id,prompt_id,rater,rating"]
    rows += [f"i{i},p{i % 4},r{r},{1 + (i + r * (i % 3)) % 5}" for i in range(12) for r in range(3)]
    ratings.write_text("\n".join(rows) + "\n")
    scores.write_text("item_id,evaluator,score\n" + "".join(
        f"i{i},colorstat,{0.1 * i + 0.05 * (i % 2)}\n" for i in range(12)))  # fmt: skip
    doc = agreement(ratings, [scores], scale="1-5", bootstrap=50, seed=3)
    assert cli_main(["agreement", "--human", str(ratings), "--scale", "1-5", "--scores", str(scores),
                     "--bootstrap", "50", "--seed", "3", "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(doc))
    assert doc["evaluators"]["colorstat"]["n"] == 12
    with pytest.raises(Exception, match="scale"):
        agreement(ratings, [scores])
