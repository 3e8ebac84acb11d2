"""Network guard for tests: import ``loopback_only`` into a test module to apply it there.

The fixture is autouse, so ``from tests._net_helpers import loopback_only`` is all a module
needs; any connection beyond 127.0.0.1 / ::1 / localhost then fails the test.
"""

from __future__ import annotations

import socket

import pytest

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch):
    """Fail any attempt to connect anywhere but loopback (the tests never use the network)."""
    real_connect = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if host not in LOOPBACK_HOSTS:
            raise AssertionError(f"test tried to open a non-loopback socket to {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
