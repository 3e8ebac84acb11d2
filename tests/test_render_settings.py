"""Renderer settings read from the environment."""

from __future__ import annotations

import pytest

from harness.core.errors import RenderError
from harness.render.settings import THREADS_ENV, render_threads


@pytest.mark.parametrize(("raw", "want"), [(None, 0), ("", 0), ("0", 0), ("1", 1), (" 3 ", 3)])
def test_render_threads(monkeypatch, raw, want):
    if raw is None:
        monkeypatch.delenv(THREADS_ENV, raising=False)
    else:
        monkeypatch.setenv(THREADS_ENV, raw)
    assert render_threads() == want


@pytest.mark.parametrize("raw", ["-2", "-3"])
def test_render_threads_rejects_negative_counts(monkeypatch, raw):
    # regression: a negative count was taken as 0 (Cycles' automatic) silently
    monkeypatch.setenv(THREADS_ENV, raw)
    with pytest.raises(RenderError, match=f"{THREADS_ENV}='{raw}' is not a whole number >= 0"):
        render_threads()


def test_render_threads_rejects_words(monkeypatch):
    monkeypatch.setenv(THREADS_ENV, "two")
    with pytest.raises(RenderError, match=f"{THREADS_ENV}='two' is not a whole number"):
        render_threads()


@pytest.mark.parametrize(("cores", "processes", "want"), [(8, 2, 4), (8, 3, 2), (2, 4, 1), (None, 2, 1), (4, 0, 4)])
def test_core_share(monkeypatch, cores, processes, want):
    import os

    from harness.render.settings import core_share

    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert core_share(processes) == want
