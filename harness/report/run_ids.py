"""Run ids: ``--audit-run-id``, else ``<profile>-<12 hex>`` derived from the run's inputs only.

``t3d-audit validate --deep`` re-derives the id from a report's manifest
(:mod:`harness.report.rebuild`), so :func:`derived_run_id` takes plain values.
"""

from __future__ import annotations

from harness.core.hashing import sha256_json


def derived_run_id(
    *,
    profile: str,
    plan: str,
    evaluators: dict[str, str],
    renderer: str,
    bootstrap: int,
    seed: int,
    thresholds: dict[str, object],
    human: dict[str, object] | None = None,
    saved_levels: dict[str, object] | None = None,
) -> str:
    """``<profile>-<12 hex>`` over the run's inputs (``evaluators``: id -> identity hash;
    ``thresholds``: ``Thresholds.to_dict()``; ``human``: the human data's source facts, only
    with ``--audit-human``, so runs without it keep their ids; ``saved_levels``: the saved
    levels of ``--audit-profile-file``, only when there are some); ``validate --deep``
    re-derives it from a manifest."""
    inputs: dict[str, object] = {
        "profile": profile,
        "plan": plan,
        "evaluators": dict(sorted(evaluators.items())),
        "renderer": renderer,
        "bootstrap": bootstrap,
        "seed": seed,
        "thresholds": thresholds,
    }
    if human is not None:
        inputs["human"] = human
    if saved_levels:
        inputs["saved_levels"] = saved_levels
    digest = sha256_json(inputs)
    return f"{profile}-{digest[:12]}"
