"""The one place where the audit session meets the other parts of the harness.

Every call the plugin, the measurement pipeline and the report writer make into scenes,
probes, captions, records, rendering, evaluators and statistics goes through this module, so
an interface change elsewhere is adjusted here only. Imports are lazy: collecting the audit
suite or running ``--help`` loads none of these parts (and never bpy or torch).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from harness.errors import AuditError, EvaluatorError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from harness.protocol import RenderConfig
    from harness.scenes.model import Scene



# ----------------------------------------------------------------------------- protocols


@runtime_checkable
class Renderer(Protocol):
    """What the pipeline needs from a renderer. ``identity`` names it in cache keys and cards."""

    identity: str

    def render(
        self, scene: Scene, scene_root: Path, identity: str, cfg: RenderConfig
    ) -> np.ndarray:
        """RGBA ``(H, W, 4)`` uint8 with a transparent film; raises ``RenderError`` on failure."""
        ...


@runtime_checkable
class EvaluatorSpecLike(Protocol):
    """What the session needs from an evaluator spec (``harness.evaluators.base.EvaluatorSpec``)."""

    id: str
    needs_text: bool

    def identity(self) -> dict[str, Any]: ...

    @property
    def identity_hash(self) -> str: ...

    def build(self, device: str = "auto", batch_size: int = 32) -> Any: ...


# ----------------------------------------------------------------------------- scenes


def load_scene_set(path: Path | None, cache_dir: Path | None = None) -> Any:
    """The scene set at ``path`` (a scene-set directory, a sceneState JSON or a GLB), verified.

    ``None`` means the bundled set in ``fixtures/scenes``. A single scene file is imported into
    ``<cache_dir>/imports/<16 hex of its sha256>`` (the same file always lands in one place).
    """
    from harness.paths import BUNDLED_SCENES
    from harness.scenes.sceneset import SceneSet

    root = Path(path) if path is not None else BUNDLED_SCENES
    if root.is_file():
        from harness.hashing import sha256_file
        from harness.scenes.importers import import_scene_set

        out = None if cache_dir is None else Path(cache_dir) / "imports" / sha256_file(root)[:16]
        return import_scene_set(root, out_root=out)
    return SceneSet.load(root, verify=True)


def select_scenes(scene_set: Any, prompts: int | None, generators: Sequence[str] | None) -> Any:
    """The profile's slice of the set: first ``prompts`` prompt ids, the named generators."""
    return scene_set.select(prompts, generators)


def scene_set_sha256(scene_set: Any) -> str:
    """One hash over every selected scene's identity (order-independent)."""
    from harness.hashing import sha256_json

    return sha256_json(sorted(scene_set.identity(s.id) for s in scene_set.scenes))


def scene_identity(scene: Scene, root: Path) -> str:
    """Identity of a (possibly probe-edited) scene: canonical JSON plus its assets' bytes."""
    from harness.scenes.model import scene_identity as _identity

    return _identity(scene, root)


def scene_input_files(scene_set: Any) -> list[Path]:
    """Every file the selected scenes are read from: scene JSON files and their assets."""
    files: set[Path] = set()
    root = Path(scene_set.root)
    for scene in scene_set.scenes:
        with contextlib.suppress(AuditError):  # imported scenes have no file of their own
            files.add(Path(scene_set.path_of(scene.id)))
        files.update(root / asset for asset in scene.used_assets)
        for obj in scene.objects:
            for cand in obj.candidates or ():
                files.add(root / cand.asset)
    return sorted(f for f in files if f.is_file())


def apply_probe(scene: Scene, probe: str, seed: int) -> Scene:
    """The probe-edited copy of ``scene`` (``keep_half``, ``biggest_only``, ...)."""
    from harness import probes

    return probes.apply(scene, probe, seed=seed)


# ----------------------------------------------------------------------------- captions


def default_template_id() -> str:
    from harness.captions import DEFAULT_TEMPLATE_ID

    return DEFAULT_TEMPLATE_ID


def realize(template_id: str, prompt: str) -> str:
    from harness.captions import realize as _realize

    return _realize(template_id, prompt)


def template_count() -> int:
    from harness.captions import template_ids

    return len(template_ids())


def paraphrase_captions(prompt_id: str, prompt: str, template_id: str) -> list[tuple[str, str]] | None:
    """``[(level, caption)]`` after the duplicate-collapse rule, wrapped by ``template_id``.

    ``None`` when the bundled paraphrase file has no entry for ``prompt_id`` or the entry is
    for another prompt text (scenes imported from elsewhere that reuse an id): the pipeline
    then records no paraphrase rows for that prompt rather than score foreign rewrites.
    """
    from harness.captions import paraphrase

    if not Path(paraphrase.BUNDLED_PARAPHRASES).is_file():
        return None
    entries = paraphrase.load_paraphrases()
    entry = entries.get(prompt_id)
    if entry is None or paraphrase.normalise(entry.original) != paraphrase.normalise(prompt):
        return None
    return paraphrase.distinct_captions(entry, template_id)


def paraphrase_file() -> Path | None:
    from harness.captions import paraphrase

    path = Path(paraphrase.BUNDLED_PARAPHRASES)
    return path if path.is_file() else None


# ----------------------------------------------------------------------------- rendering


def composite(rgba: np.ndarray, background_level: str) -> np.ndarray:
    """``(H, W, 3)`` uint8: the render over the background level's colour."""
    from harness.protocol import background_rgb
    from harness.render.composite import composite as _composite

    return _composite(rgba, background_rgb(background_level))


class _ServiceRenderer:
    """Adapter giving H5's ``RenderService`` the :class:`Renderer` shape."""

    def __init__(self, cache_dir: Path):
        from harness.render.service import RenderService

        self._service = RenderService(cache_dir)
        self.identity = str(getattr(self._service, "identity", None) or _blender_identity())

    def render(self, scene: Scene, scene_root: Path, identity: str, cfg: RenderConfig) -> np.ndarray:
        return self._service.render(scene, scene_root, identity, cfg)

    @property
    def rendered(self) -> int:
        """Renders this process actually made (render-cache misses)."""
        return self._service.rendered

    def host(self) -> dict[str, Any]:
        return self._service.host()


def _blender_identity() -> str:
    try:
        from harness.render.cache import RENDERER_REVISION, blender_version

        return f"blender-{blender_version()}-rev{RENDERER_REVISION}"
    except ImportError:
        return "blender"


def render_host(renderer: Any) -> dict[str, Any] | None:
    """``renderer.host()`` when the renderer has one (Blender: CPU model, Blender build, Cycles
    device and kernel, see :mod:`harness.render.host`), else ``None`` (e.g. a test rasteriser)."""
    host = getattr(renderer, "host", None)
    return dict(host()) if callable(host) else None


def default_renderer(cache_dir: Path) -> Renderer:
    """The Blender render service, caching under ``cache_dir``."""
    return _ServiceRenderer(Path(cache_dir))


def is_render_failure(exc: BaseException) -> bool:
    """True for the typed render failures the pipeline records as failed rows."""
    from harness.errors import RenderError

    return isinstance(exc, RenderError)


# ----------------------------------------------------------------------------- evaluators


def select_evaluators(patterns: Sequence[str], extra: Iterable[Any] = ()) -> list[Any]:
    """Specs matching ids/globs in ``patterns``, sorted by id.

    ``extra`` specs (from ``pytest_audit_evaluators``) are matched with the same patterns and
    win over registry specs with the same id. Without patterns: the extra specs if any, else
    every registered evaluator whose weights (or API key) are available locally.
    """
    import fnmatch

    from harness.evaluators import registry

    extra = list(extra)
    registered = registry.all_specs()
    chosen: dict[str, Any] = {}
    if not patterns:
        pool = extra or [s for s in registered if s.weights_available()]
        chosen = {s.id: s for s in pool}
    for pattern in patterns:
        pattern = pattern.strip()
        hits = [s for s in extra if fnmatch.fnmatchcase(s.id, pattern)]
        hits += [
            s for s in registered
            if fnmatch.fnmatchcase(s.id, pattern) and s.id not in {e.id for e in extra}
        ]
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


def evaluator_weight_files(spec: Any) -> list[Path]:
    """Local weight files of ``spec`` where known (hashed into the manifest)."""
    ckpt = str(getattr(spec, "checkpoint", "") or "")
    path = Path(ckpt)
    if ckpt and path.is_file():
        return [path]
    return []


# ----------------------------------------------------------------------------- records


def records_frame(rows: list[tuple]) -> pd.DataFrame:
    """The tidy records table from rows in :data:`harness.records.COLUMNS` order, each
    optionally followed by a served model id (the ``served_model`` column is kept only when
    some row has one)."""
    import pandas as pd

    from harness.records import COLUMNS, SERVED_MODEL

    served = [r[len(COLUMNS)] if len(r) > len(COLUMNS) else "" for r in rows]
    frame = pd.DataFrame([r[: len(COLUMNS)] for r in rows], columns=list(COLUMNS))
    frame["score"] = frame["score"].astype("float64")
    if any(served):
        frame[SERVED_MODEL] = served
    return frame


def write_records(frame: pd.DataFrame, path: Path) -> None:
    """Write a records file (CSV or Parquet by suffix), validated, byte-stable."""
    from harness import records

    records.write_records(frame, path)


def read_records(path: Path) -> pd.DataFrame:
    """Read and validate a records file written by :func:`write_records`."""
    from harness import records

    return records.read_records(path)


# ----------------------------------------------------------------------------- statistics


def compute_summary(records: pd.DataFrame, bootstrap: int, seed: int) -> dict[str, Any]:
    """The summary dict (docs/formats.md "summary.json") of ``records`` (plain builtins, JSON-ready).

    Each evaluator entry also carries ``intervals``: pointwise 95 % bootstrap intervals of
    ``rho``, ``dispersion`` (per factor) and ``discrimination`` (per probe), ``None`` ends
    where the bootstrap is off or undefined. Assertion messages print them.
    """
    return summary_of(compute_audit(records, bootstrap, seed))


def summary_of(result: Any) -> dict[str, Any]:
    """The summary dict (with ``intervals``, see :func:`compute_summary`) of an ``AuditResult``."""
    summary = result.to_summary()
    for name, ev in result.evaluators.items():
        summary["evaluators"][name]["intervals"] = {
            "rho": {f: _pair(ci) for f, ci in ev.rho_ci.items()},
            "dispersion": {f: _pair(ci) for f, ci in ev.dispersion_ci.items()},
            "discrimination": {
                p: _pair(st.ci.get("discrimination")) for p, st in ev.probes.items()
            },
        }
    return summary


def _pair(ci: Any) -> list[float | None] | None:
    import math

    if ci is None:
        return None
    lo, hi = (float(v) for v in ci)
    return [lo if math.isfinite(lo) else None, hi if math.isfinite(hi) else None]


def companion_agreement(records: pd.DataFrame, companion_records: pd.DataFrame) -> Any:
    """``CompanionAgreement`` of the one evaluator in ``records`` with the companion check's
    records (both pivoted together, so they share generator and prompt axes)."""
    import pandas as pd

    from harness.stats.companion import companion_agreement as _agreement
    from harness.stats.table import pivot_records

    ev_ids = sorted(set(records["evaluator"]))
    co_ids = sorted(set(companion_records["evaluator"]))
    if len(ev_ids) != 1 or len(co_ids) != 1:
        raise AuditError(
            f"companion agreement needs one evaluator on each side, got {ev_ids} and {co_ids}",
            where="companion check",
        )
    pivoted = pivot_records(pd.concat([records, companion_records], ignore_index=True))
    return _agreement(pivoted[ev_ids[0]], pivoted[co_ids[0]])


def compute_audit(records: pd.DataFrame, bootstrap: int, seed: int) -> Any:
    """H3's ``AuditResult`` (tables and figures read from it), with the same data-file inputs
    (template slots, default template, lighting EV/CCT) as ``t3d-audit report``."""
    from harness.report.inputs import audit_inputs
    from harness.stats.audit import compute_audit as _compute

    return _compute(records, bootstrap=bootstrap, seed=seed, **audit_inputs(records))


def write_tables(result: Any, out_dir: Path) -> list[Path]:
    """Every statistics table (Markdown + CSV) under ``out_dir``; returns the files written."""
    from harness.report import tables

    written = tables.write_tables(result, out_dir)
    return sorted(Path(p) for p in (written or []))
