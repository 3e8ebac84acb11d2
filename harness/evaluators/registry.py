"""Evaluator registry: the registered specs (state) and how code adds and selects them.

It starts with the study's catalogue (:func:`harness.evaluators.catalogue.catalogue_specs`:
the 20 evaluators of Table 12 and the bundled reference set). Specs are built with the family
constructors of :mod:`harness.evaluators.builders`. Users add evaluators in these ways (each
accepts an :class:`EvaluatorSpec`, a :class:`~harness.evaluators.scorer.Scorer` subclass or a
Scorer instance):

* ``register(obj)`` from a ``conftest.py`` or any code run before selection, or ``@register``
  as a class decorator on a Scorer subclass;
* an entry point in group ``t3d_audit.evaluators`` whose object is one of those, an iterable of
  them or a zero-argument callable returning either;
* :func:`register_openclip_local` for an open_clip model config JSON + a local checkpoint.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TypeVar

from harness.core.errors import EvaluatorError
from harness.evaluators.base import EvaluatorSpec
from harness.evaluators.builders import CLIPSCORE_SCALE, openclip_local_spec
from harness.evaluators.catalogue import catalogue_specs
from harness.evaluators.families import FAMILIES
from harness.evaluators.scorer import Scorer, add_scorer, forget_scorer
from harness.vocab.registry_type import Registry

R = TypeVar("R")

ENTRY_POINT_GROUP = "t3d_audit.evaluators"


_synced: list[int] = [-1]  # the FAMILIES version whose specs SPECS holds


def _load(specs: Registry[EvaluatorSpec]) -> None:
    """The first read's rows: the catalogue, each family's own specs, then the entry points."""
    for spec in catalogue_specs():
        if spec.id not in specs:
            specs.register(spec, source="the built-in catalogue")
    _synced[0] = -1  # a reload (after SPECS.reset()) adds the families' specs again
    _sync_families(specs)
    _load_entry_points()




def _sync_families(specs: Registry[EvaluatorSpec]) -> None:
    """Add the specs of families registered since the last read (and drop those of families
    since removed): a family module registers its evaluators by declaring ``specs`` on its
    :class:`~harness.evaluators.families.Family`, at any time, without importing this module."""
    if _synced[0] == FAMILIES.version:
        return
    _synced[0] = FAMILIES.version
    adapters = set(FAMILIES.names())
    for spec in list(specs):
        source = specs.source_of(spec.id) or ""
        if source.startswith("family ") and source[len("family "):].strip("'") not in adapters:
            specs.unregister(spec.id)
    for family in FAMILIES:
        for spec in family.own_specs():
            if spec.id not in specs:
                specs.register(spec, source=f"family {family.adapter!r}")


def _specs() -> Registry[EvaluatorSpec]:
    """:data:`SPECS`, with the specs of every family registered now."""
    if SPECS.loaded:
        _sync_families(SPECS)
    return SPECS


#: Every registered evaluator spec by id: the built-ins in table order, then additions in order.
SPECS: Registry[EvaluatorSpec] = Registry(
    "evaluator id", key=lambda s: s.id, error=EvaluatorError, loader=_load
)


def _load_entry_points() -> None:
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            if callable(obj) and not _registrable(obj):
                obj = obj()
            items = [obj] if _registrable(obj) else list(obj)
        except Exception as exc:
            raise EvaluatorError(
                f"entry point {ep.name!r} ({ep.value}) failed to load: {exc}",
                where=ENTRY_POINT_GROUP,
                hint="fix or uninstall the package that provides it",
            ) from exc
        for item in items:
            register(item, replace=True, source=f"entry point {ep.name!r} ({ep.value}) in group "
                                                f"{ENTRY_POINT_GROUP}")  # fmt: skip


def _registrable(obj: object) -> bool:
    return isinstance(obj, EvaluatorSpec | Scorer) or (
        isinstance(obj, type) and issubclass(obj, Scorer)
    )


def register(obj: R, *, replace: bool = False, source: str | None = None) -> R:
    """Add an evaluator: an :class:`EvaluatorSpec`, a Scorer subclass (also as ``@register``
    class decorator) or a Scorer instance. Returns ``obj`` unchanged. An id already registered
    with a different identity needs ``replace``. ``source`` says where it came from (in clash
    messages; default: the module that defines it)."""
    if isinstance(obj, EvaluatorSpec):
        _add(obj, replace, source or "register()")
    elif _registrable(obj):
        spec = _check_free(_spec_of(obj), replace)
        add_scorer(obj)  # type: ignore[arg-type]
        _add(spec, replace, source or _defined_in(obj))
    else:
        raise EvaluatorError(
            f"register() needs an EvaluatorSpec, a Scorer subclass or a Scorer instance, "
            f"got {type(obj).__name__}",
            hint="subclass harness.evaluators.Scorer (docs/evaluators.md, 'Your own scoring code')",
        )
    return obj


def _spec_of(obj: object) -> EvaluatorSpec:
    return (type(obj) if isinstance(obj, Scorer) else obj).spec()


def _defined_in(obj: object) -> str:
    cls = type(obj) if isinstance(obj, Scorer) else obj
    import sys

    where = getattr(sys.modules.get(cls.__module__), "__file__", None) or cls.__module__
    return f"register({cls.__qualname__}) in {where}"


def source_of(evaluator_id: str) -> str | None:
    """Where the registered ``evaluator_id`` came from (the built-in catalogue, a family, an
    entry point, a ``register()`` call and its module), or None when it is not registered."""
    return _specs().source_of(evaluator_id)


def _check_free(spec: EvaluatorSpec, replace: bool) -> EvaluatorSpec:
    old = _specs().find(spec.id)
    if old is not None and old != spec and not replace:
        _add(spec, replace)  # raises, naming where the held one came from
    return spec


def _add(spec: EvaluatorSpec, replace: bool, source: str = "register()") -> EvaluatorSpec:
    return _specs().register(spec, replace=replace, source=source)


def unregister(evaluator_id: str) -> None:
    """Remove a registered evaluator (a conftest that cleans up after itself; tests scope the
    registry instead, ``SPECS.scoped()``)."""
    SPECS.unregister(evaluator_id)
    forget_scorer(evaluator_id)


def all_specs() -> list[EvaluatorSpec]:
    """Every registered spec: the built-ins in table order, then additions in order."""
    return list(_specs())


def declared_score_ranges(evaluator_ids: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``id → (low, high)`` for the registered evaluators among ``evaluator_ids`` that declare a
    score range (records of other ids are only checked for finite scores)."""
    by_id = {s.id: s for s in all_specs()}
    return {
        e: by_id[e].score_range  # type: ignore[misc]
        for e in sorted(set(evaluator_ids))
        if e in by_id and by_id[e].score_range is not None
    }


def get(evaluator_id: str) -> EvaluatorSpec:
    """The spec registered as ``evaluator_id`` (exact id)."""
    return select([evaluator_id])[0]


def select(patterns: Sequence[str]) -> list[EvaluatorSpec]:
    """Specs matching ids or fnmatch globs, in registry order, without duplicates.

    A pattern that matches nothing raises :class:`EvaluatorError` listing close ids.
    """
    if isinstance(patterns, str):
        patterns = [patterns]
    specs = all_specs()
    ids = [s.id for s in specs]
    chosen: set[str] = set()
    for pattern in patterns:
        pattern = pattern.strip()
        hits = [i for i in ids if fnmatch.fnmatchcase(i, pattern)]
        if not hits:
            close = difflib.get_close_matches(pattern, ids, n=5, cutoff=0.4)
            raise EvaluatorError(
                f"no evaluator matches {pattern!r}",
                hint=(f"did you mean {', '.join(close)}? " if close else "")
                + "run 't3d-audit evaluators' to list them",
            )
        chosen.update(hits)
    return [s for s in specs if s.id in chosen]


def register_openclip_local(
    id: str,
    model_config: str | Path,
    checkpoint: str | Path,
    *,
    family: str = "custom open_clip",
    score_scale: str = CLIPSCORE_SCALE,
    description: str = "",
    replace: bool = False,
) -> EvaluatorSpec:
    """Register an open_clip model from a config JSON and a local checkpoint file.

    ``model_config`` is an open_clip model config file (``{"embed_dim", "vision_cfg",
    "text_cfg", ...}``); its file stem becomes the open_clip model name. ``checkpoint`` is a
    ``.safetensors``/``.pt``/``.bin`` state dict. The checkpoint's sha256 enters the identity,
    so retrained weights never reuse cached scores.
    """
    spec = openclip_local_spec(
        id, model_config, checkpoint, family=family, score_scale=score_scale,
        description=description,
    )  # fmt: skip
    return _add(spec, replace, f"register_openclip_local({id!r}, {str(model_config)!r})")
