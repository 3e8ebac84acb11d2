"""When no content probe applies (single-object scenes), the discrimination figure and the
probe section say so instead of showing empty axes (regression: an empty plot)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.report.figures import NO_PROBE_NOTE, discrimination_bars, probes_measured

pytest.importorskip("matplotlib")


def _summary(disc: dict) -> dict:
    return {"evaluators": {"clip": {"discrimination": disc}, "vqa": {"discrimination": {}}}}


def test_probes_measured() -> None:
    assert not probes_measured(_summary({}))
    assert not probes_measured(_summary({"scrambled": None}))
    assert probes_measured(_summary({"scrambled": 0.7}))


def test_figure_and_page_say_no_probe_applies(tmp_path: Path) -> None:
    """No empty axes: no discrimination figure is drawn (a stale one is removed), and the
    page's figure list and probe section say why."""
    from harness.report.html.page import _figures
    from harness.report.html.strips import _probe_pairs

    figs = tmp_path / "figures"
    figs.mkdir()
    (figs / "discrimination.png").write_bytes(b"stale")
    assert discrimination_bars(_summary({}), figs / "discrimination.png") is None
    assert not (figs / "discrimination.png").exists()
    discrimination_bars(_summary({"scrambled": 0.7}), figs / "dispersion.png")  # any figure, so the section exists
    data = SimpleNamespace(dir=tmp_path, summary=_summary({}), records={}, evaluators=["clip"],
                           companion=None)
    page = _figures(data)
    assert "No content-probe figure: no probe was measured" in page
    assert "No content probe applies" in _probe_pairs(data, SimpleNamespace(prompts=["p1"]))
    data.summary = _summary({"scrambled": 0.7})
    assert discrimination_bars(data.summary, figs / "discrimination.png") is not None
    assert "No content-probe figure" not in _figures(data)
    assert NO_PROBE_NOTE.split(",")[0] not in _figures(data)
