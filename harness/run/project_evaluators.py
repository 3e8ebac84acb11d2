"""The evaluators a project offers through ``pytest_audit_evaluators``, for the CLI.

``t3d-audit evaluators``, ``score``, ``audit`` and ``plan`` run outside pytest, yet a
project's ``conftest.py`` (or a pytest plugin it names) may offer scorers through the plugin
hook. pytest itself loads them here, as a run started in the same folder would: its
``pytest.main`` parses the project's configuration (rootdir, ``addopts``, ``-p`` plugins) and
imports the initial conftest files; a ``pytest_cmdline_main`` implementation then calls the
hook (:func:`harness.run.evaluator_selection.offered_specs`) and stops the run before any test is
configured or collected. Without a ``conftest.py`` between the folder and the project's root
nothing is loaded (a pytest start-up costs about a second).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.core.errors import EvaluatorError

# the plugin by name (its hookspec must be known even when plugin autoloading is off)
_ARGS = ("-p", "harness.plugin", "-p", "no:cacheprovider", "-q")


class _Offered:
    """A pytest plugin that collects the hook's specs and ends the run before configure."""

    def __init__(self) -> None:
        self.specs: list[Any] | None = None
        self.error: Exception | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_cmdline_main(self, config: pytest.Config) -> int:
        from harness.run.evaluator_selection import offered_specs

        try:
            self.specs = offered_specs(config)
        except EvaluatorError as exc:
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


def project_specs(invocation_dir: Path | None = None) -> list[Any]:
    """Every spec the project's ``pytest_audit_evaluators`` hooks offer in ``invocation_dir``
    (default: the working folder); Scorers among them are registered. Raises
    :class:`EvaluatorError` when pytest cannot load the project (its error is printed above)
    or when an offered id clashes with a registered one."""
    import contextlib

    folder = Path(invocation_dir or Path.cwd())
    if not conftest_files(folder):
        return []
    grab = _Offered()
    from _pytest.config import main as pytest_main  # pytest.main itself (tests stub that name)

    with contextlib.chdir(folder):
        code = pytest_main(list(_ARGS), plugins=[grab])
    if grab.error is not None:
        raise grab.error
    if grab.specs is None:
        raise EvaluatorError(
            f"pytest could not load the project's conftest files (exit code {int(code)}; "
            "its error is printed above)",
            where=conftest_files(folder)[0],
            hint="run `pytest --collect-only -q` in this folder to see it, and fix the conftest",
        )
    return grab.specs
