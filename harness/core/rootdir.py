"""Re-resolve pytest's rootdir when a path-valued ``--audit-*`` option came as two arguments.

pytest picks its rootdir and ini file before plugins add their options, so in
``pytest --audit-cache-dir /shared/cache`` it takes ``/shared/cache`` for a test path. When
that directory exists outside the project, it becomes the rootdir: ``pyproject.toml`` is not
read (no testpaths, markers, addopts or thresholds) and the gate silently checks nothing.

:func:`reresolve` runs in ``pytest_load_initial_conftests``, after plugin options are known
and before pytest uses the rootdir: it redoes pytest's own setup without the option values and
installs the result. pytest keeps no public API for this, so it touches the Config's private
fields; when they are not there (another pytest version) it stops with a usage error that
says to write ``--audit-cache-dir=DIR`` instead, which never needs re-resolving.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path

import pytest

_PRIVATE_FIELDS = ("_rootpath", "_inipath", "_inicfg", "_inicache", "_parser")


def separated_values(args: list[str], options: Iterable[str]) -> list[tuple[str, str]]:
    """``(option, value)`` for every ``--option VALUE`` pair (the ``=`` form is not listed)."""
    wanted = set(options)
    found = []
    for i, token in enumerate(args[:-1]):
        if token == "--":
            break
        if token in wanted:
            found.append((token, args[i + 1]))
    return found


def _determine(config: pytest.Config, file_or_dir: list[str]) -> tuple[Path, Path | None, object]:
    from _pytest.config.findpaths import determine_setup

    ns = config.known_args_namespace
    got = determine_setup(
        inifile=ns.inifilename,
        override_ini=getattr(ns, "override_ini", None),
        args=list(file_or_dir),
        rootdir_cmd_arg=ns.rootdir or None,
        invocation_dir=config.invocation_params.dir,
    )
    return got[0], got[1], got[2]


def project_root(invocation_dir: Path) -> Path:
    """The rootdir pytest picks for a run started in ``invocation_dir`` with no paths: the
    nearest folder above it with a pytest configuration (``pyproject.toml``, ``pytest.ini``,
    ...), else ``invocation_dir``. Reports of ``pytest --pyargs audit_tests`` go under it."""
    from _pytest.config.findpaths import determine_setup

    got = determine_setup(inifile=None, override_ini=None, args=[], rootdir_cmd_arg=None,
                          invocation_dir=Path(invocation_dir))
    return Path(got[0])


def reresolve(config: pytest.Config, args: list[str], options: Iterable[str]) -> None:
    """Redo pytest's rootdir/ini choice without the values of separated path ``options``.

    ``args`` is pytest's argument list (modified in place: the new ini's ``addopts`` are put
    in front, as pytest does). Raises :class:`pytest.UsageError` when this pytest cannot be
    re-resolved.
    """
    pairs = separated_values(args, options)
    if not pairs:
        return
    option, value = pairs[0]
    if not all(hasattr(config, name) for name in _PRIVATE_FIELDS):
        raise pytest.UsageError(
            f"{option} {value}: pytest took {value} for a test path; write {option}={value}"
        )
    try:
        rootpath, inipath, inicfg = _determine(config, config.known_args_namespace.file_or_dir)
    except Exception as exc:  # pytest's own errors (e.g. a missing -c file) stay usage errors
        raise pytest.UsageError(f"{option} {value}: cannot re-resolve the rootdir ({exc}); "
                                f"write {option}={value}") from exc
    if rootpath == config.rootpath and inipath == config.inipath:
        return
    config._rootpath = rootpath
    config._inipath = inipath
    config._inicfg = inicfg
    config._inicache.clear()
    config._parser.extra_info["rootdir"] = str(rootpath)
    config._parser.extra_info["inifile"] = str(inipath)
    addopts = config.getini("addopts")
    if addopts:
        args[:] = list(addopts) + args
    config.known_args_namespace = config._parser.parse_known_args(
        args, namespace=copy.copy(config.option)
    )
    if config.known_args_namespace.confcutdir is None:  # pytest derived it from the wrong rootdir
        cut = inipath.parent if inipath is not None else rootpath
        config.known_args_namespace.confcutdir = str(cut)
