"""Background compositing: straight-alpha "over" in integers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from harness.core.errors import RenderError
from harness.protocol.configurations import background_rgb
from harness.render.composite import composite
from harness.vocab.factors import CHROMATIC_RGB, GRAYS

LEVELS = (*GRAYS, *CHROMATIC_RGB)


def test_hand_computed_pixels():
    rgba = np.array([[[200, 100, 0, 255], [200, 100, 0, 0], [200, 100, 0, 128]]], dtype=np.uint8)
    out = composite(rgba, (0, 0, 255))
    assert out.dtype == np.uint8 and out.shape == (1, 3, 3)
    assert out[0, 0].tolist() == [200, 100, 0]  # opaque: unchanged
    assert out[0, 1].tolist() == [0, 0, 255]  # transparent: the background
    # 128/255 of (200, 100, 0) over (0, 0, 255): round(100.39), round(50.20), round(127.00)
    assert out[0, 2].tolist() == [100, 50, 127]


images = arrays(np.uint8, st.tuples(st.integers(1, 6), st.integers(1, 6), st.just(4)))


@settings(max_examples=100, deadline=None)
@given(images, st.sampled_from(LEVELS), st.sampled_from(LEVELS))
def test_background_changes_only_translucent_pixels(rgba, a, b):
    out_a = composite(rgba, background_rgb(a))
    out_b = composite(rgba, background_rgb(b))
    opaque = rgba[..., 3] == 255
    np.testing.assert_array_equal(out_a[opaque], rgba[..., :3][opaque])
    np.testing.assert_array_equal(out_a[opaque], out_b[opaque])


@settings(max_examples=100, deadline=None)
@given(images, st.tuples(*[st.integers(0, 255)] * 3))
def test_result_between_colour_and_background(rgba, rgb):
    out = composite(rgba, rgb).astype(int)
    lo = np.minimum(rgba[..., :3], np.array(rgb)).astype(int)
    hi = np.maximum(rgba[..., :3], np.array(rgb)).astype(int)
    assert np.all(out >= lo) and np.all(out <= hi)


def test_rejects_bad_input():
    with pytest.raises(RenderError):
        composite(np.zeros((2, 2, 3), np.uint8), (0, 0, 0))
    with pytest.raises(RenderError):
        composite(np.zeros((2, 2, 4), np.float32), (0, 0, 0))
    with pytest.raises(RenderError):
        composite(np.zeros((2, 2, 4), np.uint8), (0, 0, 300))
