"""Render keys of the search's settings (docs/search.md "The space"): two different renders
never share a key, and one render is never keyed twice, whatever form its numbers take
(1, 1.0, 1.000001, -0.0, a whole number in a float field)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocol.configurations import RenderConfig
from harness.protocol.profiles import get_profile
from harness.render.cache import render_key
from harness.search.space import space_for

SPACE = space_for(get_profile("smoke"))
FLOAT_AXES = [a for a in SPACE.axes if a.domain.kind == "float"]
RENDER_AXES = [i for i, a in enumerate(SPACE.axes) if a.domain.on == "render"]
FLOAT_FIELDS = [f.name for f in dataclasses.fields(RenderConfig) if f.type == "float"]
unit_points = st.lists(st.floats(0.0, 1.0), min_size=len(SPACE.axes), max_size=len(SPACE.axes))


def _key(point) -> str:
    return render_key("scene-identity", SPACE.configuration(point).render)


@given(u=unit_points, v=unit_points)
@settings(max_examples=200, deadline=None)
def test_two_points_share_a_render_key_exactly_when_their_render_settings_print_alike(u, v):
    p, q = SPACE.from_unit(u), SPACE.from_unit(v)
    same_render = [p[i] for i in RENDER_AXES] == [q[i] for i in RENDER_AXES]
    assert (_key(p) == _key(q)) == same_render


@given(data=st.data())
@settings(max_examples=200, deadline=None)
def test_one_printed_value_is_one_key_whatever_form_the_number_takes(data):
    """1, 1.0, "1", "1.000001" and values within half a printed digit of each other are one
    point and one render."""
    axis = data.draw(st.sampled_from(FLOAT_AXES))
    d = axis.domain
    x = data.draw(st.floats(d.low, d.high))
    step = 10.0 ** -d.digits
    printed = d.text(x)
    inward = -1.0 if float(printed) + step * 1e-4 > d.high else 1.0  # a text past the bound is refused
    forms = [float(printed), printed, printed + ("0" if "." in printed else ".0"), f"{float(printed) + inward * step * 1e-4:.12f}"]
    if float(printed).is_integer():
        forms.append(int(float(printed)))
    points = {SPACE.point({axis.name: f}) for f in forms}
    assert len(points) == 1
    (point,) = points
    keys = {_key(point), _key(SPACE.parse(SPACE.text(point)))}
    assert len(keys) == 1


@given(field=st.sampled_from(FLOAT_FIELDS), whole=st.integers(-360, 20000))
def test_a_whole_number_or_negative_zero_in_a_float_field_is_keyed_as_its_float(field, whole):
    assert RenderConfig(**{field: whole}).key == RenderConfig(**{field: float(whole)}).key
    assert RenderConfig(**{field: -0.0}).key == RenderConfig(**{field: 0.0}).key


def test_each_printed_step_of_a_float_axis_is_its_own_render():
    for axis in FLOAT_AXES:
        if axis.domain.on != "render":
            continue
        d = axis.domain
        step = 10.0 ** -d.digits
        a, b = SPACE.point({axis.name: d.low}), SPACE.point({axis.name: d.low + step})
        assert a != b and _key(a) != _key(b), axis.name
