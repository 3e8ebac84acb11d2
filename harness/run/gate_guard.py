"""A release gate that user code cannot end with a false pass: ``t3d-audit audit --gate`` runs
the audit in a forked child process and believes only what the child reports back.

A project's ``conftest.py`` and scorers run in the audit's process. ``sys.exit(0)`` and
exceptions are caught in process, but ``os._exit(0)`` (or a signal) ends the process at once
with the status the code chose. Here the parent waits for the child and passes on its exit
status only when the child came back through :func:`in_guarded_child`'s own return (its
status written on a pipe just before it exits); a child that ended any other way is a gate
failure, status 1, with one line saying so. Where ``os.fork`` is missing (Windows) the audit
runs in process and ``os._exit`` stays out of reach.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable
from os import _exit as end_forked_child  # public despite its name: exits without atexit

from harness.core.errors import AuditError

GATE_FAILED = 1


def in_guarded_child(call: Callable[[], int], *, command: str = "t3d-audit audit") -> int:
    """``call()``'s exit status, computed in a forked child. An :class:`AuditError` in the
    child is raised again here (with its words); a child that ends without returning
    (``os._exit``, a signal, a crash) gives :data:`GATE_FAILED` and one line on stdout."""
    if not hasattr(os, "fork"):
        return call()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: runs the audit, reports how it returned, never comes back
        os.close(read_end)
        _child(call, write_end)
    os.close(write_end)
    try:
        message = _read_all(read_end)
        status = os.waitpid(pid, 0)[1]
    except KeyboardInterrupt:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        raise
    finally:
        os.close(read_end)
    return _outcome(message, status, command)


def _child(call: Callable[[], int], write_end: int) -> None:
    report: dict[str, object] = {"code": GATE_FAILED}
    try:
        code = int(call() or 0)
        report = {"code": code if 0 <= code <= 255 else GATE_FAILED}  # os._exit keeps 8 bits
    except AuditError as exc:
        report = {"code": 2, "error": exc.render()}
    except KeyboardInterrupt:
        report = {"code": 130, "interrupted": True}
    except SystemExit as exc:  # user code exiting outside pytest's own handling
        print(f"t3d-audit audit: the audit was ended by sys.exit({exc.code!r}) (user code), so "
              "there is no verdict", flush=True)  # fmt: skip
    except BaseException:  # a crash: its traceback, and the gate fails
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        with contextlib.suppress(OSError):
            os.write(write_end, json.dumps(report).encode())
        # no atexit handlers and no flush of buffers copied from the parent: they are its own
        end_forked_child(int(report["code"]))  # type: ignore[call-overload]


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _outcome(message: bytes, status: int, command: str) -> int:
    """The exit status the parent returns for the child's pipe ``message`` and wait ``status``."""
    try:
        report = json.loads(message.decode()) if message else None
    except (UnicodeDecodeError, ValueError):
        report = None
    code = os.waitstatus_to_exitcode(status)
    if not isinstance(report, dict) or report.get("code") != code:
        how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        print(f"{command}: the audit process ended ({how}) without returning a verdict, "
              "so the gate FAILS", flush=True)  # fmt: skip
        return GATE_FAILED
    if report.get("interrupted"):
        raise KeyboardInterrupt
    if isinstance(report.get("error"), str):
        raise AuditError(report["error"])
    return code
