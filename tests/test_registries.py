"""The one registry shape (``Registry[T]``), read live, and each concept added in a test's own
registry: a render factor, a probe and an evaluator family with its own evaluator.

Every test runs inside its own scope of every registry (``tests/conftest.py``), so what these
tests register is gone when they end; ``test_a_registration_ends_with_its_test`` checks that.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, replace

import pytest

from harness.core.errors import EvaluatorError
from harness.core.paths import REPO_ROOT
from harness.vocab.registry_type import Lazy, Registry, VocabularyError, all_registries, scoped


@dataclass(frozen=True)
class Row:
    name: str
    value: int = 0


# ------------------------------------------------------------------------------ Registry[T]


def test_a_registry_keeps_order_and_names_the_closest_unknown():
    reg: Registry[Row] = Registry("widget")
    for name in ("peak_rho_max", "min_kendall_w", "focal_length"):
        reg.register(Row(name))
    assert reg.names() == ("peak_rho_max", "min_kendall_w", "focal_length")
    assert [r.name for r in reg] == list(reg.names()) and len(reg) == 3
    assert reg.where(lambda r: r.name.startswith("m")) == (Row("min_kendall_w"),)
    with pytest.raises(VocabularyError, match=r"unknown widget 'focal_lenght' \(did you mean focal_length\?\)"):
        reg.get("focal_lenght")
    with pytest.raises(VocabularyError, match="did you mean peak_rho_max"):
        reg.get("max_peak_rho")  # the same words in another order
    assert reg.find("nope") is None and "nope" not in reg


def test_a_taken_name_needs_replace_and_the_clash_names_the_source():
    reg: Registry[Row] = Registry("widget", error=EvaluatorError)
    reg.register(Row("a", 1), source="my conftest")
    reg.register(Row("a", 1), source="elsewhere")  # the same entry again: accepted
    assert reg.source_of("a") == "my conftest"  # and it keeps its first source
    with pytest.raises(EvaluatorError, match=r"widget 'a' is already registered \(by my conftest\)"):
        reg.register(Row("a", 2))
    reg.register(Row("a", 2), replace=True)
    assert reg.get("a").value == 2 and reg.source_of("a") is None
    with pytest.raises(EvaluatorError, match="non-empty name"):
        reg.register(Row(""))


def test_the_version_moves_with_every_change_and_only_then():
    reg: Registry[Row] = Registry("widget")
    v0 = reg.version
    reg.register(Row("a"))
    v1 = reg.version
    with reg.scoped():
        reg.register(Row("b"))
        assert reg.names() == ("a", "b")
    assert reg.names() == ("a",) and reg.version > v1 > v0
    v2 = reg.version
    with reg.scoped():
        assert reg.get("a") == Row("a")
    assert reg.version == v2  # nothing changed: derived caches stay valid


def test_a_scope_puts_back_what_was_replaced_or_removed():
    reg: Registry[Row] = Registry("widget")
    reg.register(Row("a", 1), source="first")
    with scoped(reg):
        reg.register(Row("a", 2), replace=True)
        reg.unregister("a")
        reg.register(Row("z"))
    assert reg.names() == ("a",) and reg.get("a").value == 1 and reg.source_of("a") == "first"


def test_a_loader_runs_once_on_first_read_and_a_reset_loads_again():
    calls = []

    def load(reg: Registry[Row]) -> None:
        calls.append(1)
        reg.register(Row("built-in"))

    reg: Registry[Row] = Registry("widget", loader=load)
    assert not reg.loaded and calls == []
    assert reg.names() == ("built-in",) and calls == [1]
    reg.register(Row("mine"))
    with reg.scoped():
        reg.reset()
        assert reg.names() == ("built-in",) and calls == [1, 1]
    assert reg.names() == ("built-in", "mine")
    fresh: Registry[Row] = Registry("widget", loader=load)
    with fresh.scoped():  # a scope taken before the first load ...
        fresh.register(Row("mine"))
    assert fresh.names() == ("built-in",)  # ... ends at the loaded rows, without loading again
    assert len(calls) == 3


def test_lazy_imports_on_first_call_only():
    ref = Lazy("json:dumps")
    assert ref({"a": 1}) == '{"a": 1}' and ref.resolve() is json.dumps
    assert Lazy("json:dumps") == ref  # compares by its path: a registry row stays comparable
    for bad in ("json", ":dumps", "json:", "a:b:c"):
        with pytest.raises(VocabularyError, match="module:function"):
            Lazy(bad)


def test_every_concept_is_one_registry_shape():
    from harness.evaluators.families import FAMILIES
    from harness.evaluators.registry import SPECS
    from harness.evaluators.scorer import RECIPES
    from harness.vocab.factors import FACTORS, SETTINGS
    from harness.vocab.metrics import METRICS, PANEL_METRICS, THRESHOLDS
    from harness.vocab.probes import PROBES

    tables = (METRICS, PANEL_METRICS, THRESHOLDS, FACTORS, SETTINGS, PROBES, FAMILIES, SPECS, RECIPES)
    assert all(isinstance(t, Registry) for t in tables)
    assert set(tables) <= set(all_registries())


LEAK = "t3d_test_leak"


def test_a_registration_ends_with_its_test():
    """Two halves in one test (xdist may split two tests): the conftest's scope is the same
    ``scoped()`` used here, which must drop a name registered inside it."""
    from harness.vocab.probes import PROBES, ProbeSpec, register_probe

    with scoped():
        register_probe(ProbeSpec(LEAK, edit="harness.scenes.probe_edits:keep_half", multi_object=True))
        assert LEAK in PROBES
    assert LEAK not in PROBES


def test_no_registry_holds_a_name_a_test_registered():
    from harness.vocab.probes import PROBES

    assert LEAK not in PROBES  # whichever test ran before, in this process


# ------------------------------------------------------------------------------ read live


def test_protocol_reads_a_factor_registered_after_import():
    from harness.protocol import configurations as protocol
    from harness.protocol.levels import check_level
    from harness.vocab.factors import FactorSpec, factor_names, on_render, register_factor

    assert "exposure_ev_t" not in protocol.factors()
    apply, setting = on_render("exposure_ev_t", "0")
    register_factor(FactorSpec("exposure_ev_t", "render", apply, setting, levels=("-1", "0", "1"),
                               default="0", label="Exposure (EV)", short="EV"))
    assert "exposure_ev_t" in protocol.factors() and factor_names()[-1] == "exposure_ev_t"
    assert protocol.record_factors()[-2:] == ("exposure_ev_t", "probe")
    assert "exposure_ev_t" in protocol.block_factors()
    check_level("exposure_ev_t", "1")
    with pytest.raises(Exception, match="unknown level"):
        check_level("exposure_ev_t", "2")


# ------------------------------------------------------------------------------ one concept each


def _exposure() -> None:
    """A new render factor, as its row would read in harness/vocab/factors.py: its level is
    kept in the render configuration (``on_render``), which the renderer reads."""
    from harness.vocab.factors import FactorSpec, on_render, register_factor

    apply, setting = on_render("exposure_ev_t", "0")
    register_factor(FactorSpec("exposure_ev_t", "render", apply, setting, levels=("-1", "0", "1"),
                               default="0", label="Exposure (EV)", short="EV"))


def test_a_new_render_factor_reaches_profile_plan_statistics_and_card(tmp_path):
    from harness.cards import build_card, validate_card
    from harness.measure.plan import build_plan
    from harness.protocol.profiles import _parse_profile
    from harness.scenes.sceneset import SceneSet
    from harness.stats.audit_stats import compute_audit, summary_with_intervals
    from harness.stats.synthetic import SyntheticSpec, synthetic_records
    from harness.testing import write_tiny_scene_set
    from tests._card_inputs import base_inputs

    _exposure()
    data = {"c0": {"resolution_px": 224, "samples": 8}, "prompts": 1,
            "levels": {"pitch": ["0", "45"], "exposure_ev_t": "all"}, "probes": []}
    profile = _parse_profile("exposure_ev_t-check", data)
    assert profile.levels["exposure_ev_t"] == ("-1", "0", "1")
    configs = {c.id: c for c in profile.configurations()}
    base = configs["baseline"].render
    assert base.extras == () and "extras" not in base.to_dict()  # c0's render key is unchanged
    assert configs["exposure_ev_t=0"].render == base  # the default level is the c0 render
    assert configs["exposure_ev_t=1"].render.extra("exposure_ev_t", "0") == "1"
    assert configs["exposure_ev_t=1"].render.key != base.key  # a level off c0 is its own render

    scene_set = SceneSet.load(write_tiny_scene_set(tmp_path / "scenes"))
    plan = build_plan(scene_set, profile)
    assert {r.level for r in plan.rows if r.factor == "exposure_ev_t"} == {"-1", "0", "1"}

    records = synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, generators=3, prompts=4,
                                              templates=2, paraphrases=2))
    assert {"-1", "0", "1"} <= set(records.loc[records["factor"] == "exposure_ev_t", "level"])
    stats = next(iter(summary_with_intervals(compute_audit(records, bootstrap=20))["evaluators"].values()))
    assert "exposure_ev_t" in stats["rho"] and "exposure_ev_t" in stats["kendall_w"]  # a shared factor
    inputs = base_inputs()
    inputs["stats"] = stats
    card = build_card(**inputs)
    validate_card(card)
    assert "exposure_ev_t" in json.dumps(card)


def test_a_new_probe_edits_scenes_and_is_planned(tmp_path):
    from harness.measure.plan import build_plan
    from harness.protocol.levels import check_level
    from harness.protocol.profiles import get_profile
    from harness.scenes import probe_edits
    from harness.scenes.sceneset import SceneSet
    from harness.testing import write_tiny_scene_set
    from harness.vocab.probes import ProbeSpec, probe_names, probe_threshold, register_probe

    def turned_round(scene, rng):
        return tuple(replace(o, yaw_deg=(o.yaw_deg + 180.0) % 360.0) for o in scene.objects)

    before = get_profile("smoke").probes
    register_probe(ProbeSpec("turned_round", edit=turned_round, threshold="min_removal_discrimination",
                             multi_object=True, label="Turned round"))
    assert probe_names()[-1] == "turned_round" and probe_threshold("turned_round") == "min_removal_discrimination"
    check_level("probe", "turned_round")
    scene_set = SceneSet.load(write_tiny_scene_set(tmp_path / "scenes"))
    scene = next(s for s in scene_set.scenes if len(s.objects) > 1)
    edited = probe_edits.apply(scene, "turned_round", seed=0)
    assert [o.yaw_deg for o in edited.objects] == [(o.yaw_deg + 180.0) % 360.0 for o in scene.objects]
    profile = get_profile("smoke")
    assert profile.probes == before  # the smoke profile names its probes
    everything = replace(profile, probes=probe_names())
    plan = build_plan(scene_set, everything)
    assert any(r.factor == "probe" and r.level == "turned_round" for r in plan.rows)


FAMILY_MODULE = textwrap.dedent(
    '''
    """A family in its own module: its adapter and its evaluator, no catalogue row."""
    from harness.evaluators.families import Family, register_family


    def specs():
        from harness.evaluators.base import EvaluatorSpec

        return [EvaluatorSpec(id="sharp-t-1", family="Sharpness", adapter="sharp_test",
                              model_name="edge energy", checkpoint="v1", preprocessing="none",
                              score_scale="edge energy; range [0, 1]", needs_text=False,
                              score_range=(0.0, 1.0))]


    def build(spec, *, device="cpu", batch_size=32):
        raise NotImplementedError


    register_family(Family("sharp_test", build=build, role="quality", specs=specs))
    '''
)


def _family_package(tmp_path):
    package = tmp_path / "my_sharp_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "sharp.py").write_text(FAMILY_MODULE, encoding="utf-8")
    return package


def test_a_family_module_registers_its_own_evaluator(tmp_path, monkeypatch):
    from harness.evaluators import registry
    from harness.evaluators.catalogue import catalogue_specs
    from harness.evaluators.families import discover_families, find_family, has_role

    package = _family_package(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert discover_families(package, "my_sharp_pkg") == ["sharp"]
        spec = registry.get("sharp-t-1")  # the registry had loaded before: read live
        assert find_family("sharp_test").role == "quality" and has_role(spec, "quality")
        assert registry.source_of("sharp-t-1") == "family 'sharp_test'"
        assert "sharp-t-1" not in {s.id for s in catalogue_specs()}
    finally:
        sys.modules.pop("my_sharp_pkg.sharp", None)
        sys.modules.pop("my_sharp_pkg", None)
    from harness.evaluators.families import unregister_family

    unregister_family("sharp_test")
    assert "sharp-t-1" not in {s.id for s in registry.all_specs()}  # its evaluator goes with it


def test_a_family_module_imports_no_registry(tmp_path):
    """No cycle: the family module is imported while ``harness.evaluators.families`` loads
    (as a module of ``family_modules`` is), and its evaluator is read when the registry is."""
    _family_package(tmp_path)
    code = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        import harness.evaluators.base  # base imports families, which discovers the modules
        from harness.evaluators.families import discover_families
        discover_families(Path(sys.argv[1]) / "my_sharp_pkg", "my_sharp_pkg")
        assert "harness.evaluators.registry" not in sys.modules
        from harness.evaluators import registry
        print(registry.get("sharp-t-1").id, registry.source_of("sharp-t-1"))
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tmp_path), str(REPO_ROOT)))}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["sharp-t-1", "family", "'sharp_test'"]
