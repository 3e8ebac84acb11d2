"""What a search is asked: a :class:`~harness.search.pipeline.SearchRequest` whose options not given
come from the profile's ``search`` block (docs/search.md), and the thresholds the project's
``pyproject.toml`` layers over the built-in ones, as an audit run reads them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TypeVar

from harness.checks.thresholds import Thresholds, layered
from harness.core.errors import AuditError
from harness.protocol import profiles
from harness.search.pipeline import SearchRequest, Split

_T = TypeVar("_T")


def _given_else(given: _T | None, declared: _T) -> _T:
    return declared if given is None else given


def profile_request(
    profile: str,
    evaluator: str,
    *,
    objective: str | None = None,
    budget: int | None = None,
    seed: int | None = None,
    batch: int = 8,
    wall_time: float | None = None,
    split: Split | None = None,
    axes: tuple[str, ...] | None = None,
    flip_points: int | None = None,
    attribute: bool = True,
) -> SearchRequest:
    """The search request of ``evaluator`` on ``profile``: each option given (not ``None``),
    else the profile's ``search`` block, else the built-in default. ``wall_time`` in seconds."""
    block = profiles.get_profile(profile).search or profiles.SearchBlock()
    chosen_split = split or (Split(*block.split) if block.split else None)
    return SearchRequest(evaluator, profile, _given_else(objective, block.objective),
                         _given_else(budget, block.budget), _given_else(seed, block.seed), batch,
                         wall_time, chosen_split, axes, _given_else(flip_points, block.flip_points),
                         attribute=attribute)  # fmt: skip


def project_thresholds(pyproject: Path) -> Thresholds:
    """The built-in thresholds with ``[tool.t3d-audit.thresholds]`` of ``pyproject`` (when it
    exists) layered over them, as an audit run reads them."""
    table = None
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise AuditError(f"cannot read {pyproject}: {exc}", where=str(pyproject)) from None
        table = data.get("tool", {}).get("t3d-audit", {}).get("thresholds")
    return layered(table, where=f"{pyproject}: [tool.t3d-audit.thresholds]")
