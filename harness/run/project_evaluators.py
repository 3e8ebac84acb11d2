"""The evaluators a project offers through ``pytest_audit_evaluators``, for the CLI.

``t3d-audit evaluators``, ``score``, ``audit`` and ``plan`` run outside pytest, yet a
project's ``conftest.py`` (or a pytest plugin it names) may offer scorers through the plugin
hook. pytest itself loads them here, as a run started in the same folder would: its
``pytest.main`` parses the project's configuration (rootdir, ``addopts``, ``-p`` plugins) and
imports the initial conftest files; a ``pytest_cmdline_main`` implementation then calls the
hook (:func:`harness.run.evaluator_selection.offered_specs`) and stops the run before any test is
configured or collected. Without a ``conftest.py`` between the folder and the project's root
nothing is loaded (a pytest start-up costs about a second).

The project's code runs in this process, so its misbehaviour is contained here: whatever it
writes (``print`` at import, pytest's own messages) goes to a temporary file instead of the
command's stdout (``evaluators --json`` stays one JSON document) and only its last
:data:`SHOWN_TAIL_BYTES` are shown, on stderr, when loading fails; ``sys.exit`` or any
exception while loading or in the hook is an :class:`EvaluatorError` (one line, exit status 2),
never a silent exit; a load that runs past :data:`LOAD_DEADLINE_S` seconds is stopped (on
the main thread, where a ``SIGALRM`` can interrupt it). ``os._exit`` cannot be caught in
process: ``t3d-audit audit --gate`` guards against it from a parent process
(:mod:`harness.run.gate_guard`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from harness.core.errors import EvaluatorError

# the plugin by name (its hookspec must be known even when plugin autoloading is off);
# --capture=no: this module captures the output itself, also where pytest would drop it;
# -W: this process imported harness before pytest could mark it for rewriting (an addopts
# "-W error" would make that warning an error)
_ARGS = ("-p", "harness.plugin", "-p", "no:cacheprovider", "-q", "--capture=no",
         "-W", "ignore::pytest.PytestAssertRewriteWarning")  # fmt: skip

#: seconds the project's conftest files and hooks may take to load and offer their specs
LOAD_DEADLINE_S = 120.0
#: bytes of the project's captured output shown when loading fails (its end)
SHOWN_TAIL_BYTES = 4000

_HINT = "run `pytest --collect-only -q` in this folder to see it, and fix the conftest"
T = TypeVar("T")


class _LoadTimeout(BaseException):
    """Raised in the main thread by the deadline's ``SIGALRM`` (a ``BaseException``, so that
    pytest's own ``except Exception`` around a conftest import does not turn it into an
    import error)."""


class _Offered:
    """A pytest plugin that collects the hook's specs and ends the run before configure."""

    def __init__(self) -> None:
        self.specs: list[object] | None = None
        self.error: BaseException | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_cmdline_main(self, config: pytest.Config) -> int:
        from harness.run.evaluator_selection import offered_specs

        try:
            self.specs = offered_specs(config)
        except (Exception, SystemExit) as exc:  # a hook's own bug or exit: reported, not raised
            self.error = exc
        return 0


def conftest_files(invocation_dir: Path) -> list[Path]:
    """``conftest.py`` files from ``invocation_dir`` up to the project's root (the folder of
    the configuration file pytest finds there: ``pyproject.toml``, ``pytest.ini``, ...),
    nearest first; without a configuration file, only ``invocation_dir``'s own (a stray
    ``conftest.py`` in ``/`` or ``/tmp`` does not make every folder a project)."""
    from _pytest.config.findpaths import determine_setup

    here = Path(invocation_dir).resolve()
    inipath = determine_setup(inifile=None, override_ini=None, args=[], rootdir_cmd_arg=None,
                              invocation_dir=here)[1]  # fmt: skip
    folders = [here]
    if inipath is not None and Path(inipath).resolve().parent in here.parents:
        top = Path(inipath).resolve().parent
        folders = [here, *here.parents[: here.parents.index(top) + 1]]
    return [f / "conftest.py" for f in folders if (f / "conftest.py").is_file()]


def project_specs(invocation_dir: Path | None = None) -> list[object]:
    """Every spec the project's ``pytest_audit_evaluators`` hooks offer in ``invocation_dir``
    (default: the working folder); Scorers among them are registered. Raises
    :class:`EvaluatorError` when pytest cannot load the project, when its code exits, raises
    or hangs while loading (the end of what it printed is shown on stderr), or when an
    offered id clashes with a registered one."""
    folder = Path(invocation_dir or Path.cwd())
    found = conftest_files(folder)
    if not found:
        return []
    grab = _Offered()
    from _pytest.config import main as pytest_main  # pytest.main itself (tests stub that name)

    with _captured_output() as output:
        try:
            with contextlib.chdir(folder):
                code: object = _within_deadline(lambda: pytest_main(list(_ARGS), plugins=[grab]))
        except _LoadTimeout:
            grab.error, code = _LoadTimeout(), None
        except (Exception, SystemExit) as exc:  # conftest code ending or breaking pytest itself
            grab.error, code = exc, None
        tail = output.getvalue()
    if grab.error is None and grab.specs is not None:
        return grab.specs
    _show_tail(tail)
    raise _load_error(grab.error, code, found[0])


def _load_error(error: BaseException | None, code: object, where: Path) -> EvaluatorError:
    if isinstance(error, EvaluatorError):
        return error
    if isinstance(error, _LoadTimeout):
        return EvaluatorError(f"loading the project's conftest files took over {LOAD_DEADLINE_S:g} s",
                              where=where, hint="a conftest must not wait at import or in its hooks")  # fmt: skip
    if isinstance(error, SystemExit):
        return EvaluatorError(f"the project's conftest code called sys.exit({error.code!r}) while "
                              "loading, so its evaluators are unknown", where=where, hint=_HINT)  # fmt: skip
    if error is not None:
        what = f"{type(error).__name__}: {str(error)[:200]}"
        return EvaluatorError(f"the project's conftest code raised {what}", where=where, hint=_HINT)
    try:
        status = f"exit code {int(code)}"
    except (TypeError, ValueError):
        status = "no exit code"
    return EvaluatorError(f"pytest could not load the project's conftest files ({status}; "
                          "its error is printed above)", where=where, hint=_HINT)  # fmt: skip


def _within_deadline(call: Callable[[], T]) -> T:
    """``call()``, interrupted by :class:`_LoadTimeout` after :data:`LOAD_DEADLINE_S` seconds
    when this is the main thread (signals reach only it) and no other interval timer is set
    (there is one ``ITIMER_REAL`` per process); unbounded otherwise."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return call()
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:  # a caller's own alarm runs: leave it be
        return call()

    def expire(signum: int, frame: object) -> None:
        raise _LoadTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, LOAD_DEADLINE_S)
    try:
        return call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _Captured:
    def __init__(self, handle: object, sink: object) -> None:
        self._handle, self._sink = handle, sink

    def getvalue(self) -> str:
        """The last :data:`SHOWN_TAIL_BYTES` bytes written, decoded leniently."""
        with contextlib.suppress(Exception):
            self._sink.flush()
        self._handle.flush()
        size = self._handle.seek(0, os.SEEK_END)
        self._handle.seek(max(0, size - SHOWN_TAIL_BYTES))
        return self._handle.read().decode("utf-8", "replace")


@contextlib.contextmanager
def _captured_output() -> Iterator[_Captured]:
    """File descriptors 1 and 2 (and ``sys.stdout``/``sys.stderr``) pointed at one temporary
    file for the block, so nothing the project writes, from Python or C, reaches the
    command's output."""
    with tempfile.TemporaryFile() as handle:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        saved: list[tuple[int, int]] = []
        try:
            for fd in (1, 2):
                with contextlib.suppress(OSError):
                    saved.append((fd, os.dup(fd)))
                    os.dup2(handle.fileno(), fd)
            sink = open(handle.fileno(), "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
            with sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                yield _Captured(handle, sink)
        finally:
            for fd, copy in saved:
                os.dup2(copy, fd)
                os.close(copy)


def _show_tail(text: str) -> None:
    """The end of the project's captured output on stderr, above the one-line error."""
    # control characters (cursor moves, colours) of hostile output are shown as "?"
    text = "".join(c if c.isprintable() or c in " \n\t" else "?" for c in text).strip()
    if text:
        print(f"(the last lines the project's conftest code and pytest wrote)\n{text}", file=sys.stderr)
