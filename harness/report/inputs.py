"""Inputs of :func:`harness.stats.audit.compute_audit` that come from data files, not records.

``compute_audit`` is pure; the caption grammar (template slot choices, default template)
is read here so the CLI and the pytest plugin pass the same inputs:
``compute_audit(records, bootstrap=B, seed=S, **audit_inputs(records))``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from harness.errors import AuditError


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


def audit_inputs(records: pd.DataFrame) -> dict[str, Any]:
    """``template_slots`` and ``default_template`` keyword arguments for ``compute_audit``."""
    from harness.captions import DEFAULT_TEMPLATE_ID

    levels = records.loc[records["factor"] == "template", "level"].unique()
    return {"template_slots": template_slots(levels), "default_template": DEFAULT_TEMPLATE_ID}
