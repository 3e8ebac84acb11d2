"""The gated audit's child process: only a child that came back through its own return passes
its exit status on; any other end is a gate failure (hand-made children, no pytest run)."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from harness.core.errors import AuditError, ProtocolError
from harness.run.gate_guard import GATE_FAILED, in_guarded_child

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the guard forks")


def test_a_returned_status_is_passed_on(capfd):
    def audit() -> int:
        print("verdict PASS", flush=True)
        return 0

    assert in_guarded_child(audit) == 0
    assert in_guarded_child(lambda: 1) == 1
    assert "verdict PASS" in capfd.readouterr().out


@pytest.mark.parametrize("status", [0, 1, 3])
def test_os_exit_in_the_child_fails_the_gate_whatever_its_status(capfd, status):
    assert in_guarded_child(lambda: os._exit(status)) == GATE_FAILED
    out = capfd.readouterr().out
    assert f"ended (exit status {status}) without returning a verdict" in out


def test_a_signal_in_the_child_fails_the_gate(capfd):
    assert in_guarded_child(lambda: os.kill(os.getpid(), signal.SIGKILL)) == GATE_FAILED
    assert "killed by signal 9" in capfd.readouterr().out


def test_sys_exit_zero_in_the_child_fails_the_gate(capfd):
    assert in_guarded_child(lambda: sys.exit(0)) == GATE_FAILED
    assert "sys.exit(0)" in capfd.readouterr().out


def test_an_audit_error_in_the_child_is_raised_again_with_its_words():
    def audit() -> int:
        raise ProtocolError("unknown profile 'nope'", where="--profile", hint="see t3d-audit protocol")

    with pytest.raises(AuditError) as info:
        in_guarded_child(audit)
    assert str(info.value) == "--profile: unknown profile 'nope' (see t3d-audit protocol)"


def test_a_status_past_eight_bits_is_a_failure_not_its_low_byte():
    assert in_guarded_child(lambda: 256) == GATE_FAILED  # os._exit(256) would read as 0


def test_a_crash_in_the_child_fails_the_gate_with_its_traceback(capfd):
    def audit() -> int:
        raise RuntimeError("boom")

    assert in_guarded_child(audit) == GATE_FAILED
    assert "RuntimeError: boom" in capfd.readouterr().err
