"""Inputs of :func:`harness.stats.audit_stats.compute_audit` that come from data files, not records.

``compute_audit`` is pure; the caption grammar (template slot choices, default template) and
the lighting maps' EV/CCT (Table 8) are read here so the CLI and the pytest plugin pass the
same inputs: ``compute_audit(records, bootstrap=B, seed=S, **audit_inputs(records))``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from harness.core.bounded_input import read_json
from harness.core.errors import AuditError
from harness.core.paths import FIXTURES
from harness.stats.audit_stats import AuditResult, compute_audit

# Written by `t3d-audit lighting --out fixtures/lighting_scalars.json` from Blender's maps.
DEFAULT_LIGHTING_SCALARS = FIXTURES / "lighting_scalars.json"


def template_slots(template_ids: Iterable[str]) -> dict[str, dict[str, str | None]]:
    """Slot choices (grammar slot → token or None) of each known template id."""
    from harness.captions import get_template

    slots: dict[str, dict[str, str | None]] = {}
    for tid in template_ids:
        try:
            slots[str(tid)] = dict(get_template(str(tid)).slots)
        except AuditError:
            continue  # an id outside the grammar simply has no slot breakdown
    return slots


def lighting_scalars(path: str | Path | None = None) -> dict[str, tuple[float, float]]:
    """``{lighting level: (EV, CCT K)}`` for Table 8, read from ``path``.

    ``None`` reads the committed :data:`DEFAULT_LIGHTING_SCALARS` (its default convention);
    when that file is absent (an install without the repository's ``fixtures/``) a warning
    says so and ``{}`` comes back, so Table 8 keeps its z-shifts without EV/CCT.
    Accepted: a ``t3d-lighting-scalars/1`` document as written by ``t3d-audit lighting``, or
    a plain ``{"city": [EV, CCT_K], ...}`` mapping. Raises :class:`AuditError` naming the file.
    """
    from harness.render.light_maps import SCHEMA, scalars_from_document

    if path is None and not DEFAULT_LIGHTING_SCALARS.is_file():
        warnings.warn(
            f"{DEFAULT_LIGHTING_SCALARS} not found: Table 8 has no EV/CCT "
            "(pass --lighting-scalars, or write it with `t3d-audit lighting --out FILE`)",
            stacklevel=2,
        )
        return {}
    path = Path(path) if path is not None else DEFAULT_LIGHTING_SCALARS
    try:
        raw = read_json(path)
        if isinstance(raw, dict) and "schema" in raw:
            return scalars_from_document(raw)
        return {str(k): (float(v[0]), float(v[1])) for k, v in raw.items()}
    except (OSError, ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        raise AuditError(
            f"cannot read lighting scalars: {exc!s}",
            where=path,
            hint=f'expected a {SCHEMA} document (t3d-audit lighting) or {{"city": [EV, CCT_K]}}',
        ) from exc


def audit_inputs(
    records: pd.DataFrame, *, lighting: str | Path | None = None
) -> dict[str, object]:
    """``template_slots``, ``default_template`` and ``lighting_scalars`` keyword arguments for
    ``compute_audit``; ``lighting`` is a scalars file (default: the committed fixture)."""
    levels = records.loc[records["factor"] == "template", "level"].unique()
    return {
        "template_slots": template_slots(levels),
        "default_template": default_template_of(records),
        "lighting_scalars": lighting_scalars(lighting),
    }


def default_template_of(records: pd.DataFrame) -> str:
    """The template id the run captioned c0 with, read from the records themselves: the
    measured template level whose captions equal the baseline captions of the same scenes.

    Rooms are captioned "A top-down view of …" and single objects with the prompt verbatim
    (``harness.protocol.configurations.KindView``); a run that measured no matching template level falls back
    to the study's default.
    """
    from harness.captions import DEFAULT_TEMPLATE_ID

    keys = ["generator", "prompt_id"]
    base = records.loc[records["factor"] == "baseline", [*keys, "caption"]].drop_duplicates(keys)
    templ = records.loc[records["factor"] == "template", [*keys, "level", "caption"]]
    if base.empty or templ.empty:
        return DEFAULT_TEMPLATE_ID
    joined = templ.merge(base, on=keys, suffixes=("", "_c0"))
    same = (joined["caption"] == joined["caption_c0"]).groupby(joined["level"]).all()
    matching = sorted(same.index[same.to_numpy()])
    if DEFAULT_TEMPLATE_ID in matching or not matching:
        return DEFAULT_TEMPLATE_ID
    return str(matching[0])


def audit_result(records: pd.DataFrame, bootstrap: int, seed: int) -> AuditResult:
    """:func:`~harness.stats.audit_stats.compute_audit` of ``records`` with this module's data-file
    inputs: the audit session, the report writer and ``validate --deep`` all compute this."""
    return compute_audit(records, bootstrap=bootstrap, seed=seed, **audit_inputs(records))
