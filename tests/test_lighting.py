"""Lighting scalars (Table 8): EV/CCT math on synthetic maps, the committed fixture, the report."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.commands.lighting import compare
from harness.core.errors import AuditError
from harness.measure.audit_inputs import DEFAULT_LIGHTING_SCALARS, audit_inputs, lighting_scalars
from harness.render import light_maps as lt
from harness.render.settings import LIGHTING_FILES

EXACT_PIXEL = lt.Convention("exact-pixel", "pixel", 1.0, delta=0.0)
EXACT_EV100 = lt.Convention("exact-ev100", "solid_angle", lt.EV100_REFERENCE, delta=0.0)

# Study Table 8 as printed (EV 2 decimals, CCT in whole kelvin).
STUDY_TABLE8 = {
    "studio": (-6.41, 7802), "night": (-5.13, 5051), "courtyard": (-3.70, 5759),
    "sunrise": (-3.24, 6004), "forest": (-2.22, 7513), "interior": (-2.20, 5420),
    "sunset": (-2.02, 8785), "city": (-1.17, 6444),
}


def _uniform(value, h=8, w=16):
    return np.broadcast_to(np.asarray(value, dtype=np.float64), (h, w, 3)).copy()


# -- pure math --------------------------------------------------------------------------------


def test_uniform_gray_gives_known_ev():
    gray = _uniform(0.125)  # L = 0.125 exactly (the luma weights sum to 1)
    assert lt.map_scalars(gray, EXACT_PIXEL).ev == pytest.approx(-3.0, abs=1e-12)
    assert lt.map_scalars(gray, EXACT_EV100).ev == pytest.approx(0.0, abs=1e-12)  # EV100 0
    # the default δ = 1e-6 moves a mid-grey map by under 2e-5 stops
    assert lt.map_scalars(gray).ev == pytest.approx(-3.0, abs=2e-5)
    assert lt.map_scalars(_uniform(2.0), EXACT_EV100).ev == pytest.approx(4.0)  # log2(16)


def test_d65_white_gives_6504k():
    s = lt.map_scalars(_uniform(1.0))
    assert s.xy == pytest.approx((0.3127, 0.3290), abs=1e-4)  # D65 white point
    assert s.cct == pytest.approx(6504, abs=1.0)
    # the solid-angle convention agrees on a uniform map
    assert lt.map_scalars(_uniform(1.0), lt.SOLID_ANGLE_EV100).cct == pytest.approx(s.cct)


def test_mccamy_illuminant_a():
    # CIE illuminant A (2856 K): x = 0.44757, y = 0.40745; McCamy's cubic gives 2857.3 K by hand
    assert lt.mccamy_cct(0.44757, 0.40745) == pytest.approx(2857.3, abs=0.2)


def test_warm_map_is_lower_cct_than_cool_map():
    warm = lt.map_scalars(_uniform((1.0, 0.7, 0.4))).cct
    cool = lt.map_scalars(_uniform((0.8, 0.9, 1.0))).cct
    assert warm < 5000 < 6504 < cool


def test_solid_angle_weights_by_hand():
    w = lt.solid_angle_weights(4, 3)
    # rows span 90..45, 45..0, 0..-45, -45..-90 degrees: bands 1 - √2/2 and √2/2 (×2π/3 each)
    polar, equator = (1 - math.sqrt(0.5)) * 2 * math.pi / 3, math.sqrt(0.5) * 2 * math.pi / 3
    assert w[0] == pytest.approx([polar] * 3) and w[3] == pytest.approx([polar] * 3)
    assert w[1] == pytest.approx([equator] * 3) and w[2] == pytest.approx([equator] * 3)
    assert w.sum() == pytest.approx(4 * math.pi)


def test_weighting_changes_the_log_average_as_computed_by_hand():
    # polar rows L = 1, equatorial rows L = 0.125: hemisphere weights 1 - √2/2 and √2/2
    rgb = _uniform(0.125, h=4, w=6)
    rgb[[0, 3]] = 1.0
    a = math.sqrt(0.5)
    assert lt.map_scalars(rgb, EXACT_EV100).ev == pytest.approx(3 - 3 * a)  # log2(8·0.125^a)
    pixel_ev100 = lt.Convention("p", "pixel", lt.EV100_REFERENCE, delta=0.0)
    assert lt.map_scalars(rgb, pixel_ev100).ev == pytest.approx(1.5)  # log2(8·0.125^0.5)


def test_weighting_of_chromaticity():
    # red poles, blue equator: solid-angle weighting favours the equator, so the map is bluer
    rgb = _uniform((0.0, 0.0, 1.0), h=4, w=4)
    rgb[[0, 3]] = (1.0, 0.0, 0.0)
    xy_pixel = lt.map_scalars(rgb, lt.STUDY).xy
    expected = lt.xy_chromaticity(np.array([1.0, 0.0, 1.0]))  # equal pixel shares
    assert xy_pixel == pytest.approx(expected)
    a = math.sqrt(0.5)
    xy_sa = lt.map_scalars(rgb, lt.SOLID_ANGLE_EV100).xy
    assert xy_sa == pytest.approx(lt.xy_chromaticity(np.array([1 - a, 0.0, a])))


@settings(max_examples=40, deadline=None)
@given(h=st.integers(1, 64), w=st.integers(1, 64))
def test_solid_angles_cover_the_sphere_symmetrically(h, w):
    sa = lt.solid_angle_weights(h, w)
    assert sa.shape == (h, w) and (sa > 0).all()
    assert sa.sum() == pytest.approx(4 * math.pi)
    np.testing.assert_allclose(sa, sa[::-1], rtol=1e-9, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    scale=st.floats(1e-3, 1e3),
    conv=st.sampled_from([EXACT_PIXEL, EXACT_EV100]),
)
def test_scaling_a_map_shifts_ev_by_log2_and_keeps_cct(seed, scale, conv):
    rgb = np.random.default_rng(seed).uniform(0.01, 5.0, size=(6, 12, 3))
    a, b = lt.map_scalars(rgb, conv), lt.map_scalars(rgb * scale, conv)
    assert b.ev - a.ev == pytest.approx(math.log2(scale), abs=1e-9)
    assert b.cct == pytest.approx(a.cct, rel=1e-9)


@pytest.mark.parametrize(
    "rgb, match",
    [
        (np.zeros((4, 8, 3)), "no positive radiant energy"),
        (np.ones((4, 8)), "expected an"),
        (np.full((4, 8, 3), np.nan), "non-finite"),
    ],
)
def test_bad_maps_raise(rgb, match):
    with pytest.raises(ValueError, match=match):
        lt.map_scalars(rgb)


def test_unknown_weighting():
    with pytest.raises(ValueError, match="unknown weighting"):
        lt.map_scalars(_uniform(1.0), lt.Convention("x", "cubemap", 1.0))  # type: ignore[arg-type]


# -- committed fixture ------------------------------------------------------------------------


def _fixture() -> dict:
    return json.loads(DEFAULT_LIGHTING_SCALARS.read_text(encoding="utf-8"))


def test_fixture_covers_the_eight_levels_and_reproduces_study_table8():
    doc = _fixture()
    assert doc["schema"] == lt.SCHEMA and doc["default_convention"] == "study"
    assert set(doc["maps"]) == set(LIGHTING_FILES)
    for level, entry in doc["maps"].items():
        assert entry["file"] == LIGHTING_FILES[level]
        assert len(entry["sha256"]) == 64
        ev, cct = STUDY_TABLE8[level]
        assert round(entry["ev"], 2) == ev and round(entry["cct"]) == cct, level
    scalars = lighting_scalars()
    assert scalars == {k: (v["ev"], v["cct"]) for k, v in doc["maps"].items()}
    order = sorted(scalars, key=lambda k: scalars[k][0])
    assert order == sorted(STUDY_TABLE8, key=lambda k: STUDY_TABLE8[k][0])  # dark to bright


def test_scalars_other_convention_and_plain_mapping(tmp_path):
    doc = _fixture()
    sa = lt.scalars_from_document(doc, "solid_angle")
    assert sa["city"] == (doc["maps"]["city"]["conventions"]["solid_angle"]["ev"],
                          doc["maps"]["city"]["conventions"]["solid_angle"]["cct"])
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"city": [1.5, 6500]}))
    assert lighting_scalars(plain) == {"city": (1.5, 6500.0)}


@pytest.mark.parametrize(
    "text",
    ['{"schema": "t3d-lighting-scalars/0", "maps": {}}', '{"city": [1]}', "[1, 2]", "{"],
)
def test_bad_scalars_file_is_a_typed_error(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(AuditError, match="cannot read lighting scalars") as info:
        lighting_scalars(path)
    assert str(path) in str(info.value)


def test_compare_reports_changed_values_and_hashes():
    doc = _fixture()
    assert compare(doc, doc) == []
    changed = json.loads(json.dumps(doc))
    changed["maps"]["night"]["sha256"] = "0" * 64
    changed["maps"]["city"]["conventions"]["study"]["ev"] += 0.01
    problems = compare(changed, doc)
    assert any("night: EXR sha256 changed" in p for p in problems)
    assert any("city [study] ev" in p for p in problems)


# -- report wiring ----------------------------------------------------------------------------


def _records():
    from harness.stats.synthetic import SyntheticSpec, synthetic_records

    spec = SyntheticSpec(evaluators=2, prompt_free=0, prompts=4, templates=6, render_levels=8,
                         failure_rate=0.0, seed=3)
    return synthetic_records(spec)


def test_audit_inputs_default_to_the_committed_scalars():
    assert audit_inputs(_records())["lighting_scalars"] == lighting_scalars()


def test_missing_default_file_warns_and_gives_no_scalars(tmp_path, monkeypatch):
    import harness.measure.audit_inputs as inputs

    monkeypatch.setattr(inputs, "DEFAULT_LIGHTING_SCALARS", tmp_path / "absent.json")
    with pytest.warns(UserWarning, match="Table 8 has no EV/CCT"):
        assert inputs.lighting_scalars() == {}
    with pytest.raises(AuditError, match="cannot read lighting scalars"):
        inputs.lighting_scalars(tmp_path / "absent.json")  # an explicit path must exist


def test_report_fills_table8_by_default(tmp_path):
    from harness.protocol.records import write_records

    records = _records()
    files = [str(write_records(g.reset_index(drop=True), tmp_path / f"{n}.csv"))
             for n, g in records.groupby("evaluator")]
    assert main(["report", "--scores", *files, "--out", str(tmp_path / "out"),
                 "--bootstrap", "0"]) == 0
    with open(tmp_path / "out" / "tables" / "table08_lighting.csv", newline="") as fh:
        rows = {r[0]: r for r in list(csv.reader(fh))[1:]}
    lit = sorted(set(records.loc[records["factor"] == "lighting", "level"]))
    assert sorted(rows) == lit
    for level in lit:
        assert float(rows[level][1]) == pytest.approx(STUDY_TABLE8[level][0], abs=0.01)
        assert float(rows[level][2]) == pytest.approx(STUDY_TABLE8[level][1], abs=1)
    note = (tmp_path / "out" / "tables" / "table08_lighting.md").read_text()
    assert "Pearson r with EV" in note


# -- recomputed from Blender's files ----------------------------------------------------------


@pytest.mark.slow
def test_committed_fixture_matches_the_installed_blender():
    pytest.importorskip("bpy")
    fresh = lt.bundled_lighting_scalars()
    problems = compare(_fixture(), fresh)
    assert not problems, (
        f"Blender {fresh['blender_version']} maps differ from the committed fixture; after "
        f"checking, run `t3d-audit lighting --out fixtures/lighting_scalars.json`: {problems}"
    )


def test_lighting_without_bpy_is_one_clear_line(monkeypatch, capsys, tmp_path):
    """The bpy part lives in harness.render.light_maps: reading a map without bpy is a typed
    error there (it used to be an ImportError unless the command had checked first)."""
    import sys

    monkeypatch.setitem(sys.modules, "bpy", None)  # makes `import bpy` raise ImportError
    with pytest.raises(lt.LightingMapError, match="bpy is not importable"):
        lt.bundled_lighting_scalars()
    with pytest.raises(lt.LightingMapError, match="bpy is not importable"):
        lt.read_exr_rgb(tmp_path / "x.exr")
    assert main(["lighting"]) == 2
    assert "bpy is not importable" in capsys.readouterr().err
