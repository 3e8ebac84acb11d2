"""Parametrization of audit tests: one test per evaluator, factor, probe, factorial block,
presentation probe or saved level the run's profile and options select. A factor that cannot
change a scene leaves it out (3D Gaussian splats: lighting); one that can change none is a skip."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from harness.core.errors import AuditError
from harness.run.session import audit_session_of


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    names = metafunc.fixturenames
    wanted = [
        n
        for n in ("audit_evaluator", "audit_factor", "audit_shared_factor", "audit_probe", "audit_block",
                  "audit_presentation_probe", "audit_saved_level")
        if n in names
    ]
    if not wanted:
        return
    session = audit_session_of(metafunc.config)
    try:
        if "audit_evaluator" in names:
            metafunc.parametrize(
                "audit_evaluator",
                [pytest.param(e, id=e, marks=pytest.mark.xdist_group(e)) for e in session.inputs.specs],
            )
        profile = session.inputs.profile
        if "audit_factor" in names:
            factors = list(profile.levels)
            metafunc.parametrize("audit_factor", _factor_params(session.inputs.scene_set.scenes, factors))
        if "audit_shared_factor" in names:
            from harness.vocab.factors import shared_factor_names

            shared = [f for f in profile.levels if f in shared_factor_names()]
            metafunc.parametrize("audit_shared_factor", _factor_params(session.inputs.scene_set.scenes, shared, ranks=True))
        if "audit_probe" in names:
            probes = list(profile.probes)
            metafunc.parametrize("audit_probe", probes, ids=probes)
        if "audit_block" in names:
            metafunc.parametrize("audit_block", _block_params(session.inputs.named_profile))
        if "audit_presentation_probe" in names:
            metafunc.parametrize("audit_presentation_probe", _presentation_params(session.options.view_policy))
        if "audit_saved_level" in names:  # --audit-profile-file's saved levels (docs/search.md)
            saved = list(session.searches.saved_levels)
            metafunc.parametrize("audit_saved_level", saved, ids=saved, indirect=True)
    except AuditError as exc:
        problem = str(exc)
    else:
        return
    pytest.fail(f"t3d-audit: {problem}", pytrace=False)  # one clean line, no traceback


def factors_left_out(scenes: Sequence[object]) -> dict[str, int]:
    """``factor -> number of scenes`` it cannot change (``measure_plan.factors_not_applicable``:
    lighting on 3D Gaussian splats). Those scenes have no rows for it, so its statistics and
    checks cover the other scenes only."""
    from harness.measure.plan import factors_not_applicable

    counts: dict[str, int] = {}
    for scene in scenes:
        for factor in factors_not_applicable(scene):
            counts[factor] = counts.get(factor, 0) + 1
    return counts


def _factor_params(scenes: Sequence[object], factors: list[str], ranks: bool = False) -> list[object]:
    """One parameter per factor. Scenes a factor cannot change are left out of that factor's
    checks only (:func:`factors_left_out`; the terminal summary says how many); a factor that
    can change no scene at all is skipped as "not applicable", never checked as a null effect.
    ``ranks``: the checks rank generators, so a factor that leaves fewer than two generators
    with scenes it can change is not applicable either."""
    from harness.measure.plan import factors_not_applicable

    counts = factors_left_out(scenes)
    params = []
    for f in factors:
        marks = ()
        kept = {s.generator for s in scenes if f not in factors_not_applicable(s)}
        if counts.get(f, 0) >= len(scenes):
            reason = (f"not applicable: {f} does not change any of the {counts[f]} scene(s) "
                      "(3D Gaussian splats: baked radiance), which have no rows for it")
            marks = (pytest.mark.skip(reason=reason),)
        elif ranks and f in counts and len(kept) < 2:
            reason = (f"not applicable: ranking generators by {f} needs two; it cannot change "
                      f"{counts[f]} of {len(scenes)} scene(s) (3D Gaussian splats), which leaves "
                      f"{len(kept)} generator")
            marks = (pytest.mark.skip(reason=reason),)
        params.append(pytest.param(f, id=f, marks=marks))
    return params


def left_out_lines(scenes: Sequence[object]) -> list[str]:
    """The terminal's lines for :func:`factors_left_out` (none when every factor applies)."""
    n = len(scenes)
    return [
        f"t3d-audit: {factor} checks leave out {k} of {n} scene(s): 3D Gaussian splats, whose "
        f"baked radiance {factor} cannot change (the other scenes are checked)"
        for factor, k in sorted(factors_left_out(scenes).items()) if k < n
    ]


def _block_params(profile: object) -> list[object]:
    """One parameter per factorial block of ``profile``; without blocks, one skipped
    ``no-blocks`` parameter that says why (a skip, never a pass: the empty gate still sees
    the run's other checks)."""
    if profile.blocks:
        return [pytest.param(b.id, id=b.id) for b in profile.blocks]
    reason = f"not applicable: profile {profile.name!r} declares no factorial blocks"
    return [pytest.param(None, id="no-blocks", marks=pytest.mark.skip(reason=reason))]


def _presentation_params(view_policy: str) -> list[object]:
    """One parameter per presentation probe under ``--audit-view-policy=preset:NAME``; else one
    ``no-preset`` parameter that :func:`harness.plugin.collection.drop_not_presented` removes before the run records its
    collected tests, so runs under other view policies keep their reports byte for byte."""
    from harness.peers.audit_probes import applicable_probes

    probes = applicable_probes(view_policy)
    if probes:
        return [pytest.param(p, id=p) for p in probes]
    reason = "not applicable: the run audits under no protocol preset (--audit-view-policy=preset:NAME)"
    return [pytest.param(None, id=NO_PRESET, marks=pytest.mark.skip(reason=reason))]


NO_PRESET = "no-preset"
