"""Single-object scenes are measured from their own default view (``harness.protocol.configurations.KindView``).

Rooms keep the study's c0 (top-down, "A top-down view of …", yaw swept at 45° pitch). A single
generated object is seen at c0 from the front, 30° above the horizon (pitch 60), captioned with
the prompt verbatim, and its yaw sweep turns at that pitch. Factor levels keep their literal
meaning for both kinds.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.errors import ProtocolError, SceneError
from harness.measure.audit_inputs import default_template_of
from harness.measure.plan import build_plan
from harness.protocol.configurations import (
    BLOCK,
    IDENTITY_TEMPLATE_ID,
    OBJECT_C0_PITCH_DEG,
    YAW_PITCH_DEG,
    kind_view,
)
from harness.protocol.levels import parse_cell
from harness.protocol.profiles import get_profile, load_profiles
from harness.render.job_plan import render_plan
from harness.scenes.load import parse_scene
from harness.scenes.sceneset import SceneSet
from tests._scene_helpers import scene_doc, write_assets


def _object_scene(root: Path, generator: str, prompt_id: str, prompt: str):
    doc = scene_doc()
    doc.update(schema="t3d-scene/2", kind="object", ground=True, id=f"{generator}-{prompt_id}",
               generator=generator, prompt_id=prompt_id, prompt=prompt)  # fmt: skip
    return parse_scene(json.dumps(doc).encode(), path="x", root=root)


def test_rooms_keep_the_study_protocol() -> None:
    smoke = get_profile("smoke")
    assert smoke.for_scene_kind("room") is smoke
    assert smoke.c0.pitch_deg == 0.0 and smoke.c0_template == "a.top-down.view.of.-"
    yaw = smoke.configuration("yaw", "180").render
    assert (yaw.pitch_deg, yaw.yaw_deg) == (YAW_PITCH_DEG, 180.0)


def test_object_scenes_are_seen_from_the_front_at_30_degrees_elevation() -> None:
    smoke = get_profile("smoke")
    obj = smoke.for_scene_kind("object")
    assert obj.c0 == replace(smoke.c0, pitch_deg=60.0)
    base = obj.configuration("baseline", "c0")
    assert base.template == IDENTITY_TEMPLATE_ID
    # levels keep their literal meaning: pitch=0 is top-down for an object too
    assert obj.configuration("pitch", "0").render.pitch_deg == 0.0
    assert obj.configuration("yaw", "180").render.pitch_deg == OBJECT_C0_PITCH_DEG
    # yaw=0 at the c0 pitch is c0 itself: one render, not two
    assert obj.configuration("yaw", "0").render == obj.c0
    # smoke: c0 + 2 resolutions + 2 focal lengths + 2 lightings + pitch 0/45/90 (none is the
    # object c0) + yaw 180 (yaw 0 is c0) = 11; rooms have 10 (pitch 0 is c0, yaw 0 is pitch 45)
    assert len(obj.render_configs()) == 11 and len(smoke.render_configs()) == 10
    assert obj != smoke and hash(obj) != hash(smoke)


@given(st.sampled_from(sorted(load_profiles())), st.sampled_from(["room", "object"]))
def test_kind_changes_only_the_default_view(name: str, kind: str) -> None:
    """Every configuration of a profile differs from the room one only in the c0 pitch, the
    pitch of the yaw sweep and the baseline template; levels, probes and prompts stay."""
    room = get_profile(name)
    other = room.for_scene_kind(kind)
    assert other.levels == room.levels and other.probes == room.probes
    assert other.prompts == room.prompts and other.bootstrap == room.bootstrap
    view = kind_view(kind)
    for a, b in zip(room.configurations(), other.configurations(), strict=True):
        assert (a.factor, a.level, a.background, a.paraphrase) == (b.factor, b.level, b.background, b.paraphrase)
        cell = dict(parse_cell(a.level)) if a.factor == BLOCK else {}
        if a.factor == "pitch":
            expect_pitch = float(a.level)
        elif "pitch" in cell:  # a factorial cell crossing pitch keeps its literal pitch
            expect_pitch = float(cell["pitch"])
        elif a.factor == "yaw":
            expect_pitch = view.yaw_pitch_deg
        else:
            expect_pitch = view.c0_pitch_deg
        assert b.render == replace(a.render, pitch_deg=expect_pitch)
        if a.factor != "template" and "template" not in cell:
            assert b.template == view.c0_template


def test_unknown_kind_is_a_clear_error() -> None:
    with pytest.raises(ProtocolError, match="unknown scene kind 'hall'"):
        get_profile("smoke").for_scene_kind("hall")


def test_a_mixed_scene_set_is_refused_with_what_to_do(tmp_path: Path) -> None:
    write_assets(tmp_path)
    obj = _object_scene(tmp_path, "g", "p1", "a red chair")
    room = replace(obj, kind="room", id="g-p2", prompt_id="p2")
    sset = SceneSet.from_scenes(tmp_path, [obj, room])
    with pytest.raises(SceneError, match="mixes scene kinds") as err:
        _ = sset.kind
    assert "separate scene sets" in str(err.value)
    assert SceneSet.from_scenes(tmp_path, [obj]).kind == "object"


def test_object_plan_captions_c0_with_the_prompt_and_renders_at_its_view(tmp_path: Path) -> None:
    write_assets(tmp_path)
    scenes = [_object_scene(tmp_path, g, "p1", "a red chair") for g in ("a", "b")]
    sset = SceneSet.from_scenes(tmp_path, scenes)
    profile = get_profile("smoke").for_scene_kind(sset.kind)
    plan = build_plan(sset, profile)
    base = [r for r in plan.rows if r.factor == "baseline"]
    assert [r.caption for r in base] == ["a red chair", "a red chair"]
    assert {r.image.render.pitch_deg for r in base} == {60.0}
    templ = {r.level: r.caption for r in plan.rows if r.factor == "template" and r.group == "a-p1"}
    assert templ["a.top-down.view.of.-"] == "A top-down view of a red chair"
    jobs = render_plan(profile, scenes)
    assert {(j.cfg.pitch_deg, j.cfg.yaw_deg) for j in jobs if j.probe is None} == {
        (60.0, 0.0), (0.0, 0.0), (45.0, 0.0), (90.0, 0.0), (60.0, 180.0)}  # fmt: skip


def _records(baseline: str, templates: dict[str, str]) -> pd.DataFrame:
    rows = [("g", "p", "baseline", "c0", baseline)]
    rows += [("g", "p", "template", lvl, cap) for lvl, cap in templates.items()]
    return pd.DataFrame(rows, columns=["generator", "prompt_id", "factor", "level", "caption"])


def test_default_template_is_read_from_the_records() -> None:
    """The template-gain statistic compares against the template c0 was captioned with."""
    room = _records("A top-down view of x", {"a.top-down.view.of.-": "A top-down view of x",
                                             "-.-.-.-.-": "x"})  # fmt: skip
    assert default_template_of(room) == "a.top-down.view.of.-"
    obj = _records("x", {"a.top-down.view.of.-": "A top-down view of x", "-.-.-.-.-": "x"})
    assert default_template_of(obj) == "-.-.-.-.-"
    assert default_template_of(_records("x", {})) == "a.top-down.view.of.-"  # nothing measured


def test_cards_state_the_object_view() -> None:
    from harness.cards.assemble import declared_views

    obj = get_profile("smoke").for_scene_kind("object")
    views = declared_views(dict(obj.levels), obj.c0, obj.view.yaw_pitch_deg)
    assert {"pitch_deg": 60.0, "yaw_deg": 180.0} in views
    assert {"pitch_deg": 45.0, "yaw_deg": 180.0} not in views


def _object_set(root: Path) -> Path:
    """The tiny scene set rewritten as single-object scenes (schema 2, ``kind: object``)."""
    from harness.scenes.set_manifest import build_manifest, write_manifest
    from harness.testing import write_tiny_scene_set

    write_tiny_scene_set(root)
    paths = sorted((root / "scenes").glob("*.json"))
    for path in paths:
        doc = json.loads(path.read_text())
        doc.update(schema="t3d-scene/2", kind="object", ground=True)
        path.write_text(json.dumps(doc))
    write_manifest(root, build_manifest(root, paths))
    return root


def test_an_object_set_audits_into_a_valid_report(tmp_path: Path) -> None:
    """End to end on single objects: the plan, records, cards and manifest carry the object
    view, the probes that do not apply are named in the manifest, and the report validates
    (regression: validate counted those probes as missing rows)."""
    from harness.report.validation import validate_report
    from harness.report.writer import write_report
    from harness.run.outputs import run_result
    from harness.testing import TinySpec
    from tests._audit_project import tiny_session

    _object_set(tmp_path / "scenes")  # where tiny_session looks
    session = tiny_session(tmp_path, [TinySpec("tiny-grid")])
    assert session.inputs.profile.scene_kind == "object" and session.inputs.profile.c0.pitch_deg == 60.0
    records = session.record_cache.records("tiny-grid")
    base = records[records["factor"] == "baseline"]
    assert sorted(base["caption"].unique()) == sorted(session.inputs.scene_set.prompts.values())
    assert set(records.loc[records["factor"] == "probe", "level"]) <= {"worst_objects"}
    written = write_report(run_result(session, ["tiny-grid"]), [])
    manifest = json.loads((written.directory / "manifest.json").read_text())
    assert manifest["options"]["card_facts"]["scenes"]["kind"] == "object"
    na = manifest["options"]["probes_not_applicable"]
    assert len(na) == len(session.inputs.scene_set.scenes)
    assert all({"keep_half", "biggest_only", "scrambled"} <= set(v) for v in na.values())
    card = json.loads((written.directory / "cards" / "tiny-grid.json").read_text())
    assert card["render_protocol"]["camera"]["pitch_deg"] == 60.0
    assert "object's box" in card["render_protocol"]["camera"]["framing"]
    assert card["caption_protocol"]["template"] == "{prompt}"
    assert validate_report(written.directory) == []
