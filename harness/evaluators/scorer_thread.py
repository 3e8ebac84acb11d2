"""One persistent worker thread per user Scorer, and the inputs it is handed.

A Scorer is built, called and closed on the same daemon thread for its whole life, so a handle
bound to the thread that made it (an sqlite3 connection, a session or model object that checks
its thread) keeps working from batch to batch. Each call is waited for at most a deadline; a
call that passes it is asked to stop (:meth:`ScorerThread.cancel`).

What a cancelled call does
--------------------------
Python cannot kill a thread. A call past its deadline gets :class:`ScorerCancelled` raised
asynchronously in its thread (``PyThreadState_SetAsyncExc``): a Python-level loop (``while
True: pass``, a loop over ``time.sleep(0.01)``) stops at its next bytecode and the thread ends,
so it burns no CPU after the deadline. A call blocked inside one C function (a single long
``time.sleep``, a native kernel, a socket read) receives it only when that function returns;
until then the thread lives on (a daemon: it never holds up the process's exit). A scorer that
catches ``BaseException`` and loops on is not stopped. Either way the scorer counts as hung and
nothing else is run on its thread.

Inputs handed to ``score_batch``
--------------------------------
:func:`frozen_inputs` gives each call its own read-only copies of the batch's distinct images
(``(H, W, 3)`` uint8; one copy per distinct array, shared by the rows that repeat it) in a
fresh list: an in-place edit raises ``ValueError: assignment destination is read-only`` inside
the scorer (a failed batch with that reason), and nothing the scorer does reaches the caller's
arrays or the next batch. :func:`changed_inputs` finds a scorer that mutated them anyway (after
``setflags(write=True)`` or through the list) so the batch is failed rather than scored. The
copies cost one copy per distinct image per batch and one comparison after the call: 0.5 ms
and 0.08 ms for a 512 × 512 image on a shared 2-core x86_64 CPU
(``benchmarks/bench_scorer_inputs.py``), against milliseconds to seconds of scoring.
"""

from __future__ import annotations

import ctypes
import queue
import threading
from collections.abc import Callable, Sequence


class ScorerCancelled(BaseException):
    """Raised inside a scorer's thread when its call passed the deadline."""


class _Job:
    def __init__(self, fn: Callable[[], object]):
        self.fn = fn
        self.done = threading.Event()
        self.result: object = None
        self.error: BaseException | None = None


class ScorerThread:
    """A daemon thread running one scorer's calls in order (see the module docstring)."""

    def __init__(self, label: str):
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name=f"t3d-audit scorer {label}", daemon=True)
        self._running: _Job | None = None

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            self._running = job
            try:
                job.result = job.fn()
            except BaseException as exc:  # every failure is handed to the caller
                job.error = exc
            finally:
                self._running = None
                job.done.set()
            if isinstance(job.error, ScorerCancelled):
                return  # a cancelled scorer's state is unknown: run nothing more on it

    def call(self, fn: Callable[[], object], deadline_s: float | None) -> tuple[bool, object]:
        """``(True, result)`` when ``fn`` finished on the thread within ``deadline_s`` seconds
        (``None``: no deadline); re-raises what it raised; ``(False, None)`` past the deadline."""
        if self.thread.ident is None:
            self.thread.start()
        elif not self.thread.is_alive():  # stopped or cancelled: nothing would ever run the call
            raise RuntimeError("the scorer's thread has ended (closed, or stopped past its deadline)")
        job = _Job(fn)
        self._jobs.put(job)
        if not job.done.wait(deadline_s):
            return False, None
        if job.error is not None:
            raise job.error
        return True, job.result

    def cancel(self) -> None:
        """Raise :class:`ScorerCancelled` in the running call (taken at its next bytecode)."""
        ident = self.thread.ident
        if ident is not None and self.thread.is_alive():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(ScorerCancelled))

    def stop(self) -> None:
        """End the thread after the calls already queued."""
        self._jobs.put(None)


def frozen_inputs(batch: Sequence[object]) -> list[object]:
    """``batch`` as a fresh list whose numpy arrays are read-only copies (one per distinct
    array); other rows (scene items) are passed as they are."""
    import numpy as np

    copies: dict[int, object] = {}
    out = []
    for item in batch:
        if isinstance(item, np.ndarray):
            if id(item) not in copies:
                copy = np.array(item, copy=True)
                copy.flags.writeable = False
                copies[id(item)] = copy
            item = copies[id(item)]
        out.append(item)
    return out


def changed_inputs(original: Sequence[object], handed: Sequence[object], handed_list: list[object],
                   texts: Sequence[str], handed_texts: list[str]) -> str | None:
    """Why the scorer's inputs after the call differ from what it was given, else ``None``:
    the lists it got (``handed_list``, ``handed_texts``) against their originals, and each
    array it got (``handed``) against the caller's (``original``), element for element."""
    import numpy as np

    if len(handed_list) != len(handed) or any(a is not b for a, b in zip(handed_list, handed, strict=False)):
        return "score_batch changed the list of inputs it was given (inputs are read-only)"
    if list(handed_texts) != list(texts):
        return "score_batch changed the list of texts it was given (inputs are read-only)"
    for i, (mine, theirs) in enumerate(zip(original, handed, strict=True)):
        if isinstance(mine, np.ndarray) and not np.array_equal(mine, theirs):
            return f"score_batch changed image {i} in place (inputs are read-only; copy before editing)"
    return None
