"""docs/claims.md's worked example runs as printed: its command, run from an empty folder,
prints the verdict lines the page shows and writes the Markdown block it shows."""

from __future__ import annotations

import re
import shlex

import pytest

from harness.cli import main
from harness.core.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # the default profile's grid and presets: about 20 s


def _worked_example() -> list[str]:
    """The fenced blocks of the page's "A worked example" section, in order."""
    text = (REPO_ROOT / "docs" / "claims.md").read_text(encoding="utf-8")
    section = text.split("## A worked example", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```\n(.*?)```", section, flags=re.DOTALL)


def test_the_worked_example_prints_and_writes_what_the_page_shows(tmp_path, capsys, monkeypatch):
    command, printed, block = _worked_example()[:3]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("T3D_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    argv = shlex.split(command)
    assert argv[0] == "t3d-audit"
    assert main(argv[1:]) == 0
    lines = capsys.readouterr().out.splitlines()
    shown = printed.splitlines()
    start = next((i for i, line in enumerate(lines) if line == shown[0]), None)
    assert start is not None and lines[start : start + len(shown)] == shown, lines
    written = _card_ids_masked((tmp_path / "claim-out" / "claim.md").read_text(encoding="utf-8"))
    shown = [line for line in _card_ids_masked(block).splitlines() if line]
    assert [line for line in written.splitlines() if line in shown] == shown, written


def _card_ids_masked(text: str) -> str:
    """``text`` with every card ID as ``<card id>``: an ID hashes the whole card, the evaluator's
    source and the render host's Blender among it, so the page's ID is the checked-in code's
    on a machine with the render extra; everything else must match to the character."""
    return re.sub(r"ecc-v1-sha256:[0-9a-f]{64}", "<card id>", text)
