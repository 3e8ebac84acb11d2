"""The search's known-answer evaluators in an audit (docs/search.md "Saved levels in an audit").

``planted-offgrid`` (:data:`harness.evaluators.reference.planted.SEARCH_PLANTED`) lives outside
the registry, so no glob, default panel or evaluator listing ever picks it up (and no existing
run moves). ``t3d-audit search --evaluator planted-offgrid`` accepts it by its exact id; so
does an audit (``--audit-evaluators=planted-offgrid``), so that the README's search → save
level → audit runs as printed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def named_known_answers(patterns: Sequence[str], offered: Iterable[object] = ()) -> list[object]:
    """The search's planted evaluators whose exact id is one of ``patterns`` and that
    ``offered`` (a project's hook specs) does not already hold."""
    from harness.evaluators.reference.specs import search_planted_specs

    named = {p.strip() for p in patterns}
    have = {getattr(s, "id", None) for s in offered}
    return [s for s in search_planted_specs() if s.id in named and s.id not in have]
