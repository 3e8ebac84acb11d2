"""A loaded scene set: frozen scenes of several generators for several prompts.

``SceneSet.load(root)`` verifies the manifest (frozen-scene rule), loads and validates every
listed scene and checks the set invariants (unique scene ids, one scene per
(generator, prompt_id), one prompt text per prompt id). Scenes are ordered by
(prompt_id, generator), so iteration order — and everything derived from it — is stable.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from harness.core.errors import SceneError
from harness.core.hashing import sha256_file, sha256_json
from harness.scenes.load import validate_scene
from harness.scenes.model import Scene, scene_identity
from harness.scenes.set_manifest import (
    check_set_invariants,
    load_listed_scenes,
    read_manifest,
    scene_asset_paths,
    verify_manifest,
)


class SceneSet:
    """Immutable view of validated scenes under one root (see module docstring).

    Attributes: ``root`` (resolved Path), ``scenes`` (tuple sorted by (prompt_id, generator)),
    ``generators`` and ``prompt_ids`` (sorted tuples), ``prompts`` (prompt_id -> prompt text),
    ``manifest`` (the manifest dict, or None for imported scenes).
    """

    __slots__ = ("_asset_sha", "_by_id", "_identity", "_paths", "manifest", "root", "scenes")

    def __init__(
        self,
        root: Path,
        scenes: Iterable[Scene],
        *,
        paths: Mapping[str, Path] | None = None,
        manifest: dict | None = None,
        asset_sha256: dict[str, str] | None = None,
        identity_cache: dict[str, str] | None = None,
    ):
        """Internal: use :meth:`load` or :meth:`from_scenes`. Checks set invariants."""
        self.root = Path(root)
        ordered = tuple(sorted(scenes, key=lambda s: (s.prompt_id, s.generator, s.id)))
        by_id: dict[str, str] = {}
        by_cell: dict[tuple[str, str], str] = {}
        prompts: dict[str, str] = {}
        for scene in ordered:
            where = str((paths or {}).get(scene.id, f"<scene {scene.id}>"))
            check_set_invariants(scene, where, by_id, by_cell, prompts)
        self.scenes: tuple[Scene, ...] = ordered
        self.manifest = manifest
        self._by_id = {s.id: s for s in ordered}
        self._paths = dict(paths or {})
        self._asset_sha = asset_sha256 if asset_sha256 is not None else {}
        self._identity = identity_cache if identity_cache is not None else {}

    # construction ----------------------------------------------------------------------------

    @classmethod
    def load(cls, root: Path | str, *, verify: bool = True) -> SceneSet:
        """Load the scene set under ``root`` (which holds ``manifest.json``).

        ``verify=True`` enforces the frozen-scene rule (sha256 of every listed file, no
        unlisted scene files) and then trusts the manifest's asset hashes for identities.
        ``verify=False`` only reads the manifest's list; identities hash asset files on demand.
        Raises ManifestError / SceneError.
        """
        root = Path(root).resolve()
        doc = verify_manifest(root) if verify else read_manifest(root)
        listed = load_listed_scenes(root, doc)
        asset_sha = {e["path"]: e["sha256"] for e in doc["assets"]} if verify else {}
        return cls(
            root,
            (scene for _, scene in listed),
            paths={scene.id: root / rel for rel, scene in listed},
            manifest=doc,
            asset_sha256=asset_sha,
        )

    @classmethod
    def from_scenes(cls, root: Path | str, scenes: Iterable[Scene]) -> SceneSet:
        """A scene set of in-memory (e.g. imported) scenes whose assets live under ``root``.

        Each scene passes the same validation as a scene file (``validate_scene``).
        """
        root = Path(root).resolve()
        checked = [validate_scene(s, root, path=f"<scene {s.id}>") for s in scenes]
        if not checked:
            raise SceneError("no scenes given", path=root, hint="a scene set has >= 1 scene")
        return cls(root, checked)

    # queries ---------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.scenes)

    def __iter__(self) -> Iterator[Scene]:
        return iter(self.scenes)

    def __repr__(self) -> str:
        return (
            f"SceneSet(root={str(self.root)!r}, scenes={len(self.scenes)}, "
            f"generators={list(self.generators)}, prompts={len(self.prompt_ids)})"
        )

    @property
    def generators(self) -> tuple[str, ...]:
        """Sorted distinct generator names."""
        return tuple(sorted({s.generator for s in self.scenes}))

    @property
    def kind(self) -> str:
        """The scenes' kind, ``room`` or ``object`` (an empty set is ``room``).

        Raises :class:`SceneError` for a set that mixes kinds: the two are measured from
        different default views (``harness.protocol.configurations.KindView``), so one audit cannot hold both.
        """
        kinds = sorted({s.kind for s in self.scenes})
        if len(kinds) > 1:
            counts = {k: sum(s.kind == k for s in self.scenes) for k in kinds}
            raise SceneError(
                f"the scene set mixes scene kinds {counts}",
                path=self.root,
                hint="rooms and single objects are audited from different default views; "
                "import them into separate scene sets and audit each on its own",
            )
        return kinds[0] if kinds else "room"

    @property
    def prompt_ids(self) -> tuple[str, ...]:
        """Sorted distinct prompt ids."""
        return tuple(sorted({s.prompt_id for s in self.scenes}))

    @property
    def prompts(self) -> dict[str, str]:
        """prompt_id -> prompt text (a fresh dict, in prompt id order)."""
        return {s.prompt_id: s.prompt for s in self.scenes}

    @property
    def asset_paths(self) -> tuple[str, ...]:
        """Sorted asset paths used or listed as candidates by any scene."""
        out: set[str] = set()
        for scene in self.scenes:
            out |= scene_asset_paths(scene)
        return tuple(sorted(out))

    def scene(self, scene_id: str) -> Scene:
        """The scene with this id; SceneError if absent."""
        try:
            return self._by_id[scene_id]
        except KeyError:
            raise SceneError(
                f"no scene with id {scene_id!r} in this scene set",
                path=self.root,
                hint="see SceneSet.scenes for the ids",
            ) from None

    def path_of(self, scene_id: str) -> Path:
        """Absolute path of the scene's file; SceneError for unknown or in-memory scenes."""
        self.scene(scene_id)
        try:
            return self._paths[scene_id]
        except KeyError:
            raise SceneError(
                f"scene {scene_id!r} has no file (it was imported or built in memory)",
                path=self.root,
            ) from None

    def identity(self, scene_id: str) -> str:
        """Cached ``scene_identity`` (sha256 over canonical scene JSON + asset bytes)."""
        cached = self._identity.get(scene_id)
        if cached is None:
            scene = self.scene(scene_id)
            for asset in scene.used_assets:
                if asset not in self._asset_sha:
                    self._asset_sha[asset] = sha256_file(self.root / asset)
            cached = scene_identity(scene, self.root, asset_sha256=self._asset_sha)
            self._identity[scene_id] = cached
        return cached

    def selection_sha256(self) -> str:
        """One hash over every scene's identity (order-independent): the scene set a run used."""
        return sha256_json(sorted(self.identity(s.id) for s in self.scenes))

    def input_files(self) -> list[Path]:
        """Every existing file the scenes are read from: scene JSON files (imported scenes have
        none of their own) and every asset used or listed as a candidate, sorted."""
        files: set[Path] = set()
        for scene in self.scenes:
            with contextlib.suppress(SceneError):
                files.add(Path(self.path_of(scene.id)))
            files.update(self.root / asset for asset in scene.used_assets)
            for obj in scene.objects:
                for cand in obj.candidates or ():
                    files.add(self.root / cand.asset)
        return sorted(f for f in files if f.is_file())

    def select_for_profile(
        self, prompts: int | None = None, generators: Iterable[str] | None = None
    ) -> SceneSet:
        """:meth:`select` for a profile's ``prompts`` / ``generators``: a generator list that
        names none of this set's generators (a profile written for another scene set, e.g. the
        bundled one, used on an imported set) selects all of them; a list naming some of them
        must name only generators of this set (else :meth:`select`'s SceneError)."""
        if generators is not None and not set(generators) & set(self.generators):
            generators = None
        return self.select(prompts, generators)

    def _subset(self, chosen: list[Scene]) -> SceneSet:
        """A set of ``chosen`` (some of this set's scenes), sharing its manifest and hash caches."""
        return SceneSet(
            self.root,
            chosen,
            paths={s.id: self._paths[s.id] for s in chosen if s.id in self._paths},
            manifest=self.manifest,
            asset_sha256=self._asset_sha,
            identity_cache=self._identity,
        )

    def with_prompts(self, prompt_ids: Iterable[str]) -> SceneSet:
        """The sub-set of the scenes of ``prompt_ids`` (every generator): a search's discovery
        or held-out split. Raises SceneError for a prompt id the set does not hold."""
        wanted = set(prompt_ids)
        unknown = sorted(wanted - set(self.prompt_ids))
        if unknown or not wanted:
            raise SceneError(f"no scenes of prompt {unknown[0]!r}" if unknown else "no prompts given",
                             path=self.root)  # fmt: skip
        chosen = [s for s in self.scenes if s.prompt_id in wanted]
        return self._subset(chosen)

    def select(
        self, prompts: int | None = None, generators: Iterable[str] | None = None
    ) -> SceneSet:
        """The sub-set of the first ``prompts`` prompt ids (sorted order; all if None or more
        than available) and the named ``generators`` (all if None).

        Raises SceneError for ``prompts < 1`` or an unknown generator name.
        """
        keep_gens = set(self.generators)
        if generators is not None:
            wanted = tuple(generators)
            unknown = sorted(set(wanted) - keep_gens)
            if unknown:
                raise SceneError(
                    f"unknown generator {unknown[0]!r}",
                    path=self.root,
                    hint=f"available: {', '.join(self.generators)}",
                )
            keep_gens = set(wanted)
        keep_prompts = set(self.prompt_ids)
        if prompts is not None:
            if isinstance(prompts, bool) or not isinstance(prompts, int) or prompts < 1:
                raise SceneError(
                    f"prompt count must be a positive integer, got {prompts!r}", path=self.root
                )
            keep_prompts = set(self.prompt_ids[:prompts])
        chosen = [
            s for s in self.scenes if s.generator in keep_gens and s.prompt_id in keep_prompts
        ]
        return self._subset(chosen)
