"""Which evaluators a run audits: ids and globs over the registry and the plugin's extra specs."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

from harness.core.errors import AuditError, EvaluatorError
from harness.core.ids import check_evaluator_id
from harness.evaluators import registry
from harness.evaluators.base import EvaluatorSpec
from harness.evaluators.reference.specs import search_planted_specs


def offered_specs(config: object) -> list[object]:
    """The specs every ``pytest_audit_evaluators`` hook of ``config`` (a ``pytest.Config``)
    offers, in pytest's call order, through :func:`hook_specs`.

    An id offered with an identity other than the one the registry holds (the built-in
    catalogue, an entry point, a ``register()`` call) or than another hook's raises
    :class:`~harness.core.errors.EvaluatorError` naming both sources: one id names one identity in
    the score cache, the cards and the reports, so a silent replacement is never made.
    """
    caller = config.hook.pytest_audit_evaluators
    offered: list[tuple[object, str]] = []
    # pluggy calls the last registered implementation first; each is called here on its own
    # so that a clash can name the conftest or plugin that offered the id
    for impl in reversed(caller.get_hookimpls()):
        if impl.hookwrapper or getattr(impl, "wrapper", False):
            continue
        result = impl.function(**{name: config for name in impl.argnames})
        if result is not None and not isinstance(result, (list, tuple)):
            raise EvaluatorError(
                f"{_hook_source(impl)} returned a {type(result).__name__}, not a list",
                hint="return a list of Scorer classes, Scorer instances or evaluator specs",
            )
        offered += [(obj, _hook_source(impl)) for obj in (result or [])]
    for obj, source in offered:
        _check_offered(obj, source)
    _refuse_clashes(offered)
    return hook_specs(obj for obj, _source in offered)


def _hook_source(impl: object) -> str:
    where = getattr(impl.plugin, "__file__", None)
    return f"pytest_audit_evaluators in {where}" if where else (
        f"pytest_audit_evaluators of plugin {impl.plugin_name!r}"
    )


def _identity_hash(obj: object) -> tuple[str | None, str | None]:
    """``(id, identity_hash)`` of a hook's object: a spec, duck-typed spec or Scorer."""
    from harness.evaluators.scorer import Scorer

    if isinstance(obj, Scorer) or (isinstance(obj, type) and issubclass(obj, Scorer)):
        obj = (type(obj) if isinstance(obj, Scorer) else obj).spec()
    return getattr(obj, "id", None), getattr(obj, "identity_hash", None)


def _check_offered(obj: object, source: str) -> None:
    """One object a hook offered: a Scorer class or instance, or anything with a valid ``id``
    (an :class:`EvaluatorError` naming the hook otherwise)."""
    from harness.evaluators.scorer import Scorer

    if isinstance(obj, Scorer) or (isinstance(obj, type) and issubclass(obj, Scorer)):
        return  # its name is checked when its spec is made
    if not hasattr(obj, "id"):
        raise EvaluatorError(
            f"{source} offered a {type(obj).__name__}, which is neither a Scorer nor an evaluator spec",
            hint="return a list of Scorer classes, Scorer instances or evaluator specs",
        )
    try:
        check_evaluator_id(getattr(obj, "id", None), where="pytest_audit_evaluators")
    except EvaluatorError as exc:
        raise EvaluatorError(f"{exc.what}; offered by {source}", where=exc.where, hint=exc.hint) from None


def _refuse_clashes(offered: Sequence[tuple[object, str]]) -> None:
    """An id offered with two identities, or two ids that differ only in letter case (one
    folder on a case-insensitive file system), raises :class:`EvaluatorError`."""
    registered = {s.id: s for s in registry.all_specs()}
    folded = {key.casefold(): key for key in registered}
    seen: dict[str, tuple[str | None, str]] = {}
    for obj, source in offered:
        evaluator_id, identity = _identity_hash(obj)
        if not isinstance(evaluator_id, str):
            continue  # an invalid id is reported by the id check, with its own words
        twin = folded.setdefault(evaluator_id.casefold(), evaluator_id)
        if twin != evaluator_id:
            raise EvaluatorError(
                f"evaluator id {evaluator_id!r} offered by {source} differs from the id "
                f"{twin!r} only in letter case",
                hint="rename it: ids that differ only in case share a folder on a "
                "case-insensitive file system",
            )
        other = seen.get(evaluator_id)
        if other is None:
            held = registered.get(evaluator_id)
            if held is not None:
                other = (held.identity_hash, registry.source_of(evaluator_id) or "register()")
        if other is not None and other[0] != identity:
            raise EvaluatorError(
                f"evaluator id {evaluator_id!r} is offered by {source} and also by {other[1]}, "
                "with a different identity",
                hint="rename one of them (a Scorer's `name`): one id names one evaluator in the "
                "score cache, the cards and the reports",
            )
        seen[evaluator_id] = (identity, source)


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
    :class:`EvaluatorSpec`) are matched with the same patterns; :func:`offered_specs` has made
    sure that a registry spec with the same id is the same evaluator. Without patterns: the extra specs if any, else every registered evaluator whose
    weights (or API key) are available locally. An unknown pattern raises
    :class:`~harness.core.errors.EvaluatorError` with close-match hints.
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


def search_evaluator(evaluator: str) -> EvaluatorSpec:
    """The one spec a search measures: a registered id, or a planted evaluator of the search's
    known answers; anything matching none or several is an :class:`AuditError`."""
    specs = select_evaluators([evaluator], search_planted_specs())
    if len(specs) != 1:
        raise AuditError(f"--evaluator {evaluator!r} matches {len(specs)} evaluators",
                         where="--evaluator", hint="give exactly one id")  # fmt: skip
    return specs[0]
