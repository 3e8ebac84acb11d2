"""Protocol: Table 11 levels, c0, the 387-configuration shared family, profiles, CLI."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest

from harness.captions import (
    BEST_PAPER_TEMPLATE_ID,
    DEFAULT_TEMPLATE_ID,
    IDENTITY_TEMPLATE_ID,
)
from harness.cli import main
from harness.core.errors import ProtocolError
from harness.protocol.configurations import BASELINE, YAW_PITCH_DEG, RenderConfig, factors
from harness.protocol.levels import check_level
from harness.protocol.profiles import _parse_profile, get_profile, load_profiles, shared_family
from harness.vocab.factors import factor as factor_spec
from harness.vocab.probes import probe_names

#: The study's published level counts (Table 11), by factor: the registry may hold more
#: factors than these eight, and these must keep their counts.
TABLE_11_COUNTS = {
    "resolution": 9,
    "focal_length": 7,
    "lighting": 8,
    "background": 10,
    "pitch": 7,
    "yaw": 8,
    "template": 337,
    "paraphrase": 11,
}


STUDY_SHARED = [f for f in TABLE_11_COUNTS if factor_spec(f).shared]


def test_factor_levels_match_table_11():
    """The study's eight factors keep Table 11's levels and defaults, in record order (a factor
    registered later follows them); every factor's default is one of its distinct levels."""
    fs = factors()
    assert list(fs)[: len(TABLE_11_COUNTS)] == list(TABLE_11_COUNTS)
    assert {name: len(fs[name].levels) for name in TABLE_11_COUNTS} == TABLE_11_COUNTS
    assert {name: fs[name].default for name in TABLE_11_COUNTS} == {
        "resolution": "512",
        "focal_length": "50",
        "lighting": "city",
        "background": "255",
        "pitch": "0",
        "yaw": "0",
        "template": DEFAULT_TEMPLATE_ID,
        "paraphrase": "p0",
    }
    for f in fs.values():
        assert f.default in f.levels
        assert len(set(f.levels)) == len(f.levels)
    assert [f for f in TABLE_11_COUNTS if f != "paraphrase"] == STUDY_SHARED
    assert sum(TABLE_11_COUNTS[f] for f in STUDY_SHARED) == 386


def test_paper_shared_family_is_387():
    family = shared_family("paper")
    assert len(family) == 387
    assert family[0].factor == BASELINE and family[0].level == "c0"
    assert Counter(c.factor for c in family[1:]) == {f: TABLE_11_COUNTS[f] for f in STUDY_SHARED}
    assert len({c.id for c in family}) == 387
    assert len({c.hash for c in family}) == 387  # default-equivalent levels stay distinct protocols
    paper = get_profile("paper")
    assert len(paper.configurations()) == 387 + 11  # + paraphrase levels
    assert paper.shared_configurations() == family


def test_paper_c0_and_ofat_sweeps():
    paper = get_profile("paper")
    base = paper.configurations()[0]
    assert base.render == replace(RenderConfig(), samples=paper.c0.samples)
    assert base.render.resolution_px == 512 and base.render.focal_length_mm == 50.0
    assert (base.render.lighting, base.render.pitch_deg, base.render.yaw_deg) == ("city", 0.0, 0.0)
    assert (base.background, base.template, base.paraphrase) == ("255", DEFAULT_TEMPLATE_ID, "p0")
    for c in paper.configurations()[1:]:
        changed = {
            k
            for k, v in c.to_dict().items()
            if v != base.to_dict()[k] and k not in ("factor", "level")
        }
        if c.factor == "yaw":
            assert c.render.pitch_deg == YAW_PITCH_DEG and c.render.yaw_deg == float(c.level)
        elif c.factor in ("background", "template", "paraphrase"):
            assert c.render == base.render  # composite/caption levels reuse the c0 render
            assert changed <= {c.factor}
        else:
            assert changed <= {"render"}
    # distinct renders: c0 + non-default resolutions, focal lengths, lightings, pitches, and
    # the yaws at 45° pitch except yaw 0, which is the pitch=45 render.
    assert len(paper.render_configs()) == 1 + 8 + 6 + 7 + 6 + 7


def test_configuration_id_and_hash():
    configs = {c.id: c for c in get_profile("paper").configurations()}
    assert configs["baseline"].id == "baseline"
    assert f"template={DEFAULT_TEMPLATE_ID}" in configs
    assert "resolution=512" in configs and "yaw=315" in configs and "paraphrase=p10" in configs
    c = configs["pitch=45"]
    assert c.hash == replace(c).hash and len(c.hash) == 64
    assert replace(c, render=replace(c.render, seed=1)).hash != c.hash
    assert c.hash != configs["yaw=0"].hash  # same render, different protocol


def test_profiles_load_and_smoke_is_small():
    profiles = load_profiles()
    assert list(profiles) == ["smoke", "interactions", "search-smoke", "ci", "default", "paper"]
    smoke = profiles["smoke"]
    templates = smoke.levels["template"]
    assert {DEFAULT_TEMPLATE_ID, IDENTITY_TEMPLATE_ID, BEST_PAPER_TEMPLATE_ID} <= set(templates)
    assert len(templates) <= 8
    assert len(smoke.configurations()) <= 30
    assert len(smoke.render_configs()) <= 12
    assert smoke.prompts is not None and smoke.prompts <= 2
    default = profiles["default"]
    assert len(default.render_configs()) < len(profiles["paper"].render_configs())


@pytest.mark.parametrize(
    ("factor", "level"),
    [
        ("resolution", "513"),
        ("baseline", "512"),
        ("template", "A top-down view of {prompt}"),
        ("paraphrase", "p11"),
        ("probe", "keep-half"),
        ("colour", "red"),
        ("yaw", "45.0"),
    ],
)
def test_unknown_level_or_factor(factor, level):
    with pytest.raises(ProtocolError, match="unknown"):
        check_level(factor, level)


def test_known_levels():
    """Every Table 11 level of every factor, c0 and every probe is accepted (``check_level``
    returns ``None``), and the same names one character off are not."""
    named = [("baseline", "c0"), ("probe", "worst_objects"), ("template", IDENTITY_TEMPLATE_ID),
             ("background", "red")]  # fmt: skip
    every = [(f, level) for f, spec in factors().items() for level in spec.levels]
    every += [("probe", probe) for probe in probe_names()]
    assert set(named) <= set(every) | {("baseline", "c0")}
    assert len(set(every)) == len(every)
    for factor, level in [*named, *every]:
        assert check_level(factor, level) is None, (factor, level)
    for factor, level in named:
        with pytest.raises(ProtocolError, match="unknown level"):
            check_level(factor, level + "x")


def test_unknown_profile():
    with pytest.raises(ProtocolError, match="unknown profile 'fast'"):
        get_profile("fast")
    with pytest.raises(ProtocolError):
        shared_family("fast")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"levels": {"pitch": ["0", "46"]}}, "unknown level '46'"),
        ({"levels": {"hue": "all"}}, "unknown factor 'hue'"),
        ({"levels": {"pitch": "every"}}, 'must be "all" or a list'),
        ({"levels": {"pitch": ["0", "0"]}}, "repeated level"),
        ({"levels": {}, "c0": {"resolution_px": 500}}, "unknown level '500'"),
        ({"levels": {}, "c0": {"fov": 3}}, "malformed profile"),
        ({"levels": {}, "probes": ["melt"]}, "unknown level 'melt'"),
        ({"levels": {}, "speed": 1}, "unknown profile key"),
        ({"levels": {}, "prompts": 0}, "'prompts' must be a positive integer"),
        ({"levels": {}, "prompts": "10"}, "'prompts' must be a positive integer"),
        ({"levels": {}, "bootstrap": 2.5}, "'bootstrap' must be a positive integer"),
        ({}, "malformed profile"),
        ([], "must be an object"),
    ],
)
def test_malformed_profile(data, message):
    with pytest.raises(ProtocolError, match=message) as info:
        _parse_profile("custom", data)
    assert info.value.where.endswith("#/custom") or "#/custom/" in info.value.where


# ---------------------------------------------------------------------------------------------
# CLI


def test_cli_templates_text(capsys):
    assert main(["templates"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 337
    rows = dict(line.split("\t") for line in lines)
    assert rows[DEFAULT_TEMPLATE_ID] == "A top-down view of {prompt}"
    assert rows[IDENTITY_TEMPLATE_ID] == "{prompt}"


def test_cli_templates_json(capsys):
    assert main(["templates", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 337
    by_id = {r["id"]: r for r in rows}
    assert by_id[IDENTITY_TEMPLATE_ID]["text"] == "{prompt}"
    assert by_id[BEST_PAPER_TEMPLATE_ID]["slots"]["frame"] == "a virtual scene:"
    assert set(by_id[DEFAULT_TEMPLATE_ID]["slots"]) == {
        "article",
        "viewpoint",
        "noun",
        "connective",
        "frame",
    }


def test_cli_protocol_json(capsys):
    assert main(["protocol", "--profile", "paper", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 398
    assert sum(r["shared"] for r in rows) == 387
    assert (
        rows[0]["id"] == "baseline" and rows[0]["factor"] == "baseline" and rows[0]["level"] == "c0"
    )
    assert all(len(r["hash"]) == 64 for r in rows)
    assert main(["protocol", "--profile", "paper", "--json", "--shared"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 387


def test_cli_protocol_text(capsys):
    assert main(["protocol", "--profile", "smoke"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t") == ["factor", "level", "configuration_id", "config_hash"]
    assert len(lines) == 1 + len(get_profile("smoke").configurations())
    assert lines[1].split("\t")[:3] == ["baseline", "c0", "baseline"]


def test_cli_protocol_unknown_profile(capsys):
    assert main(["protocol", "--profile", "nope"]) == 2
    assert "unknown profile 'nope'" in capsys.readouterr().err
