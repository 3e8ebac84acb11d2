"""Evaluator families: the open table of adapters (how to build, what input, which weights, role).

Every evaluator spec names an ``adapter``; the family registered under that name says how to
build the loaded evaluator, whether it reads images (rendered, composited) or the structured
scene, how its weights are found offline, and its role in a run. The built-in families
(open_clip, Hugging Face, hosted judge, CLIP-IQA, the reference companion and planted
evaluators, and the ``python``/``python_scene`` families behind user scoring code) register at
import through :func:`register_family`, the same door a plugin uses::

    from harness.evaluators.families import Family, register_family

    register_family(Family("my_adapter", build="my_pkg.scoring:build", input="image"))

``build`` is ``"module:function"`` (imported lazily, so listing evaluators never imports
torch) or a callable ``(spec, *, device, batch_size) -> Evaluator``. A built-in family may
instead live in its own module under :mod:`harness.evaluators.family_modules`: every module
there is imported (and so registers itself) when this module is, no list names it.

Nothing here imports a model library or :mod:`harness.evaluators.base` (which sits above it).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.core.errors import EvaluatorError
from harness.vocab.registry_type import Lazy, Registry, VocabularyError

InputKind = Literal["image", "scene"]
WeightsKind = Literal["files", "api_key", "none"]
Role = Literal["alignment", "quality", "companion", "reference"]


@dataclass(frozen=True)
class Family:
    """One adapter family.

    ``input``: ``image`` (scored on rendered images with captions) or ``scene`` (scored on
    :class:`~harness.evaluators.reference.items.ScoreItem` s, never rendered).
    ``weights``: ``files`` (model weights resolved offline by :mod:`.weights` before import),
    ``api_key`` (a hosted API; available when its key variable is set) or ``none``.
    ``role``: ``alignment`` (a text-3D alignment evaluator), ``quality`` (prompt-free quality
    control), ``companion`` (the run's symbolic companion every card is compared with) or
    ``reference`` (a planted/reference evaluator). ``keeps_responses``: it returns free-text
    responses (a judge) rather than scores, which the card reports. ``extra``: the pip extra
    named when an import fails. ``specs``: the family's own evaluator specs, a zero-argument
    callable (or ``"module:function"``) returning :class:`~harness.evaluators.base.EvaluatorSpec`
    s; the evaluator registry adds them after the catalogue when it first loads, so a family
    module registers its evaluators without importing the registry (which imports this module).
    ``requires``: the top-level modules its build imports (``("torch", "open_clip")``), checked
    without importing them (:meth:`missing`) so a listing or a plan can say what this install
    lacks before anything loads.
    """

    adapter: str
    build: str | Callable[..., object]
    input: InputKind = "image"
    weights: WeightsKind = "none"
    role: Role = "alignment"
    keeps_responses: bool = False
    extra: str = "models"
    specs: str | Callable[[], object] | None = None
    requires: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.adapter, str) or not self.adapter.strip():
            raise EvaluatorError(f"a family needs a non-empty adapter name, got {self.adapter!r}")
        if self.input not in ("image", "scene"):
            raise EvaluatorError(f"family {self.adapter!r}: input must be 'image' or 'scene'")
        if self.weights not in ("files", "api_key", "none"):
            raise EvaluatorError(f"family {self.adapter!r}: weights must be files, api_key or none")
        if self.role not in ("alignment", "quality", "companion", "reference"):
            raise EvaluatorError(
                f"family {self.adapter!r}: role must be alignment, quality, companion or reference"
            )
        for name in ("build", "specs"):  # "module:function", imported on first use
            value = getattr(self, name)
            if isinstance(value, str):
                try:
                    object.__setattr__(self, name, Lazy(value))
                except VocabularyError:
                    raise EvaluatorError(
                        f"family {self.adapter!r}: {name} {value!r} is not 'module:function'"
                    ) from None

    def builder(self) -> Callable[..., object]:
        """The build callable (imports its module on first use)."""
        if not isinstance(self.build, Lazy):
            return self.build
        try:
            return self.build.resolve()
        except ImportError as exc:
            raise EvaluatorError(
                f"adapter {self.adapter!r} needs {exc.name or 'a missing package'}",
                hint=f"pip install 't3d-audit[{self.extra}]'",
            ) from exc

    def missing(self) -> tuple[str, ...]:
        """The modules of :attr:`requires` this install cannot import (found, not imported)."""
        from importlib.util import find_spec

        def absent(name: str) -> bool:
            try:
                return find_spec(name) is None
            except (ImportError, ValueError):  # a module set to None, or a broken package
                return True

        return tuple(name for name in self.requires if absent(name))

    def install_problem(self) -> str | None:
        """One line saying what this install lacks to build the family's evaluators, with the
        pip command; ``None`` when nothing is missing."""
        lacking = self.missing()
        if not lacking:
            return None
        return f"needs {', '.join(lacking)}, which this install lacks: pip install 't3d-audit[{self.extra}]'"

    def own_specs(self) -> list[object]:
        """The family's own evaluator specs (none when it declares no ``specs``)."""
        return [] if self.specs is None else list(self.specs())


#: The registered families, by adapter name, in registration order.
FAMILIES: Registry[Family] = Registry(
    "adapter",
    key=lambda f: f.adapter,
    error=EvaluatorError,
    hint="or register a family (harness.evaluators.families.register_family) or a Scorer "
    "(docs/evaluators.md)",
)


def register_family(family: Family, *, replace: bool = False) -> Family:
    """Add ``family``; an adapter name already taken by a different family needs ``replace``."""
    if not isinstance(family, Family):
        raise EvaluatorError(f"register_family() needs a Family, got {type(family).__name__}")
    return FAMILIES.register(family, replace=replace)


def unregister_family(adapter: str) -> None:
    """Remove a family (a plugin undoing its own registration)."""
    FAMILIES.unregister(adapter)


def get_family(adapter: str) -> Family:
    """The family registered as ``adapter``; :class:`EvaluatorError` naming the choices."""
    return FAMILIES.get(adapter)


def find_family(adapter: str) -> Family | None:
    """The family registered as ``adapter``, or ``None``."""
    return FAMILIES.find(adapter)


def all_families() -> list[Family]:
    """Every registered family in registration order."""
    return list(FAMILIES)


def adapter_input(spec: object) -> InputKind:
    """``scene`` when ``spec``'s family reads the structured scene, else ``image`` (also for
    anything that is not a registered spec, e.g. a test double)."""
    family = find_family(str(getattr(spec, "adapter", "")))
    return family.input if family is not None else "image"


def has_role(spec: object, role: Role) -> bool:
    """Whether ``spec``'s family plays ``role``."""
    family = find_family(str(getattr(spec, "adapter", "")))
    return family is not None and family.role == role


def keeps_responses(spec: object) -> bool:
    """Whether ``spec``'s family returns free-text responses (a hosted judge)."""
    family = find_family(str(getattr(spec, "adapter", "")))
    return family is not None and family.keeps_responses


def install_problem(spec: object) -> str | None:
    """What this install lacks to run ``spec`` (one line naming the modules and the pip extra),
    or ``None``: it can run, or its family is not registered (reported where it is built)."""
    family = find_family(str(getattr(spec, "adapter", "")))
    return None if family is None else family.install_problem()


_OPEN_CLIP = ("torch", "open_clip")
_HF = ("torch", "transformers")

# The built-in families, registered through the same door as any plugin's.
for _family in (
    Family("open_clip", "harness.evaluators.openclip:build", weights="files", requires=_OPEN_CLIP),
    Family("hf_clip", "harness.evaluators.hf:build_clip", weights="files", requires=_HF),
    Family("blip2_itm", "harness.evaluators.hf:build_blip2", weights="files", requires=_HF),
    Family("blip2_itc", "harness.evaluators.hf:build_blip2", weights="files", requires=_HF),
    Family("blip_vqa", "harness.evaluators.hf:build_blip_vqa", weights="files", requires=_HF),
    Family("vqascore", "harness.evaluators.hf:build_vqascore", weights="files", requires=_HF),
    Family("judge", "harness.evaluators.judge:build", weights="api_key", keeps_responses=True,
           extra="judge", requires=("httpx",)),
    Family("clip_iqa", "harness.evaluators.clipiqa:build", weights="files", role="quality",
           requires=_OPEN_CLIP),
    Family("companion", "harness.evaluators.reference.companion:build", input="scene",
           role="companion"),
    Family("planted", "harness.evaluators.reference.planted:build", input="scene",
           role="reference"),
    Family("python", "harness.evaluators.scorer:build"),
    Family("python_scene", "harness.evaluators.scorer:build", input="scene"),
):  # fmt: skip
    register_family(_family)


def discover_families(folder: Path, package: str) -> list[str]:
    """Import every module of the package ``package`` (its folder ``folder``), sorted by name;
    each registers its family at import. Returns the modules' names. The import is by name, so
    the family modules (which import this one) form no import cycle with it."""
    names = sorted(m.name for m in pkgutil.iter_modules([str(folder)]) if not m.ispkg)
    for name in names:
        importlib.import_module(f"{package}.{name}")
    return names


discover_families(Path(__file__).with_name("family_modules"), f"{__package__}.family_modules")
