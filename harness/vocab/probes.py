"""The probe registry: every content probe declared once.

A :class:`ProbeSpec` names the scene edit (``"module:function"``, imported on first use, or a
callable), whether it needs several objects (a layout edit has no meaning on a single
generated object), the threshold that gates its directional discrimination, and its labels.
``probe_edits.apply`` dispatches through it; the thresholds, the summary's probe keys, the
report's probe order and labels and the synthetic generator derive from it.

The edit is ``edit(scene, rng) -> objects``: the edited scene's objects (a tuple of
:class:`~harness.scenes.model.SceneObject`) from the frozen scene and a seeded
``random.Random``; it raises :class:`~harness.scenes.probe_edits.ProbeNotApplicable` when the probe
has no meaning for the scene. Adding a probe is its edit function plus one
:func:`register_probe` row (and its threshold, when it needs a new one)::

    register_probe(ProbeSpec("mirror", edit="my_pkg.probes:mirror",
                             threshold="min_removal_discrimination", label="Mirrored"))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.vocab.registry_type import Lazy, Registry, VocabularyError

KEEP_HALF = "keep_half"
BIGGEST_ONLY = "biggest_only"
SCRAMBLED = "scrambled"
WORST_OBJECTS = "worst_objects"


@dataclass(frozen=True)
class ProbeSpec:
    """One content probe.

    ``edit``: ``"module:function"`` (kept as a :class:`~harness.vocab.registry_type.Lazy`) or a callable ``(scene, rng) -> tuple[SceneObject, ...]``.
    ``multi_object``: the edit changes a layout of several objects (not applicable to a
    single-object scene). ``threshold``: the threshold name gating its discrimination
    (``None``: an audit must name one). ``label``: the report's name. ``description``: one
    line for docs, cards and ``--help``.
    """

    name: str
    edit: str | Callable[..., object]
    threshold: str | None = None
    multi_object: bool = False
    label: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        if "~" in self.name or "." in self.name or not self.name.replace("_", "").isalnum():
            raise VocabularyError(
                f"probe name {self.name!r} must be letters, digits and '_'",
                hint="it becomes part of the edited scene's id",
            )
        if isinstance(self.edit, str):  # "module:function", imported on first use
            try:
                object.__setattr__(self, "edit", Lazy(self.edit))
            except VocabularyError:
                raise VocabularyError(
                    f"probe {self.name!r}: edit {self.edit!r} is not 'module:function'") from None

    def editor(self) -> Callable[..., object]:
        """The edit callable (imports its module on first use)."""
        return self.edit.resolve() if isinstance(self.edit, Lazy) else self.edit


PROBES: Registry[ProbeSpec] = Registry("probe")


def register_probe(spec: ProbeSpec, *, replace: bool = False) -> ProbeSpec:
    """Add a probe after the registered ones (report order is registration order)."""
    return PROBES.register(spec, replace=replace)


def probe(name: str, *, where: str | None = None) -> ProbeSpec:
    """The spec of probe ``name`` (a :class:`VocabularyError` names the closest one)."""
    return PROBES.get(name, where=where)


def probe_names() -> tuple[str, ...]:
    """Every registered probe, registration order."""
    return PROBES.names()


for _spec in (
    ProbeSpec(KEEP_HALF, "harness.scenes.probe_edits:keep_half", "min_removal_discrimination", True,
              "Keep-half", "a random half of the objects removed"),
    ProbeSpec(BIGGEST_ONLY, "harness.scenes.probe_edits:biggest_only", "min_removal_discrimination", True,
              "Biggest-only", "only the object with the largest box volume kept"),
    ProbeSpec(SCRAMBLED, "harness.scenes.probe_edits:scrambled", "min_scramble_discrimination", True,
              "Scrambled", "every object relocated and reoriented on the floor"),
    ProbeSpec(WORST_OBJECTS, "harness.scenes.probe_edits:worst_objects", "min_worst_objects_discrimination",
              False, "Worst-objects", "each object's asset swapped for its worst-retrieved candidate"),
):
    PROBES.register(_spec)
del _spec


def probe_threshold(probe_name: str) -> str | None:
    """The threshold that gates ``probe_name``'s discrimination (``None``: unknown probe, or
    a probe gated by no threshold by default)."""
    return PROBES.get(probe_name).threshold if probe_name in PROBES else None
