"""Evaluator protocol, score results and the frozen evaluator spec (identity for the card).

No heavy imports here: listing evaluators, hashing identities and reading cards never load
torch. Adapters are looked up in the open family table (:mod:`harness.evaluators.families`)
and their modules imported by :meth:`EvaluatorSpec.build` only.

Shapes and units
----------------
* images: ``Sequence[np.ndarray]``, each ``(H, W, 3)`` ``uint8`` RGB (any size; each adapter
  applies its own recorded preprocessing).
* captions: ``Sequence[str]``; for prompt-free evaluators (``needs_text=False``) the captions
  are ignored and the records store an empty caption.
* scores: ``float`` on the evaluator's recorded ``score_scale``; ``NaN`` whenever the status is
  ``failed`` (a failure is never a number).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from harness.core.errors import EvaluatorError
from harness.core.hashing import sha256_json
from harness.core.ids import check_evaluator_id
from harness.evaluators import weights
from harness.evaluators.families import get_family

if TYPE_CHECKING:
    import numpy as np

Status = Literal["ok", "failed"]

IDENTITY_FIELDS = (
    "id",
    "family",
    "adapter",
    "model_name",
    "checkpoint",
    "checkpoint_sha256",
    "preprocessing",
    "score_scale",
    "score_range",
    "instruction",
    "decoding",
    "needs_text",
    "max_text_tokens",
    "options",
)


def _score_range(value: object) -> tuple[float, float]:
    """``(low, high)`` of a declared score range as floats; ``(nan, nan)`` (refused by the
    caller) for anything but a pair of real numbers: three items, ``None``, strings, booleans,
    a value whose ``__float__`` or iteration raises."""
    import numbers

    try:
        items = list(value) if not isinstance(value, str | bytes) else []
        if len(items) == 2 and all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                                   for v in items):  # fmt: skip
            return float(items[0]), float(items[1])
    except Exception:  # a user object: any failure is a bad declaration
        pass
    return math.nan, math.nan


@dataclass(frozen=True)
class ScoreResult:
    """One scored (image, caption) pair.

    ``score`` is NaN unless ``status == "ok"``; ``error`` says why when failed. ``truncated``
    is True when the caption was longer than the evaluator's text window and was cut by its
    tokenizer. ``metadata`` carries provenance such as the model id a hosted API reported.
    """

    score: float
    status: Status = "ok"
    error: str = ""
    truncated: bool = False
    metadata: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in ("ok", "failed"):
            raise ValueError(f"status must be 'ok' or 'failed', got {self.status!r}")
        if self.status == "ok" and not math.isfinite(self.score):
            raise ValueError("an ok ScoreResult needs a finite score")
        if self.status == "failed" and not math.isnan(self.score):
            raise ValueError("a failed ScoreResult must carry a NaN score, never a number")

    @classmethod
    def ok(cls, score: float, *, truncated: bool = False, **metadata: str) -> ScoreResult:
        return cls(float(score), "ok", "", truncated, dict(metadata))

    @classmethod
    def failed(cls, error: str, *, truncated: bool = False, **metadata: str) -> ScoreResult:
        return cls(math.nan, "failed", error or "unknown failure", truncated, dict(metadata))


@dataclass(frozen=True)
class EvaluatorSpec:
    """Identity and construction recipe of one evaluator (hashable; a cache key and test id).

    ``checkpoint`` is the open_clip pretrained tag, the Hugging Face repo id, the hosted API
    model snapshot, or a local path. ``hub_repo``/``hub_files`` say which Hugging Face cache
    entry holds the weights so availability can be checked offline without importing torch;
    ``hub_files`` is a tuple of alternatives (any one present is enough) after ``config.json``
    where the adapter needs it. ``options`` holds adapter settings as sorted ``(key, value)``
    pairs (strings, numbers, booleans) so the spec stays hashable.
    """

    id: str
    family: str
    adapter: str
    model_name: str
    checkpoint: str
    preprocessing: str
    score_scale: str
    instruction: str = ""
    decoding: str = ""
    needs_text: bool = True
    max_text_tokens: int | None = None
    checkpoint_sha256: str = ""
    hub_repo: str = ""
    hub_files: tuple[str, ...] = ()
    options: tuple[tuple[str, object], ...] = ()
    description: str = ""
    score_range: tuple[float, float] | None = None  # closed [low, high]; None: any finite score

    def __post_init__(self) -> None:
        check_evaluator_id(self.id)
        try:
            get_family(self.adapter)
        except EvaluatorError as exc:
            raise EvaluatorError(f"evaluator {self.id!r}: {exc.what}", hint=exc.hint) from None
        if self.score_range is not None:
            low, high = _score_range(self.score_range)
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise EvaluatorError(
                    f"evaluator {self.id!r}: score_range must be two finite numbers low < high, "
                    f"got {self.score_range!r}"
                )
            object.__setattr__(self, "score_range", (low, high))
        keys = [k for k, _ in self.options]
        if keys != sorted(set(keys)):
            object.__setattr__(self, "options", tuple(sorted(dict(self.options).items())))

    # ----------------------------------------------------------------- identity
    def option(self, key: str, default: object = None) -> object:
        """The adapter option ``key`` (``default`` when unset)."""
        return dict(self.options).get(key, default)

    def identity(self) -> dict[str, object]:
        """Every field the Evaluator Configuration Card records, as JSON-ready builtins."""
        out: dict[str, object] = {}
        for name in IDENTITY_FIELDS:
            value = getattr(self, name)
            if name == "options":
                value = {k: list(v) if isinstance(v, tuple) else v for k, v in value}
            elif name == "score_range":
                if value is None:
                    continue  # undeclared: keeps the identity of specs written before the field
                value = list(value)
            out[name] = value
        return out

    @property
    def identity_hash(self) -> str:
        """sha256 over the canonical JSON of :meth:`identity` (the score-cache namespace)."""
        return sha256_json(self.identity())

    def score_problem(self, score: float) -> str | None:
        """Why ``score`` cannot be an ``ok`` score of this evaluator, or ``None`` if it can:
        it must be finite and, when the spec declares ``score_range``, inside it."""
        if not math.isfinite(score):
            return f"non-finite score {score!r}"
        if self.score_range is not None:
            low, high = self.score_range
            slack = 1e-9 * (high - low)  # float rounding at a closed end (sigmoid -> 1.0)
            if not low - slack <= score <= high + slack:
                return f"score {score!r} outside the declared range [{low:g}, {high:g}]"
        return None

    # ----------------------------------------------------------------- behaviour
    def weights_available(self) -> bool:
        """True when the weights (or API key) are present locally; never touches the network."""
        return weights.available(self)

    def build(self, device: str = "auto", batch_size: int = 32) -> Evaluator:
        """Load the evaluator. Raises :class:`EvaluatorError` when weights cannot be found."""
        if batch_size < 1:
            raise EvaluatorError(f"evaluator {self.id!r}: batch_size must be >= 1")
        family = get_family(self.adapter)
        if family.weights == "files":
            weights.require(self)  # fail fast, before importing torch, when offline and absent
        try:
            build = family.builder()
        except EvaluatorError as exc:
            raise EvaluatorError(f"evaluator {self.id!r}: {exc.what}", hint=exc.hint) from None
        return build(self, device=device, batch_size=batch_size)

    def with_changes(self, **changes: object) -> EvaluatorSpec:
        """A copy with some fields replaced (e.g. a local checkpoint path)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return EvaluatorSpec(**values)


@runtime_checkable
class Evaluator(Protocol):
    """A loaded evaluator. ``score`` pairs ``images[i]`` with ``captions[i]``."""

    spec: EvaluatorSpec

    def score(
        self, images: Sequence[np.ndarray], captions: Sequence[str]
    ) -> list[ScoreResult]: ...

    def close(self) -> None: ...


@runtime_checkable
class EmbeddingEvaluator(Evaluator, Protocol):
    """An evaluator that scores by embedding similarity and can score whole grids."""

    def score_grid(self, images: Sequence[np.ndarray], captions: Sequence[str]) -> np.ndarray:
        """``(n_images, n_captions)`` float64 scores; each distinct input encoded once."""
        ...


def check_pairs(spec: EvaluatorSpec, images: Sequence[object], captions: Sequence[str]) -> None:
    """Raise a clear error unless images and captions pair up one to one."""
    if len(images) != len(captions):
        raise EvaluatorError(
            f"evaluator {spec.id!r}: {len(images)} images but {len(captions)} captions",
            hint="score() pairs images[i] with captions[i]; use score_grid() for all pairs",
        )


def check_image(spec: EvaluatorSpec, image: object, index: int) -> None:
    """Raise unless ``image`` is an ``(H, W, 3)`` uint8 array."""
    shape = getattr(image, "shape", None)
    dtype = str(getattr(image, "dtype", ""))
    if shape is None or len(shape) != 3 or shape[2] != 3 or dtype != "uint8":
        raise EvaluatorError(
            f"evaluator {spec.id!r}: image {index} has shape {shape} dtype {dtype or '?'}",
            hint="pass RGB images as numpy uint8 arrays of shape (H, W, 3)",
        )
    if shape[0] < 1 or shape[1] < 1:
        raise EvaluatorError(f"evaluator {spec.id!r}: image {index} is empty ({shape})")
