"""Which evaluators a run audits: ids and globs over the registry and the plugin's extra specs."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

from harness.errors import EvaluatorError
from harness.evaluators import registry
from harness.evaluators.base import EvaluatorSpec
from harness.ids import check_evaluator_id


def hook_specs(objects: Iterable[object]) -> list[object]:
    """What ``pytest_audit_evaluators`` hooks returned, with each
    :class:`~harness.evaluators.scorer.Scorer` class or instance registered (so it can be
    built) and replaced by its spec; other objects (specs, duck-typed test doubles) pass as
    they are."""
    from harness.evaluators.scorer import Scorer

    out: list[object] = []
    for obj in objects:
        if isinstance(obj, Scorer) or (isinstance(obj, type) and issubclass(obj, Scorer)):
            registry.register(obj, replace=True)
            obj = (type(obj) if isinstance(obj, Scorer) else obj).spec()
        out.append(obj)
    return out


def select_evaluators(
    patterns: Sequence[str], extra: Iterable[EvaluatorSpec] = ()
) -> list[EvaluatorSpec]:
    """Specs matching ids/globs in ``patterns``, sorted by id.

    ``extra`` specs (from ``pytest_audit_evaluators``; anything shaped like an
    :class:`EvaluatorSpec`) are matched with the same patterns and win over registry specs with
    the same id. Without patterns: the extra specs if any, else every registered evaluator whose
    weights (or API key) are available locally. An unknown pattern raises
    :class:`~harness.errors.EvaluatorError` with close-match hints.
    """
    extra = list(extra)
    for spec in extra:  # hook specs may be duck-typed: their ids are checked here too
        check_evaluator_id(getattr(spec, "id", None), where="pytest_audit_evaluators")
    registered = registry.all_specs()
    chosen: dict[str, EvaluatorSpec] = {}
    if not patterns:
        pool = extra or [s for s in registered if s.weights_available()]
        chosen = {s.id: s for s in pool}
    extra_ids = {e.id for e in extra}
    for pattern in patterns:
        pattern = pattern.strip()
        hits = [s for s in extra if fnmatch.fnmatchcase(s.id, pattern)]
        hits += [s for s in registered if fnmatch.fnmatchcase(s.id, pattern) and s.id not in extra_ids]
        if not hits:
            registry.select([pattern])  # raises EvaluatorError with close-match hints
        chosen.update((s.id, s) for s in hits)
    if not chosen:
        raise EvaluatorError(
            "no evaluator selected: none has its weights available locally",
            where="--audit-evaluators",
            hint="name evaluators with --audit-evaluators, or run `t3d-audit evaluators` to see "
            "which weights are present",
        )
    return [chosen[k] for k in sorted(chosen)]
