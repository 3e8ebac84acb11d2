"""tox's inline plugin: hand pip's package-index configuration to uv (tox-uv).

tox-uv installs the environments with uv, which is several times faster than pip but never
reads pip's configuration (``pip.conf``, ``PIP_*`` variables). On a machine whose pip is
pointed at local indexes, wheel folders or a constraint file (the CI machine keeps its torch
build on local disk that way), uv would otherwise resolve from PyPI alone and could pull a
different, multi-GB torch build. So, once per tox run, this asks pip for its configuration
(``python -m pip config list``: every file and ``PIP_*`` variable, already merged by pip)
and sets the matching ``UV_*`` variables, which tox-uv passes to uv. A ``UV_*`` variable the
user set is never overridden. Without tox-uv tox installs with pip, which reads its own
configuration, and these variables are unused.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Mapping

# pip's config sections, lowest precedence first: `install` overrides `global` for
# `pip install`, and a PIP_* variable (`:env:`) overrides both.
_SECTIONS = ("global", "install", ":env:")

# pip option -> (uv variable, separator uv expects between several values)
_LIST_OPTIONS: dict[str, tuple[str, str]] = {
    "extra-index-url": ("UV_EXTRA_INDEX_URL", " "),
    "find-links": ("UV_FIND_LINKS", ","),
    "constraint": ("UV_CONSTRAINT", " "),
    "trusted-host": ("UV_INSECURE_HOST", " "),
}
_SINGLE_OPTIONS: dict[str, str] = {
    "index-url": "UV_INDEX_URL",
    "timeout": "UV_HTTP_TIMEOUT",
    "default-timeout": "UV_HTTP_TIMEOUT",
    "cert": "SSL_CERT_FILE",
}
_TRUE = {"1", "true", "yes", "on"}


def parse_pip_config_list(listing: str) -> dict[str, str]:
    """Read ``pip config list`` output into {option: value}, section precedence applied.

    Each line is ``section.option='value'`` (the value as a Python string literal); the
    ``:env:`` section holds the ``PIP_*`` variables. Unreadable lines are skipped.
    """
    by_section: dict[str, dict[str, str]] = {section: {} for section in _SECTIONS}
    for line in listing.splitlines():
        key, sep, raw = line.strip().partition("=")
        section, dot, option = key.rpartition(".")
        if not sep or not dot or section not in by_section:
            continue
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        by_section[section][option.replace("_", "-")] = str(value)
    merged: dict[str, str] = {}
    for section in _SECTIONS:
        merged.update(by_section[section])
    return merged


def uv_environment(pip_options: Mapping[str, str]) -> dict[str, str]:
    """The ``UV_*`` variables that make uv install from where pip would.

    pip searches every index and picks the best version across them, so when extra indexes
    or wheel folders are configured uv gets ``UV_INDEX_STRATEGY=unsafe-best-match`` (uv's
    default takes the first index that has the package at all).
    """
    env: dict[str, str] = {}
    for option, (variable, separator) in _LIST_OPTIONS.items():
        values = pip_options.get(option, "").split()
        if values:
            env[variable] = separator.join(values)
    for option, variable in _SINGLE_OPTIONS.items():
        if pip_options.get(option):
            env[variable] = pip_options[option]
    if pip_options.get("no-index", "").lower() in _TRUE:
        env["UV_NO_INDEX"] = "1"
    if "UV_EXTRA_INDEX_URL" in env or "UV_FIND_LINKS" in env:
        env["UV_INDEX_STRATEGY"] = "unsafe-best-match"
    return env


def pip_config_listing(pythons: tuple[str, ...] | None = None) -> str:
    """``pip config list``'s output from the first of ``pythons`` that has pip; empty if none.

    Tried in order: tox's own python (where `pip install tox` put it), then ``python3`` on
    PATH (tox installed by uv or pipx has no pip beside it). Every pip on a machine reads the
    same config files and ``PIP_*`` variables.
    """
    candidates = pythons if pythons is not None else (sys.executable, "python3")
    for python in candidates:
        try:
            done = subprocess.run(
                [python, "-m", "pip", "config", "list"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return done.stdout
    return ""


def export_pip_config_to_uv(environ: dict[str, str] | os._Environ[str] = os.environ) -> dict[str, str]:
    """Set the ``UV_*`` variables derived from pip's config that ``environ`` lacks; returns them."""
    wanted = uv_environment(parse_pip_config_list(pip_config_listing()))
    added = {name: value for name, value in wanted.items() if name not in environ}
    environ.update(added)
    return added


try:
    from tox.plugin import impl
except ImportError:  # imported by the tests without tox: the functions above still work
    pass
else:
    from tox.config.sets import CoreConfigSet
    from tox.session.state import State

    @impl
    def tox_add_core_config(core_conf: CoreConfigSet, state: State) -> None:
        """Runs once, before any environment is built or installed."""
        export_pip_config_to_uv()
