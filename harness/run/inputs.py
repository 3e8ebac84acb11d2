"""What one audit run measures: the resolved profile, scene set, measurement plan, evaluator
specs and renderer (with ``--audit-store``: the store's renderer and score cache).

Lazy: nothing loads until asked; :class:`harness.run.session.AuditSession` owns one
:class:`RunInputs` (``session.inputs``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from harness.render.renderer import Renderer, default_renderer

if TYPE_CHECKING:
    from harness.evaluators.base import EvaluatorSpec
    from harness.measure.plan import Plan
    from harness.protocol.profiles import Profile
    from harness.run.options import AuditOptions
    from harness.scenes.sceneset import SceneSet


class RunInputs:
    """The run's profile, scenes, plan, evaluator specs and renderer, resolved from its options."""

    def __init__(
        self,
        options: AuditOptions,
        *,
        renderer_factory: Callable[[Path], Renderer] | None = None,
        extra_evaluators: list[EvaluatorSpec] | None = None,
    ):
        self.options = options
        self._renderer_factory = renderer_factory or default_renderer
        self._extra = list(extra_evaluators or [])
        self.prompts_available = 0  # prompts of the scene set before the profile cuts it (scene_set)

    @cached_property
    def named_profile(self) -> Profile:
        """The profile as declared (``--audit-profile``, with ``--audit-profile-file``'s search
        block when that file gives one); it selects the scenes."""
        from harness.protocol.profiles import get_profile

        if self.options.profile_file is not None:
            return self.saved_profile.profile
        return get_profile(self.options.profile)

    @cached_property
    def saved_profile(self) -> object:
        """``--audit-profile-file``'s :class:`harness.search.saved_levels.SavedProfile` of the
        run's profile, ``None`` without that option."""
        if self.options.profile_file is None:
            return None
        from harness.search.saved_levels import audit_profile

        return audit_profile(self.options.profile_file, self.options.profile)

    @cached_property
    def profile(self) -> Profile:
        """The profile applied to the selected scenes' kind (rooms: as declared; single objects:
        their own default view and caption template, ``harness.protocol.configurations.KindView``)."""
        return self.named_profile.for_scene_kind(self.scene_set.kind)

    @property
    def bootstrap(self) -> int:
        return (
            self.options.bootstrap
            if self.options.bootstrap is not None
            else self.named_profile.bootstrap
        )

    @property
    def seed(self) -> int:
        return self.options.seed

    @cached_property
    def scene_set(self) -> SceneSet:
        from harness.scenes.scene_source import load_scene_set

        full = load_scene_set(self.options.scenes, self.options.cache_dir)
        self.prompts_available = len(full.prompt_ids)  # before the profile's cut (run_notes)
        return full.select_for_profile(self.named_profile.prompts, self.named_profile.generators)

    @cached_property
    def plan(self) -> Plan:
        from harness.measure.plan import build_plan

        return build_plan(
            self.scene_set, self.profile, probe_seed=self.options.probe_seed,
            view_policy=self.options.view_policy,
        )

    @cached_property
    def specs(self) -> dict[str, EvaluatorSpec]:
        """Selected evaluator specs by id (sorted): option ids/globs, else the profile's list."""
        from harness.run.evaluator_selection import select_evaluators
        from harness.search.known_answers import named_known_answers

        patterns = self.options.evaluators or tuple(self.named_profile.evaluators)
        extra = [*self._extra, *named_known_answers(patterns, self._extra)]  # planted-offgrid by id
        return {s.id: s for s in select_evaluators(patterns, extra)}

    @cached_property
    def renderer(self) -> Renderer:
        if not self.options.store:
            return self._renderer_factory(self.options.cache_dir / "renders")
        renderer = self._renderer_factory(self.options.store)
        cache = getattr(renderer, "cache", None)
        if hasattr(cache, "read_only"):  # the Blender service on the store: read unless filling
            cache.read_only = self.options.store_fill != "local"
        return renderer

    @property
    def renderer_identity(self) -> str:
        return str(getattr(self.renderer, "identity", type(self.renderer).__qualname__))

    def render_host(self) -> dict[str, object] | None:
        """The machine that renders (:func:`harness.render.renderer.host_facts`), for the manifest."""
        from harness.render.renderer import host_facts

        return host_facts(self.renderer)

    def score_cache(self) -> object:
        """The score cache in ``--audit-store`` (``None``: the local one under the cache dir)."""
        if not self.options.store:
            return None
        from harness.evaluators.score_store import open_score_cache

        return open_score_cache(self.options.store, read_only=self.options.store_fill != "local")

    def fill_command(self) -> str:
        """The command that fills ``--audit-store`` with everything this run reads."""
        parts = ["t3d-audit materialize", f"--profile {self.profile.name}",
                 f"--store {self.options.store}"]  # fmt: skip
        if self.options.scenes is not None:
            parts.append(f"--scenes {self.options.scenes}")
        if self.options.evaluators:
            parts.append(f"--evaluators {','.join(self.options.evaluators)}")
        return " ".join(parts) + " [--backend ray --address auto]"

    def check_store_complete(self, evaluator_id: str, missing_pairs: int) -> None:
        """Raise :class:`StoreIncomplete` when a read-only store lacked renders or scores."""
        from harness.store.stores import StoreIncomplete

        missing_renders = len(getattr(getattr(self.renderer, "cache", None), "missing", ()) or ())
        if not (missing_pairs or missing_renders):
            return
        what = " and ".join(
            f"{n} {noun}"
            for n, noun in ((missing_renders, "renders"), (missing_pairs, "score pairs"))
            if n
        )
        raise StoreIncomplete(
            f"the store lacks {what} that evaluator {evaluator_id} needs",
            where=self.options.store,
            hint=f"fill it with: {self.fill_command()}; or compute them on this machine with "
            "--audit-store-fill=local",
        )
