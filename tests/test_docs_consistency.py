"""The project's docs agree with the project: no pointers outside the repository, and every
evaluator id the docs name in code is one the registry knows (or an obvious placeholder)."""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Spelled in pieces so this file does not match itself.
OUTSIDE_POINTERS = ("DESIGN" + ".md", ".." + "/shared")

# Example ids the docs use for evaluators the reader registers or releases themselves.
PLACEHOLDER_IDS = {
    "clip-l14-local",  # docs/evaluators.md: a registered copy with local weights
    "clip-v1",  # docs/release-gate.md: two releases of a user's evaluator
    "clip-v2",
    "planted-offgrid",  # docs/search.md: the search's known answer, outside the registry
    "planted-jitter",  # docs/evaluators.md: the repeatability check's known answer, outside the registry
    "planted-boundary",  # docs/intervals.md: the interval policy's known answers, outside the registry
    "planted-noise",
    "planted-preset",  # docs/claims.md: the claim's preset known answer, outside the registry
}


def project_files() -> list[Path]:
    """Tracked files (and untracked, not ignored ones) of the checkout; every file outside
    git metadata and caches when this is not a git checkout."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True, timeout=60,
        ).stdout
        files = [ROOT / p for p in out.decode("utf-8").split("\0") if p]
    except (OSError, subprocess.SubprocessError):
        skip = {".git", ".tox", ".audit_cache", "reports", "__pycache__", ".venv"}
        files = [p for p in ROOT.rglob("*") if not skip & set(p.relative_to(ROOT).parts)]
    return sorted(p for p in files if p.is_file())


def test_no_project_file_points_at_the_design_file_outside_the_repository():
    hits = []
    for path in project_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary assets, weights
        for n, line in enumerate(text.splitlines(), 1):
            if any(p in line for p in OUTSIDE_POINTERS):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not hits, "point at docs/formats.md (in the repository) instead:\n" + "\n".join(hits)


def registered_ids() -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "harness", "evaluators", "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=120,
    )
    return [entry["id"] for entry in json.loads(done.stdout)]


def doc_files() -> list[Path]:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    docs += sorted(p for p in (ROOT / "fixtures").rglob("README.md"))
    docs += sorted((ROOT / "harness").rglob("*.md"))
    return [p for p in docs if p.is_file()]


_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_SPAN = re.compile(r"`([^`\n]+)`")


def code_in(markdown: str) -> list[str]:
    """The fenced code blocks and inline code spans of a Markdown text."""
    blocks = [m.group(0) for m in _FENCE.finditer(markdown)]
    prose = _FENCE.sub("", markdown)
    return blocks + [m.group(1) for m in _SPAN.finditer(prose)]


def id_mentions(code: str, families: set[str]) -> list[str]:
    """Tokens of ``code`` shaped like an evaluator id of a registered family: a family prefix
    (the part of a registered id before its first '-'), then '-' and more id characters;
    globs (``*``, ``?``) included. A token inside a longer name (``t3d-ref-sigmoid``) or after
    a ``/`` (Hugging Face repos such as ``Salesforce/blip2-itm-vit-g``, paths) is not a mention."""
    prefix = "|".join(sorted(map(re.escape, families), key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w/.-])(?:{prefix})-[a-z0-9*?]+(?:-[a-z0-9*?]+)*(?![\w-])")
    return pattern.findall(code)


def known(token: str, ids: list[str]) -> bool:
    names = [*ids, *PLACEHOLDER_IDS]
    if any(c in token for c in "*?"):
        return any(fnmatch.fnmatchcase(i, token) for i in ids)
    # a parametrized test id appends the metric: test_no_regression[clip-v2-rho-pitch]
    return token in names or any(token.startswith(f"{n}-") for n in PLACEHOLDER_IDS)


@pytest.fixture(scope="module")
def ids() -> list[str]:
    return registered_ids()


def test_the_scan_finds_ids_and_wrong_ids(ids):
    families = {i.split("-")[0] for i in ids if "-" in i}
    code = code_in("Run `test_x[clip-vit-b-32]` or\n```toml\n\"ref-*\" = 1\n```\nnot `t3d-ref-sigmoid` or `Salesforce/blip-vqa-base`.")
    assert sorted(id_mentions(" ".join(code), families)) == ["clip-vit-b-32", "ref-*"]
    assert not known("clip-vit-b-32", ids) and known("clip-vit-b32", ids) and known("ref-*", ids)
    assert not known("nope-*", ids)


def test_every_evaluator_id_in_the_docs_is_registered(ids):
    families = {i.split("-")[0] for i in ids if "-" in i}
    assert {"clip", "ref", "planted"} <= families
    seen, unknown = 0, []
    for path in doc_files():
        for code in code_in(path.read_text(encoding="utf-8")):
            for token in id_mentions(code, families):
                seen += 1
                if not known(token, ids):
                    unknown.append(f"{path.relative_to(ROOT)}: `{token}`")
    assert seen > 20  # the scan reads the docs (Table 12 alone names 20 ids)
    assert not unknown, (
        "evaluator ids the registry does not know (see `t3d-audit evaluators`):\n"
        + "\n".join(unknown)
    )


def test_every_option_and_command_is_documented():
    """Each ``--audit-*`` option is in the README and the options table of
    docs/writing-an-audit.md; each ``t3d-audit`` command is in the README's command list."""
    from harness.cli import COMMANDS
    from harness.run.options import OPTIONS, flag

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = (ROOT / "docs" / "writing-an-audit.md").read_text(encoding="utf-8")
    assert [flag(d) for d in OPTIONS if f"`{flag(d)}`" not in readme] == []
    assert [flag(d) for d in OPTIONS if f"| `{flag(d)}` |" not in table] == []
    assert [c for c in COMMANDS if f"`{c}`" not in readme] == []
