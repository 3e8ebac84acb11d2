"""The question a claim answers, checked before any work: the evaluator, the generators, the
scene set and profile, the presets, and the project's ``[tool.t3d-audit]`` defaults.

Every problem is one :class:`~harness.core.errors.AuditError` (what, where, what to do): an
unknown generator, A = B, a generator missing from some of the claim's prompts, fewer than
:data:`MIN_PROMPTS` prompts, an unknown evaluator or preset.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.errors import AuditError

if TYPE_CHECKING:
    from harness.checks.thresholds import Thresholds
    from harness.evaluators.base import EvaluatorSpec
    from harness.protocol.presets import Protocol
    from harness.protocol.profiles import Profile
    from harness.scenes.sceneset import SceneSet

#: The fewest prompts a claim runs on: one prompt has no spread to resample (an interval over
#: fewer than the interval policy's minimum, 6 at 95 %, is reported but "not confirmable").
MIN_PROMPTS = 2
#: Held-out prompts the search confirms on when the scene set has them (the search's default).
HELD_OUT = 10
DEFAULT_PROFILE = "default"
#: Preset scaling of a claim unless ``--presets-as-published``: at most this many views per
#: preset (a tiled preset keeps its grid), rendered at the profile's c0 resolution and samples.
DEFAULT_MAX_VIEWS = 4


@dataclass(frozen=True)
class ClaimRequest:
    """What to answer. ``a``/``b``: the claim "A beats B" (higher score is better); for
    ``all_pairs`` the claimed order ``generators`` (best first; ``None``: c0's order). ``profile``
    and ``scenes`` ``None``: the project's ``[tool.t3d-audit]``, else ``default`` and the bundled
    scenes. ``presets``: ``"all"``, ``"none"`` or names joined by commas. ``search_budget``:
    configurations of the search (0: no search); ``flip_points``: Sobol points of the flip
    region on the claim's prompts (0: none). ``max_views``/``resolution``/``samples``: how the
    presets are scaled (``None`` for ``resolution``/``samples``: the profile's c0);
    ``as_published`` scores them unscaled."""

    evaluator: str
    a: str | None = None
    b: str | None = None
    profile: str | None = None
    scenes: Path | None = None
    presets: str = "all"
    search_budget: int = 16
    flip_points: int = 32
    seed: int = 0
    bootstrap: int | None = None
    max_views: int | None = DEFAULT_MAX_VIEWS
    resolution: int | None = None
    samples: int | None = None
    as_published: bool = False
    all_pairs: bool = False
    generators: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ProjectConfig:
    """What a claim reads from the project's ``pyproject.toml`` ``[tool.t3d-audit]``:
    ``profile``, ``scenes`` (resolved against the project's root), ``evaluators`` and the
    thresholds layered over the built-in ones, as the other commands read them."""

    root: Path
    profile: str | None
    scenes: Path | None
    evaluators: tuple[str, ...]
    thresholds: Thresholds


def project_config(invocation_dir: Path | None = None) -> ProjectConfig:
    """The :class:`ProjectConfig` of the project run from ``invocation_dir`` (default: the
    working folder): pytest's rootdir for it, its ``pyproject.toml`` when present."""
    from harness.core.bounded_input import read_toml
    from harness.core.rootdir import project_root
    from harness.search.requests import project_thresholds

    root = project_root(Path(invocation_dir or Path.cwd()))
    path = root / "pyproject.toml"
    table: dict[str, object] = {}
    if path.is_file():
        try:
            tool = read_toml(path).get("tool", {})
        except (OSError, UnicodeDecodeError, ValueError, tomllib.TOMLDecodeError) as exc:
            raise AuditError(f"cannot read [tool.t3d-audit]: {exc}", where=str(path)) from None
        found = tool.get("t3d-audit", {}) if isinstance(tool, dict) else {}
        if not isinstance(found, dict):
            raise AuditError("[tool.t3d-audit] must be a table", where=str(path))
        table = found
    profile = table.get("profile")
    scenes = table.get("scenes")
    evaluators = table.get("evaluators") or ()
    if isinstance(evaluators, str):
        evaluators = (evaluators,)
    if profile is not None and not isinstance(profile, str):
        raise AuditError(f"profile must be a profile name, got {profile!r:.60}", where=f"{path}: [tool.t3d-audit]")
    if scenes is not None and not (isinstance(scenes, str) and scenes.strip()):
        raise AuditError(f"scenes must be a folder path, got {scenes!r:.60}", where=f"{path}: [tool.t3d-audit]")
    if not isinstance(evaluators, list | tuple) or not all(isinstance(e, str) for e in evaluators):
        raise AuditError("evaluators must be a list of ids", where=f"{path}: [tool.t3d-audit]")
    return ProjectConfig(root, profile, (root / scenes).resolve() if scenes else None, tuple(evaluators),
                         project_thresholds(path))  # fmt: skip


def extra_specs() -> list[EvaluatorSpec]:
    """The known-answer evaluators outside the registry that a claim may name: the preset,
    search and noisy planted ones (docs/claims.md, "Known answers")."""
    from harness.evaluators.reference.specs import (
        noisy_planted_specs,
        preset_planted_specs,
        search_planted_specs,
    )

    return [*preset_planted_specs(), *search_planted_specs(), *noisy_planted_specs()]


def resolve_spec(evaluator: object, offered: list[object] | None = None) -> EvaluatorSpec:
    """The one spec ``evaluator`` names: an :class:`EvaluatorSpec` as it is, else an id of the
    registry, of the project's ``pytest_audit_evaluators`` hooks (``offered``) or of the
    known-answer evaluators; an id matching none or several is an :class:`AuditError`."""
    from harness.evaluators.base import EvaluatorSpec
    from harness.run.evaluator_selection import select_evaluators

    if isinstance(evaluator, EvaluatorSpec):
        return evaluator
    if not isinstance(evaluator, str) or not evaluator.strip():
        raise AuditError("no evaluator named", where="--evaluator",
                         hint="give one id (t3d-audit evaluators lists them), or set evaluators in [tool.t3d-audit]")  # fmt: skip
    specs = select_evaluators([evaluator], [*extra_specs(), *(offered or [])])
    if len(specs) != 1:
        raise AuditError(f"--evaluator {evaluator!r:.80} matches {len(specs)} evaluators", where="--evaluator",
                         hint="give exactly one id, not a glob")  # fmt: skip
    return specs[0]


@dataclass
class ClaimInputs:
    """The checked inputs: the ``spec``, the claim's ``scene_set`` (its generators on the
    profile's prompts), the whole scene set ``full`` (the search's held-out prompts come from
    it), the ``profile`` (applied to the scene kind), the ``presets`` (scaled), the caption
    ``template`` of c0, the ``cache_dir``, the scene-set path (``None``: bundled), the held-out
    prompts available to the search, and the project's thresholds for this evaluator."""

    spec: EvaluatorSpec
    generators: tuple[str, ...]
    scene_set: SceneSet
    full: SceneSet
    profile: Profile
    presets: tuple[Protocol, ...]
    template: str
    cache_dir: Path
    scenes: Path | None
    held_out: int
    thresholds: dict[str, float] = field(default_factory=dict)

    @property
    def prompts(self) -> tuple[str, ...]:
        return tuple(sorted(self.scene_set.prompt_ids))


def check_generators(names: tuple[str, ...], available: tuple[str, ...], where: str) -> None:
    """An :class:`AuditError` for a name the scene set lacks or a name given twice."""
    for name in names:
        if name not in available:
            raise AuditError(f"generator {name!r:.80} is not in the scene set", where=where,
                             hint=f"choose among {', '.join(available)}")  # fmt: skip
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        what = (f"--a and --b both name {twice!r:.80}: a claim compares two different generators"
                if len(names) == 2 else f"generator {twice!r:.80} is named twice")
        raise AuditError(what, where=where, hint="name two different generators")


def check_cells(scene_set: SceneSet, generators: tuple[str, ...], prompts: tuple[str, ...], where: str) -> None:
    """An :class:`AuditError` naming a generator that has no scene for some of ``prompts``."""
    have = {(s.generator, s.prompt_id) for s in scene_set.scenes}
    for g in generators:
        missing = [p for p in prompts if (g, p) not in have]
        if missing:
            shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            raise AuditError(f"generator {g!r:.80} has no scene for {len(missing)} of the claim's {len(prompts)} "
                             f"prompts ({shown})", where=where,
                             hint="import its output for those prompts, or choose a profile with fewer prompts")  # fmt: skip


def held_out_available(full: SceneSet, generators: tuple[str, ...], n_claim: int) -> int:
    """How many prompts after the claim's first ``n_claim`` (sorted, as the search splits them)
    every generator of ``generators`` has a scene for, consecutively, up to :data:`HELD_OUT`."""
    have = {(s.generator, s.prompt_id) for s in full.scenes}
    count = 0
    for prompt in full.prompt_ids[n_claim:]:
        if count >= HELD_OUT or not all((g, prompt) in have for g in generators):
            break
        count += 1
    return count


def scaled_presets(request: ClaimRequest, profile: Profile) -> tuple[Protocol, ...]:
    """The presets ``request.presets`` names, scaled (:class:`ClaimRequest`)."""
    from harness.protocol.presets import PRESETS, get_preset, preset_names

    text = request.presets.strip()
    if text == "none":
        return ()
    names = list(PRESETS) if text == "all" else preset_names(text, at_least=1)
    chosen = tuple(get_preset(n) for n in names)
    if request.as_published:
        return chosen
    resolution = request.resolution or profile.c0.resolution_px
    samples = request.samples or profile.c0.samples
    # a tiled preset keeps its grid of views (fewer would be another protocol): only its quality scales
    return tuple(p.scaled(max_views=None if p.tiling is not None else request.max_views, resolution_px=resolution,
                          samples=samples) for p in chosen)  # fmt: skip


def resolve(request: ClaimRequest, *, cache_dir: Path, config: ProjectConfig | None = None,
            offered: list[object] | None = None) -> ClaimInputs:  # fmt: skip
    """The :class:`ClaimInputs` of ``request`` (module doc: every problem is one error)."""
    from harness.protocol.profiles import get_profile
    from harness.scenes.scene_source import load_scene_set

    evaluator = request.evaluator
    if not evaluator and config is not None and len(config.evaluators) == 1:
        evaluator = config.evaluators[0]
    spec = resolve_spec(evaluator, offered)
    named = get_profile(request.profile or (config.profile if config else None) or DEFAULT_PROFILE)
    scenes = request.scenes if request.scenes is not None else (config.scenes if config else None)
    full = load_scene_set(scenes, cache_dir)
    available = tuple(full.generators)
    if request.all_pairs:
        names = request.generators or available
        check_generators(tuple(names), available, "--generators")
        if len(names) < 2:
            raise AuditError("--all-pairs needs at least two generators", where="--generators",
                             hint="name two or more, joined by commas")  # fmt: skip
        generators = tuple(names)
    else:
        if not request.a or not request.b:
            raise AuditError("a claim needs both --a and --b", where="--a/--b", hint="e.g. --a faithful --b gridded")
        generators = (request.a, request.b)
        check_generators(generators, available, "--a/--b")
    prompts = full.prompt_ids[: named.prompts] if named.prompts else full.prompt_ids
    if len(prompts) < MIN_PROMPTS:
        raise AuditError(f"too few prompts: the claim has {len(prompts)} (it needs at least {MIN_PROMPTS}; "
                         "6 for a confirmed verdict)", where="--scenes" if scenes else "--profile",
                         hint="give a scene set with more prompts, or a profile that uses more of them")  # fmt: skip
    check_cells(full, generators, tuple(prompts), "--scenes" if scenes else "the bundled scenes")
    scene_set = full.select(len(prompts), generators)
    profile = named.for_scene_kind(scene_set.kind)
    if profile.probes:  # a claim compares protocols; the content probes are the audit's
        profile = replace(profile, probes=())
    thresholds = dict(config.thresholds.for_evaluator(spec.id)) if config else {}
    return ClaimInputs(spec, generators, scene_set, full, profile, scaled_presets(request, profile),
                       profile.c0_template, cache_dir, scenes,
                       held_out_available(full, generators, len(prompts)), thresholds)  # fmt: skip
