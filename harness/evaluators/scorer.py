"""Your own scoring code as an evaluator: the :class:`Scorer` base class and its adapter.

Subclass :class:`Scorer`, declare the identity as class attributes and write
``score_batch``; register the class (``@register``, ``registry.register(MyScorer)`` or an entry
point in group ``t3d_audit.evaluators``). The harness turns the declaration into an
:class:`~harness.evaluators.base.EvaluatorSpec` (family ``python`` or ``python_scene``) and
gives it what the built-in families get: the identity hash and score cache, fixed-shape
batching, failure as NaN with a reason, cards, ``t3d-audit evaluators``/``score``/
``compare``/``materialize`` and the audit.

Shapes and units
----------------
* image input: ``score_batch(images, texts)`` gets ``images`` as a list of ``(H, W, 3)`` uint8
  RGB arrays and ``texts`` as a list of ``str`` of the same length (``""`` each when
  ``needs_text = False``); it returns one float per pair on the declared scale.
* scene input (``input = "scene"``): ``images`` is a list of
  :class:`~harness.evaluators.reference.items.ScoreItem` (frozen scene, prompt spec or ``None``
  where the scene set has none, caption, configuration), never rendered.
* The scorer is built, called and closed on one persistent thread of its own
  (:mod:`harness.evaluators.scorer_thread`), so handles bound to the thread that made them
  keep working. ``images`` are read-only copies in a fresh list (an in-place edit raises
  inside the scorer; the caller's arrays and later batches never see it).
* Every batch has exactly ``batch_size`` rows (the last one padded by repeating its last row,
  the padding's scores dropped), so a score never depends on its batch-mates' count.
* A batch that fails in any way is recorded ``failed`` for each of its rows, with the reason and
  a NaN score, never as a number: ``score_batch`` raising anything but ``KeyboardInterrupt``
  (``SystemExit`` included), running past its deadline (``$T3D_AUDIT_SCORER_DEADLINE`` seconds
  per batch, default 600; after one batch misses it the scorer is taken as hung and its later
  batches fail at once; a Python-level loop past it is stopped), changing its inputs in place
  (images, or the lists it was given), or returning anything but a flat sequence (list, tuple, 1-D array)
  of ``batch_size`` real numbers. A single score that is a string, bytes, a bool, an array, not
  finite or outside ``score_range`` fails its row.
* A failure reason never carries a secret: the values of environment variables whose names
  look secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ...) are masked in every
  form :mod:`harness.evaluators.secrets` knows (or the reason is withheld).
* A Scorer whose construction (``__init__``) raises anything but ``KeyboardInterrupt`` is an
  :class:`~harness.core.errors.EvaluatorError` naming the evaluator, with the scrubbed reason.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from harness.core.errors import EvaluatorError
from harness.evaluators.base import EvaluatorSpec, ScoreResult, check_image, check_pairs
from harness.evaluators.builders import freeze_options
from harness.evaluators.families import adapter_input
from harness.evaluators.scorer_thread import ScorerThread, changed_inputs, frozen_inputs
from harness.evaluators.secrets import Secret, environment_secrets, scrub_reason
from harness.vocab.registry_type import Registry

if TYPE_CHECKING:
    import numpy as np

SCORER_PREPROCESSING = "RGB (H, W, 3) uint8 arrays as rendered and composited; no resize"


class Scorer:
    """Base class for scoring code. Declare the identity, implement :meth:`score_batch`.

    Class attributes (the declared identity; every one enters the identity hash, so changing
    any of them, e.g. bumping ``version`` after a code change, starts a fresh score cache):

    ``name``: the evaluator id (``t3d-audit evaluators``, ``--audit-evaluators``; ids use
    ``[A-Za-z0-9._-]``); ``version``: the scoring code's version; ``score_range``: closed
    ``(low, high)`` or ``None``; ``needs_text``: whether captions matter; ``options``: settings
    (strings, numbers, booleans, lists); ``input``: ``"image"`` or ``"scene"``;
    ``batch_size``: the fixed batch shape (``None``: the caller's batch size); ``family``,
    ``score_scale``, ``description``: words for the card.

    The code enters the identity too (:func:`code_identity`): the sha256 of the source file
    that defines the class, so editing the scoring code starts a fresh score cache without a
    ``version`` bump. ``fingerprint``: a declared code identity used instead (e.g. the version
    of a package the scoring lives in, when the class's own file is not where it changes).
    """

    name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    score_range: ClassVar[tuple[float, float] | None] = None
    needs_text: ClassVar[bool] = True
    options: ClassVar[Mapping[str, object]] = {}
    input: ClassVar[Literal["image", "scene"]] = "image"
    batch_size: ClassVar[int | None] = None
    family: ClassVar[str] = "custom"
    score_scale: ClassVar[str] = ""
    description: ClassVar[str] = ""
    fingerprint: ClassVar[str | None] = None

    def __init__(self, device: str = "auto") -> None:
        """``device`` as the caller asked (``auto``: choose yourself, e.g. cuda when present;
        ``cpu``; ``cuda:0``); load models here."""
        self.device = device

    def score_batch(self, images: Sequence[object], texts: Sequence[str]) -> Sequence[float]:
        """One score per ``(images[i], texts[i])``; see the module docstring for shapes."""
        raise NotImplementedError(f"{type(self).__name__} must implement score_batch")

    def close(self) -> None:
        """Release resources (models, sessions); called once after scoring."""

    @classmethod
    def spec(cls) -> EvaluatorSpec:
        """The :class:`EvaluatorSpec` this declaration stands for (its identity)."""
        return scorer_spec(cls)


ScorerFactory = Callable[[str], Scorer]


@dataclass(frozen=True)
class ScorerRecipe:
    """How to build the Scorer registered as evaluator ``name``: ``factory(device)``; ``cls``:
    its class (a fresh process rebuilds it from there, ``harness.measure.fresh_process``)."""

    name: str
    factory: ScorerFactory
    cls: type[Scorer] | None = None


#: The build recipes of the registered Scorers, by evaluator id (a test's scope restores them).
RECIPES: Registry[ScorerRecipe] = Registry("scorer", error=EvaluatorError)


MAX_BATCH_SIZE = 1 << 16  # rows one score_batch call may get (a batch is padded to its size)


def scorer_spec(cls: type[Scorer]) -> EvaluatorSpec:
    """The spec of Scorer class ``cls`` (raises :class:`EvaluatorError` on a bad declaration)."""
    if not (isinstance(cls, type) and issubclass(cls, Scorer)):
        raise EvaluatorError(f"expected a Scorer subclass, got {cls!r}")
    where = f"{cls.__module__}.{cls.__qualname__}"
    if not cls.name:
        raise EvaluatorError("a Scorer needs a name (its evaluator id)", where=where,
                             hint="set the class attribute name = 'my-scorer'")  # fmt: skip
    if cls.input not in ("image", "scene"):
        raise EvaluatorError(f"input must be 'image' or 'scene', got {cls.input!r}", where=where)
    try:
        declared = dict(cls.options)
    except (TypeError, ValueError) as exc:
        raise EvaluatorError(f"options must be a mapping: {exc}", where=where) from exc
    # the class attribute, or an option of that name (which the evaluator reads too)
    for size in (cls.batch_size, declared.get("batch_size")):
        if size is not None and not (isinstance(size, int) and not isinstance(size, bool)
                                     and 1 <= size <= MAX_BATCH_SIZE):  # fmt: skip
            raise EvaluatorError(f"batch_size must be an int in [1, {MAX_BATCH_SIZE}] or None, "
                                 f"got {size!r}", where=where)  # fmt: skip
    for key, value in declared.items():
        items = value if isinstance(value, list | tuple) else [value]
        if not isinstance(key, str) or not all(_scalar(v) for v in items):
            raise EvaluatorError(
                f"option {key!r}: {_shown(value)} is not a string, number (an int of at most "
                "64 bits), boolean or list of them",
                where=where, hint="options enter the identity hash as JSON",
            )
    code = code_identity(cls)
    options = freeze_options({**declared, "version": str(cls.version), CODE_OPTION: code})
    if cls.batch_size is not None:
        options = freeze_options({**dict(options), "batch_size": cls.batch_size})
    version = str(cls.version)
    return EvaluatorSpec(
        id=cls.name,
        family=cls.family,
        adapter="python_scene" if cls.input == "scene" else "python",
        model_name=cls.__name__,
        checkpoint=f"version {version}, code {code}",
        preprocessing="structured scene and prompt spec; no rendering"
        if cls.input == "scene"
        else SCORER_PREPROCESSING,
        score_scale=cls.score_scale or f"{cls.name} score (version {version})",
        needs_text=bool(cls.needs_text),
        options=options,
        description=cls.description or (cls.__doc__ or "").strip().split("\n")[0],
        score_range=cls.score_range,
    )


#: The option under which a Scorer's code identity enters its identity hash.
CODE_OPTION = "scorer_code"


def code_identity(cls: type[Scorer]) -> str:
    """What identifies ``cls``'s scoring code: ``declared:<fingerprint>`` when the class
    declares one, else ``sha256:<first 16 hex>`` of the bytes of the file defining it (its
    module's source), else of the class's own source (a class defined where no file is kept
    gives ``source unavailable``, and only ``version`` tells its releases apart)."""
    import hashlib
    import inspect

    declared = cls.fingerprint
    if declared is not None:
        if not isinstance(declared, str) or not declared.strip():
            raise EvaluatorError(f"fingerprint must be a non-empty string, got {declared!r}",
                                 where=f"{cls.__module__}.{cls.__qualname__}")  # fmt: skip
        return f"declared:{declared.strip()}"
    try:
        source = Path(inspect.getfile(cls)).read_bytes()
    except (TypeError, OSError):
        try:
            source = inspect.getsource(cls).encode("utf-8")
        except (TypeError, OSError):
            return "source unavailable"
    return "sha256:" + hashlib.sha256(source).hexdigest()[:16]


def _shown(value: object) -> str:
    """A short repr of an option value (an int over 4300 digits cannot be written)."""
    if isinstance(value, int) and value.bit_length() > 64:
        return f"an int of {value.bit_length()} bits"
    try:
        text = repr(value)
    except Exception:  # a user object's __repr__
        text = type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."


def _scalar(value: object) -> bool:
    """Whether an option value enters the identity hash as plain JSON: a finite float, an int
    of at most 64 bits (a longer one cannot even be written as text past 4300 digits), a
    string, a bool or None."""
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() <= 64
    return value is None or isinstance(value, str | bool)


def add_scorer(obj: type[Scorer] | Scorer) -> EvaluatorSpec:
    """Remember how to build ``obj`` (a Scorer class, or an instance used as is) and return
    its spec; :func:`harness.evaluators.registry.register` calls this."""
    if isinstance(obj, Scorer):
        instance = obj
        spec = scorer_spec(type(obj))
        factory: ScorerFactory = lambda device: instance  # noqa: E731
    else:
        spec = scorer_spec(obj)
        cls = obj
        factory = lambda device: cls(device)  # noqa: E731
    RECIPES.register(ScorerRecipe(spec.id, factory, type(obj) if isinstance(obj, Scorer) else obj),
                     replace=True)
    return spec


def forget_scorer(evaluator_id: str) -> None:
    """Drop the build recipe of ``evaluator_id`` (with ``registry.unregister``)."""
    RECIPES.unregister(evaluator_id)


REASON_LIMIT = 280  # characters of a failure reason (a record keeps 300 with its prefix)


def _failure(exc: BaseException) -> str:
    """``Type: message`` of a scorer's exception; a message that cannot be made (its ``__str__``
    raises) is left out rather than raised from the failure handler."""
    try:
        text = str(exc)
    except Exception:  # a user exception's __str__ may raise anything
        text = "(its message could not be read)"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _kind(value: object) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__} of shape {tuple(shape)}" if shape is not None else type(value).__name__


def batch_scores(returned: object, size: int) -> list[object]:
    """``returned`` (what ``score_batch`` gave) as a list of ``size`` values, or
    :class:`EvaluatorError` when it is not a flat sequence of that length (a string, bytes, a
    mapping, a 2-D array such as ``(n, 1)``)."""
    if isinstance(returned, str | bytes | bytearray | Mapping) or not hasattr(returned, "__len__"):
        raise EvaluatorError(f"score_batch returned a {_kind(returned)}; expected a list of {size} numbers")
    shape = getattr(returned, "shape", None)
    if shape is not None and len(shape) != 1:
        raise EvaluatorError(f"score_batch returned an array of shape {tuple(shape)}; expected ({size},)")
    # at most one value past the batch: a sequence whose __len__ lies and whose iterator never
    # ends would otherwise be read forever, outside the deadline
    values = list(itertools.islice(returned, size + 1))
    if len(values) != size:
        raise EvaluatorError(f"score_batch returned {len(values)} scores for {size} rows")
    return values


def score_value(value: object) -> float | str:
    """``value`` as a float when it is a real number (Python or numpy int/float, never a bool,
    a string, bytes or an array), else the reason it is not a score."""
    import numpy as np

    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real) or isinstance(value, np.ndarray):
        return f"score of type {_kind(value)} is not a number"
    try:
        return float(value)
    except Exception as exc:  # a user numbers.Real's __float__ may raise anything
        return f"score is not a number ({type(exc).__name__})"


class ScorerEvaluator:
    """The loaded evaluator around a :class:`Scorer` (family ``python`` / ``python_scene``)."""

    def __init__(self, spec: EvaluatorSpec, scorer: Scorer, batch_size: int, *,
                 deadline_s: float | None = None, secrets: Sequence[Secret] | None = None,
                 thread: ScorerThread | None = None):
        from harness.core.envvars import scorer_deadline

        self.spec = spec
        self.id = spec.id
        self.needs_scene = adapter_input(spec) == "scene"
        self.needs_render = not self.needs_scene
        self.needs_prompt_spec = False  # a scene item's spec is None where none is known
        self.scorer = scorer
        self.batch_size = int(spec.option("batch_size", batch_size))
        self.deadline_s = scorer_deadline() if deadline_s is None else float(deadline_s)
        self.secrets = list(environment_secrets() if secrets is None else secrets)
        self.hung: str | None = None  # why later batches are not run (a batch missed its deadline)
        # every call of the scorer, and its close, on the thread it was built on (build())
        self.thread = thread if thread is not None else ScorerThread(spec.id)

    def score(self, images: Sequence[np.ndarray], captions: Sequence[str]) -> list[ScoreResult]:
        """Score ``images[i]`` against ``captions[i]``; see the module docstring."""
        check_pairs(self.spec, images, captions)
        for i, image in enumerate(images):
            check_image(self.spec, image, i)
        texts = [c if self.spec.needs_text else "" for c in captions]
        return self._run(list(images), texts)

    def score_items(self, items: Sequence[object]) -> list[ScoreResult]:
        """Score scene items (scene input): each item's caption is its text."""
        texts = [str(getattr(it, "caption", "")) if self.spec.needs_text else "" for it in items]
        return self._run(list(items), texts)

    def _failed(self, reason: str) -> ScoreResult:
        return ScoreResult.failed(scrub_reason(reason, self.secrets, REASON_LIMIT))

    def _batch(self, batch: list[object], texts: list[str]) -> list[float | str]:
        """One full batch as :func:`score_value` gives each value (a float, or why it is not a
        score); raises :class:`EvaluatorError` (or what the scorer raised) when there are none."""
        if self.hung:
            raise EvaluatorError(self.hung)

        handed = frozen_inputs(batch)  # read-only copies: nothing reaches the caller's arrays
        handed_list, handed_texts = list(handed), list(texts)

        def scored() -> list[float | str]:
            # the returned values are read and converted under the deadline too: iterating a
            # user sequence or calling a user __float__ may block as long as score_batch
            values = batch_scores(self.scorer.score_batch(handed_list, handed_texts), len(batch))
            return [score_value(v) for v in values]

        finished, result = self.thread.call(scored, self.deadline_s)
        if not finished:
            self.thread.cancel()  # a Python-level loop stops at its next bytecode (scorer_thread)
            self.hung = (f"not scored: an earlier batch passed the deadline of {self.deadline_s:g} s "
                         "and was told to stop")  # fmt: skip
            raise EvaluatorError(
                f"score_batch passed its deadline of {self.deadline_s:g} s per batch "
                "(T3D_AUDIT_SCORER_DEADLINE)")  # fmt: skip
        changed = changed_inputs(batch, handed, handed_list, texts, handed_texts)
        if changed:
            raise EvaluatorError(changed)
        return result

    def _run(self, inputs: list[object], texts: list[str]) -> list[ScoreResult]:
        out: list[ScoreResult] = []
        size = self.batch_size
        for start in range(0, len(inputs), size):
            batch, batch_texts = inputs[start : start + size], texts[start : start + size]
            pad = size - len(batch)
            try:
                raw = self._batch(batch + [batch[-1]] * pad, batch_texts + [batch_texts[-1]] * pad)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # SystemExit too: a failed batch, not an exit
                out.extend(self._failed(_failure(exc)) for _ in batch)
                continue
            for score in raw[: len(batch)]:
                if isinstance(score, str):
                    out.append(self._failed(score))
                    continue
                problem = self.spec.score_problem(score)
                out.append(self._failed(problem) if problem else ScoreResult.ok(score))
        return out

    def close(self) -> None:
        """The scorer's ``close`` on its thread, unless a batch passed its deadline (then it is
        left alone); a close that fails or passes the deadline is ignored (every score is
        already recorded). The thread ends after it."""
        if self.hung:
            return
        try:
            self.thread.call(self.scorer.close, self.deadline_s)
        except KeyboardInterrupt:
            raise
        except BaseException:  # nothing left to record
            pass
        finally:
            self.thread.stop()


def build(spec: EvaluatorSpec, *, device: str = "auto", batch_size: int = 32) -> ScorerEvaluator:
    """Adapter constructor of the ``python`` and ``python_scene`` families."""
    recipe = RECIPES.find(spec.id)
    if recipe is None:
        raise EvaluatorError(
            f"evaluator {spec.id!r}: its scoring code is not registered in this process",
            hint="import the module that registers the Scorer (a conftest.py, an entry point in "
            "group t3d_audit.evaluators, or registry.register(MyScorer)) before scoring",
        )
    thread = ScorerThread(spec.id)
    try:  # built on the thread that will call it: thread-bound handles made in __init__ work
        _, scorer = thread.call(lambda: recipe.factory(device), None)
    except KeyboardInterrupt:
        thread.stop()
        raise
    except BaseException as exc:  # SystemExit too: one line naming the evaluator
        thread.stop()
        reason = scrub_reason(_failure(exc), environment_secrets(), REASON_LIMIT)
        raise EvaluatorError(
            f"evaluator {spec.id!r}: its Scorer could not be built: {reason}",
            hint="fix the Scorer's __init__ (run it alone to see the traceback)",
        ) from None
    return ScorerEvaluator(spec, scorer, batch_size, thread=thread)
