"""Adding a concept touches only its own files: the consumers derive from the registries.

Each test stands for one place that used to keep its own copy of the vocabulary (or could not
point at a built-in row's code) and now derives from the registry.
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass, replace

import numpy as np
import pytest

from harness.protocol.configurations import RenderConfig


def test_the_study_render_key_is_unchanged():
    # the key of the default c0 render before any field was added (sha256 of its 8 fields)
    assert RenderConfig().key == "2b49954be153dbbd1bfeb9f0e22fb1d40b6f24f2d174fa9012d725621977e03f"


def test_a_new_render_field_at_its_default_moves_no_key():
    @dataclass(frozen=True)
    class WithExposure(RenderConfig):
        exposure_ev: float = 0.0

    for cfg in (RenderConfig(), RenderConfig(pitch_deg=45.0, lighting="night")):
        extended = WithExposure(**cfg.to_dict())
        assert extended.to_dict() == cfg.to_dict() and extended.key == cfg.key
    moved = replace(WithExposure(), exposure_ev=1.0)
    assert moved.to_dict()["exposure_ev"] == 1.0 and moved.key != RenderConfig().key
    assert WithExposure(**moved.to_dict()) == moved  # the dict reads back


def test_score_tables_take_every_registered_factor():
    """A factor registered after paraphrase (here one that is not shared) is tabled, in record
    order, not refused as unknown."""
    from harness.stats.synthetic import SyntheticSpec, synthetic_records
    from harness.stats.table import pivot_records
    from harness.vocab.factors import FACTORS, FactorSpec, factor_names, register_factor

    records = synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, generators=2,
                                              prompts=3, templates=2, paraphrases=2))
    extra = records[records["factor"] == "paraphrase"].copy()
    extra["factor"] = "tone"
    extra["level"] = extra["level"].str.replace("p", "t")
    register_factor(FactorSpec("tone", "caption", lambda c, lv, _p: c, lambda c: "t0",
                               levels=("t0", "t1"), default="t0", shared=False, crossable=False))
    try:
        import pandas as pd

        tables = pivot_records(pd.concat([records, extra], ignore_index=True))
        table = next(iter(tables.values()))
        assert list(table.factors) == [f for f in factor_names() if f in table.factors]
        assert list(table.factors)[-1] == "tone"
        assert tuple(table.factors["tone"].levels) == ("t0", "t1")
    finally:
        FACTORS.unregister("tone")


def test_a_statistic_can_point_at_its_module_lazily(tmp_path, monkeypatch):
    """A built-in row names its statistic as ``"module:function"``: the registry does not import
    the stats module, the first call does, and the audit computes it."""
    from harness.stats.audit_stats import compute_audit
    from harness.stats.synthetic import SyntheticSpec, synthetic_records
    from harness.vocab.metrics import METRICS, LazyCompute, MetricSpec, register_metric
    from harness.vocab.registry_type import VocabularyError

    (tmp_path / "lazy_stat_mod.py").write_text(textwrap.dedent(
        """
        import numpy as np

        def c0_max(scores):
            return float(np.nanmax(scores.baseline))
        """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = register_metric(MetricSpec("c0_max", "c0 max", unit="score",
                                      compute="lazy_stat_mod:c0_max"))
    try:
        assert isinstance(spec.compute, LazyCompute)
        assert "lazy_stat_mod" not in sys.modules  # nothing imported at registration
        records = synthetic_records(SyntheticSpec(evaluators=1, prompt_free=0, generators=2,
                                                  prompts=3, templates=2, paraphrases=2))
        summary = compute_audit(records, bootstrap=0).to_summary()
        entry = next(iter(summary["evaluators"].values()))
        ok = records[records["factor"] == "baseline"]["score"]
        assert entry["registered"]["c0_max"] == pytest.approx(float(np.nanmax(ok)))
    finally:
        METRICS.unregister("c0_max")
        sys.modules.pop("lazy_stat_mod", None)
    with pytest.raises(VocabularyError, match="module:function"):
        MetricSpec("bad", "bad", compute="no_colon")


def test_a_family_module_registers_itself_when_discovered(tmp_path, monkeypatch):
    """A family in its own module of the discovered package is found with no list naming it."""
    from harness.evaluators.families import discover_families, find_family, unregister_family

    package = tmp_path / "my_family_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "sharp.py").write_text(textwrap.dedent(
        """
        from harness.evaluators.families import Family, register_family

        register_family(Family("sharp_test", "my_family_pkg.sharp:build", role="quality"))
        """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert discover_families(package, "my_family_pkg") == ["sharp"]
        assert find_family("sharp_test").role == "quality"
    finally:
        unregister_family("sharp_test")
        sys.modules.pop("my_family_pkg.sharp", None)
        sys.modules.pop("my_family_pkg", None)


def test_the_built_in_family_modules_are_imported_without_torch():
    import subprocess

    code = ("import pkgutil, sys, harness.evaluators.families as f\n"
            "from harness.evaluators import family_modules as p\n"
            "mods = [m.name for m in pkgutil.iter_modules(p.__path__)]\n"
            "assert all(f'{p.__name__}.{m}' in sys.modules for m in mods), mods\n"
            "assert 'torch' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
