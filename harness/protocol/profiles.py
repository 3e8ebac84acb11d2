"""Profiles: named subsets of the study protocol (``harness/profiles.json``), chosen with
``--audit-profile``.

A profile picks the levels of each factor to sweep from its c0, the prompts, generators,
probes and evaluators, factorial blocks rendered as full crosses besides the OFAT sweep, and
the defaults of ``t3d-audit search`` (:class:`SearchBlock`). Parsing is strict: every error
names the profile file, the profile and the key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from harness.core.errors import AuditError, ProtocolError
from harness.protocol.configurations import (
    BASELINE,
    BLOCK,
    C0,
    YAW_PITCH_DEG,
    Configuration,
    KindView,
    RenderConfig,
    block_factors,
    factors,
    kind_view,
    record_factors,
)
from harness.protocol.levels import Block, cell_level, check_level
from harness.protocol.view_policies import DEFAULT_VIEW_POLICY, policy_views
from harness.vocab.factors import FACTORS, shared_factor_names
from harness.vocab.probes import PROBES as _PROBES
from harness.vocab.probes import probe_names


@dataclass(frozen=True)
class Profile:
    """A named subset of the study protocol, chosen with ``--audit-profile``.

    ``c0`` is the profile's default render (the study's c0 is 512 px; fast profiles may use a
    smaller Table 11 resolution as their default). ``levels`` maps factor → selected levels;
    ``prompts`` is how many prompt ids (sorted) to audit, ``None`` for all. ``scene_kind`` is
    the kind of scene set it is applied to (:meth:`for_scene_kind`): it sets the c0 pitch,
    the pitch of the yaw sweep and the c0 caption template (:class:`KindView`). ``blocks``
    are factorial blocks (:class:`Block`) rendered as full crosses besides the OFAT sweep.
    """

    name: str
    description: str
    c0: RenderConfig
    levels: dict[str, tuple[str, ...]]
    prompts: int | None
    generators: tuple[str, ...] | None
    probes: tuple[str, ...]
    evaluators: tuple[str, ...]
    bootstrap: int
    scene_kind: str = "room"
    blocks: tuple[Block, ...] = ()
    search: SearchBlock | None = None

    def __hash__(self) -> int:
        return hash((self.name, self.scene_kind))

    def for_scene_kind(self, kind: str) -> Profile:
        """This profile applied to scenes of ``kind``: its c0 pitch becomes the kind's default.

        ``room`` (the study's kind) leaves the profile as declared.
        """
        view = kind_view(kind)
        if kind == self.scene_kind:
            return self
        return replace(self, scene_kind=kind, c0=replace(self.c0, pitch_deg=view.c0_pitch_deg))

    @property
    def view(self) -> KindView:
        return kind_view(self.scene_kind)

    @property
    def c0_template(self) -> str:
        """The caption template id of c0 (and of every non-caption factor level)."""
        return self.view.c0_template

    def _base(self) -> Configuration:
        return Configuration(BASELINE, C0, self.c0, "255", self.c0_template, "p0")

    def configurations(self) -> list[Configuration]:
        """Baseline first, then every selected level of every factor (default-equivalent kept),
        then every cell of every block (factor ``block``, level :func:`cell_level`)."""
        base = self._base()
        out = [base]
        for name, levels in self.levels.items():
            for level in levels:
                out.append(_apply(base, name, level, self.view.yaw_pitch_deg))
        for block in self.blocks:
            for cell in block.cells():
                out.append(_apply_cell(base, cell))
        return out

    def configuration(self, factor: str, level: str) -> Configuration:
        """One factor level applied to this profile's c0 (any Table 11 level, selected or not).

        ``("baseline", "c0")`` gives the baseline itself. Raises :class:`ProtocolError`.
        """
        base = self._base()
        if factor == BASELINE:
            check_level(factor, level)
            return base
        return _apply(base, factor, level, self.view.yaw_pitch_deg)

    def shared_configurations(self) -> list[Configuration]:
        """The shared protocol family: baseline + the selected levels of the seven shared factors.

        Paraphrase levels are excluded (they are per-prompt strings, not shared protocols).
        For the ``paper`` profile this is the study's 387 = 1 + 386 configurations.
        """
        return [
            c for c in self.configurations() if c.factor == BASELINE or c.factor in shared_factor_names()
        ]

    def render_configs(self, view_policy: str = DEFAULT_VIEW_POLICY) -> list[RenderConfig]:
        """Distinct render configurations (background and caption levels reuse the c0 render);
        under a multi-view policy every view of every configuration (:func:`policy_views`)."""
        seen: dict[RenderConfig, None] = {}
        for cfg in self.configurations():
            for view in policy_views(cfg, view_policy, self.view.yaw_pitch_deg):
                seen.setdefault(view, None)
        return list(seen)

    def probe_renders(self, view_policy: str = DEFAULT_VIEW_POLICY) -> tuple[RenderConfig, ...]:
        """The renders of a probe-edited scene (the views of c0 under ``view_policy``)."""
        return policy_views(self._base(), view_policy, self.view.yaw_pitch_deg)


def _apply_cell(base: Configuration, cell: tuple[tuple[str, str], ...]) -> Configuration:
    """``base`` with every factor of ``cell`` set to its level; factor ``block``."""
    level = cell_level(cell)
    cfg = base
    for name, value in cell:
        cfg = _apply(cfg, name, value)
    return replace(cfg, factor=BLOCK, level=level)


def _apply(
    base: Configuration, factor: str, level: str, yaw_pitch_deg: float = YAW_PITCH_DEG
) -> Configuration:
    check_level(factor, level)
    if factor not in FACTORS:
        raise ProtocolError(f"factor {factor!r} has no configuration", where="factor")
    return replace(FACTORS.get(factor).apply(base, level, yaw_pitch_deg), factor=factor, level=level)


PROFILES_FILE = Path(__file__).resolve().parents[1] / "profiles.json"


PROFILE_KEYS = frozenset(
    {"description", "c0", "levels", "prompts", "generators", "probes", "evaluators", "bootstrap",
     "blocks", "search"}
)


def _parse_blocks(raw: object, levels: dict[str, tuple[str, ...]], where: str) -> tuple[Block, ...]:
    """``blocks``: a list of objects factor → list of levels (2 or 3 factors, ≥ 2 levels each,
    every level among the profile's OFAT levels of that factor, so the additive model can be
    predicted from the OFAT rows). Factors are put in record order; no block twice."""
    if not isinstance(raw, list):
        raise ProtocolError("'blocks' must be a list of {factor: [levels]} objects", where=f"{where}/blocks")
    out: list[Block] = []
    for i, entry in enumerate(raw):
        at = f"{where}/blocks/{i}"
        if not isinstance(entry, dict) or not 2 <= len(entry) <= 3:
            raise ProtocolError("a block maps 2 or 3 factors to lists of levels", where=at)
        unknown = [f for f in entry if f not in block_factors()]
        if unknown:
            raise ProtocolError(
                f"factor(s) {unknown} cannot be crossed", where=at,
                hint=f"block factors: {', '.join(block_factors())}",
            )
        names = tuple(sorted(entry, key=record_factors().index))
        sels: list[tuple[str, ...]] = []
        for name in names:
            sel = entry[name]
            if not isinstance(sel, list) or len(sel) < 2 or len({str(s) for s in sel}) != len(sel):
                raise ProtocolError(
                    f"levels of {name!r} must be a list of at least 2 distinct levels", where=f"{at}/{name}"
                )
            sel_t = tuple(str(s) for s in sel)
            missing = [lv for lv in sel_t if lv not in levels.get(name, ())]
            if missing:
                raise ProtocolError(
                    f"block level(s) {missing} of {name!r} are not OFAT levels of the profile",
                    where=f"{at}/{name}",
                    hint="select them under 'levels' too: the additive model is predicted from "
                    "the OFAT rows",
                )
            sels.append(sel_t)
        block = Block(names, tuple(sels))
        if any(b.id == block.id for b in out):
            raise ProtocolError(f"block {block.id} declared twice", where=at)
        out.append(block)
    return tuple(out)


@dataclass(frozen=True)
class SearchBlock:
    """A profile's ``search`` block (docs/search.md): the defaults of ``t3d-audit
    search --profile P``: ``objective`` (``shift``, ``ranking``, ``pair:A,B``), ``budget``
    (configurations), ``split`` (discovery, held-out prompt counts; ``None``: the profile's
    prompts and as many again), ``seed``, ``flip_points`` (Sobol points, 0: none)."""

    objective: str = "shift"
    budget: int = 40
    split: tuple[int, int] | None = None
    seed: int = 0
    flip_points: int = 0


SEARCH_KEYS = frozenset({"objective", "budget", "split", "seed", "flip_points"})


def _parse_search(raw: object, where: str) -> SearchBlock:
    """A profile's ``search`` object (every key optional; see :class:`SearchBlock`)."""
    if not isinstance(raw, dict):
        raise ProtocolError("'search' must be an object", where=where,
                            hint=f"keys: {', '.join(sorted(SEARCH_KEYS))}")  # fmt: skip
    unknown = sorted(set(raw) - SEARCH_KEYS)
    if unknown:
        raise ProtocolError(f"unknown search key(s) {unknown}", where=where,
                            hint=f"allowed: {sorted(SEARCH_KEYS)}")  # fmt: skip
    block = SearchBlock()
    from harness.protocol.search_limits import check_int, check_objective_form

    try:
        objective = check_objective_form(raw.get("objective", block.objective), where=f"{where}/objective")
    except AuditError as exc:
        raise ProtocolError(exc.what, where=exc.where) from None

    counts = {}
    for key, limit in (("budget", "budget"), ("seed", "seed"), ("flip_points", "flip_points")):
        try:
            counts[key] = check_int(limit, raw.get(key, getattr(block, key)), where=f"{where}/{key}")
        except AuditError as exc:
            raise ProtocolError(exc.what, where=exc.where) from None
    split = raw.get("split")
    if split is not None:
        ok = isinstance(split, list) and len(split) == 2
        try:
            if not ok:
                raise AuditError(f"'split' must be [discovery, held-out] prompt counts, got {split!r}")
            split = (check_int("discovery", split[0], where=f"{where}/split/0"),
                     check_int("held_out", split[1], where=f"{where}/split/1"))  # fmt: skip
        except AuditError as exc:
            raise ProtocolError(exc.what, where=exc.where or f"{where}/split",
                                hint="[discovery >= 1, held-out >= 2] prompt counts") from None  # fmt: skip
    return SearchBlock(objective, counts["budget"], split, counts["seed"], counts["flip_points"])


def _parse_profile(name: str, data: dict[str, object]) -> Profile:
    where = f"{PROFILES_FILE}#/{name}"
    if not isinstance(data, dict):
        raise ProtocolError("profile must be an object", where=where)
    unknown = sorted(set(data) - PROFILE_KEYS)
    if unknown:
        raise ProtocolError(
            f"unknown profile key(s) {unknown}",
            where=where,
            hint=f"allowed: {sorted(PROFILE_KEYS)}",
        )
    try:
        c0 = RenderConfig(**data.get("c0", {}))
        levels: dict[str, tuple[str, ...]] = {}
        for factor, sel in data["levels"].items():
            if factor not in factors():
                raise ProtocolError(f"unknown factor {factor!r}", where=f"{where}/levels")
            if sel == "all":
                levels[factor] = factors()[factor].levels
            elif isinstance(sel, list):
                levels[factor] = tuple(str(s) for s in sel)
            else:
                raise ProtocolError(
                    f'levels of {factor!r} must be "all" or a list, got {sel!r}',
                    where=f"{where}/levels/{factor}",
                )
            if len(set(levels[factor])) != len(levels[factor]):
                raise ProtocolError(
                    f"repeated level in {factor!r}", where=f"{where}/levels/{factor}"
                )
            for level in levels[factor]:
                try:
                    check_level(factor, level)
                except ProtocolError as exc:
                    raise ProtocolError(
                        exc.what, where=f"{where}/levels/{factor}", hint=exc.hint
                    ) from None
        check_level("resolution", str(c0.resolution_px))
        probes = tuple(data.get("probes", probe_names()))
        for probe in probes:
            check_level("probe", probe)
        prompts = data.get("prompts")
        if prompts is not None and (type(prompts) is not int or prompts < 1):
            raise ProtocolError(f"'prompts' must be a positive integer or null, got {prompts!r}")
        bootstrap = data.get("bootstrap", 2000)
        if type(bootstrap) is not int or bootstrap < 1:
            raise ProtocolError(f"'bootstrap' must be a positive integer, got {bootstrap!r}")
        return Profile(
            name=name,
            description=data.get("description", ""),
            c0=c0,
            levels=levels,
            prompts=prompts,
            generators=tuple(data["generators"]) if data.get("generators") else None,
            probes=probes,
            evaluators=tuple(data.get("evaluators", ())),
            bootstrap=bootstrap,
            blocks=_parse_blocks(data.get("blocks", []), levels, where),
            search=_parse_search(data["search"], f"{where}/search") if "search" in data else None,
        )
    except ProtocolError as exc:
        if exc.where and exc.where.startswith(str(PROFILES_FILE)):
            raise
        raise ProtocolError(exc.what, where=where, hint=exc.hint) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ProtocolError(f"malformed profile: {exc!r}", where=where) from exc


def load_profiles() -> dict[str, Profile]:
    """All profiles declared in ``harness/profiles.json``, parsed against the factors and
    probes registered now (a profile's ``"all"`` levels and default probes read them)."""
    return _load_profiles(FACTORS.version, _PROBES.version)


@lru_cache(maxsize=1)
def _load_profiles(_factors_version: int, _probes_version: int) -> dict[str, Profile]:
    try:
        raw = json.loads(PROFILES_FILE.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"cannot read profiles: {exc}", where=PROFILES_FILE) from exc
    if not isinstance(raw, dict):
        raise ProtocolError("profiles file must map profile name -> profile", where=PROFILES_FILE)
    return {name: _parse_profile(name, data) for name, data in raw.items()}


def get_profile(name: str) -> Profile:
    """The named profile, or a :class:`ProtocolError` listing the known ones."""
    profiles = load_profiles()
    if name not in profiles:
        raise ProtocolError(
            f"unknown profile {name!r}",
            where="--audit-profile",
            hint=f"use one of {', '.join(profiles)}",
        )
    return profiles[name]


def shared_family(profile: str | Profile = "paper") -> list[Configuration]:
    """Baseline + every selected shared-factor level of ``profile`` (paraphrase excluded).

    ``shared_family("paper")`` is the study's 387-configuration family used for ranking,
    envelopes and the simultaneous bootstrap.
    """
    chosen = get_profile(profile) if isinstance(profile, str) else profile
    return chosen.shared_configurations()
