"""Offline weight resolution: local paths, the override directory and the Hugging Face cache.

Nothing here imports torch or touches the network. Resolution order for an evaluator:

1. ``spec.checkpoint`` when it is an existing local file or directory;
2. ``$T3D_AUDIT_WEIGHTS_DIR/<evaluator id>`` (a file such as ``<id>.safetensors``, or a
   directory written by ``save_pretrained`` / holding ``open_clip_model.safetensors``);
3. the Hugging Face hub cache (``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
   ``~/.cache/huggingface/hub``) entry ``models--<org>--<name>/snapshots/<rev>/``.

open_clip's URL cache (``~/.cache/clip``) is not consulted: the OpenAI files there are
TorchScript archives, which ``torch.load(weights_only=True)`` refuses; the same weights come
from timm's Hugging Face mirror as safetensors.

When none holds the weights and the machine is offline (``HF_HUB_OFFLINE=1`` or
``T3D_AUDIT_OFFLINE=1``), loading fails with :func:`missing_weights_error`, which names the
evaluator and the three ways to provide the weights.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from harness.core.errors import EvaluatorError
from harness.core.paths import REPO_ROOT
from harness.evaluators.families import find_family
from harness.evaluators.judge_settings import JudgeSettings

WEIGHTS_DIR_ENV = "T3D_AUDIT_WEIGHTS_DIR"
OFFLINE_ENVS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "T3D_AUDIT_OFFLINE")
_TRUE = {"1", "true", "yes", "on"}
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")


class ResolvableSpec(Protocol):
    """What weight resolution reads of a spec; :class:`harness.evaluators.base.EvaluatorSpec`
    has it (this module sits below ``base``, which calls it, and never imports it)."""

    @property
    def id(self) -> str: ...
    @property
    def adapter(self) -> str: ...
    @property
    def checkpoint(self) -> str: ...
    @property
    def hub_repo(self) -> str: ...
    @property
    def hub_files(self) -> tuple[str, ...]: ...
    def option(self, key: str, default: object = None) -> object: ...


def is_offline() -> bool:
    """True when any of ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``/``T3D_AUDIT_OFFLINE`` is set."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in OFFLINE_ENVS)


def hf_hub_cache() -> Path:
    """The Hugging Face hub cache directory, resolved the way huggingface_hub resolves it."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HUGGINGFACE_HUB_CACHE"):
        return Path(os.environ["HUGGINGFACE_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def hub_snapshot(repo: str, files: tuple[str, ...] = ()) -> Path | None:
    """The cached snapshot directory of ``repo`` holding every name in ``files``.

    Each entry of ``files`` may list alternatives separated by ``|`` (any one suffices).
    Returns None when the repo or a required file is not in the cache. The ``refs/main``
    snapshot is preferred; otherwise any complete snapshot is accepted.
    """
    root = hf_hub_cache() / ("models--" + repo.strip("/").replace("/", "--"))
    snapshots = root / "snapshots"
    if not snapshots.is_dir():
        return None
    candidates: list[Path] = []
    ref = root / "refs" / "main"
    if ref.is_file():
        candidates.append(snapshots / ref.read_text(encoding="utf-8").strip())
    candidates += sorted(p for p in snapshots.iterdir() if p.is_dir() and p not in candidates)
    for snap in candidates:
        if snap.is_dir() and all(_first_present(snap, names) for names in files):
            return snap
    return None


def _first_present(folder: Path, alternatives: str) -> Path | None:
    for name in alternatives.split("|"):
        path = folder / name
        if path.exists():  # symlinks into blobs/ count only when the blob exists
            return path
    return None


@dataclass(frozen=True)
class Resolved:
    """Where an evaluator's weights were found: ``kind`` is path, override or hub."""

    kind: str
    path: Path


def _weights_kind(spec: ResolvableSpec) -> str:
    """How the spec's family finds its weights (``files``, ``api_key``, ``none``; see
    :class:`~harness.evaluators.families.Family`); an unregistered adapter has none."""
    family = find_family(spec.adapter)
    return family.weights if family is not None else "none"


def resolve(spec: ResolvableSpec) -> Resolved | None:
    """Find the spec's weights locally (see the module docstring); None when absent."""
    if _weights_kind(spec) == "api_key":
        return None
    local = local_path(spec.checkpoint)
    if local is not None:
        return Resolved("path", local)
    override = _override(spec)
    if override is not None:
        return Resolved("override", override)
    if spec.hub_repo:
        snap = hub_snapshot(spec.hub_repo, spec.hub_files)
        if snap is not None:
            return Resolved("hub", snap)
    return None


def local_path(value: str) -> Path | None:
    """``value`` as an existing local path (absolute, or relative to the repository root)."""
    if not value or ("/" not in value and "\\" not in value):
        return None  # a bare tag such as "openai" or "webli" is never a path
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = REPO_ROOT / path
    return path if path.exists() else None


def _override(spec: ResolvableSpec) -> Path | None:
    base = os.environ.get(WEIGHTS_DIR_ENV)
    if not base:
        return None
    root = Path(base).expanduser()
    folder = root / spec.id
    if folder.is_dir():
        return folder
    for suffix in _WEIGHT_SUFFIXES:
        if (root / f"{spec.id}{suffix}").is_file():
            return root / f"{spec.id}{suffix}"
    return None


def tokenizer_available(repo: str) -> bool:
    """True when a tokenizer for ``repo`` is in the hub cache (or ``repo`` is a local dir)."""
    if Path(repo).expanduser().is_dir():
        return True
    return hub_snapshot(repo, ("tokenizer.json|tokenizer_config.json|vocab.txt",)) is not None


def available(spec: ResolvableSpec) -> bool:
    """Offline availability: weights present locally (and the tokenizer, when separate).

    For a hosted API family (the judge) this means the API key variable is set (its value is
    not read out); a family without weights (user scoring code, the companion) is available.
    """
    kind = _weights_kind(spec)
    if kind == "api_key":
        return bool(os.environ.get(str(spec.option("api_key_env", JudgeSettings.api_key_env)), ""))
    if kind != "files":
        return True
    if resolve(spec) is None:
        return False
    tokenizer = spec.option("hf_tokenizer")
    return not tokenizer or tokenizer_available(str(tokenizer))


def missing_weights_error(spec: ResolvableSpec, detail: str = "") -> EvaluatorError:
    """The error raised when an evaluator's weights cannot be found (offline or otherwise)."""
    where_hub = f"Hugging Face repo {spec.hub_repo!r}" if spec.hub_repo else "its checkpoint"
    download = (
        f"`huggingface-cli download {spec.hub_repo}` on a connected machine and copy the "
        f"cache ({hf_hub_cache()}) here"
        if spec.hub_repo
        else "download the checkpoint on a connected machine"
    )
    hint = (
        f"provide the weights by one of: {download}; or put them at "
        f"${WEIGHTS_DIR_ENV}/{spec.id} (a file or a save_pretrained directory); or register "
        f"the evaluator with checkpoint=<absolute local path>"
    )
    if spec.option("hf_tokenizer"):
        hint += f"; its tokenizer comes from {spec.option('hf_tokenizer')!r}"
    what = f"weights for evaluator {spec.id!r} ({where_hub}) are not available offline"
    if detail:
        what += f": {detail}"
    return EvaluatorError(what, where=spec.checkpoint or spec.id, hint=hint)


def require(spec: ResolvableSpec) -> Resolved | None:
    """Resolve the weights, or raise when offline and absent.

    Returns None when absent but online: the adapter may then let its library download.
    """
    found = resolve(spec)
    if found is None and is_offline():
        raise missing_weights_error(spec)
    tokenizer = spec.option("hf_tokenizer")
    if found is not None and tokenizer and is_offline() and not tokenizer_available(tokenizer):
        raise missing_weights_error(spec, f"tokenizer {tokenizer!r} is not cached")
    return found
