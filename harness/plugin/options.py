"""The plugin's command line: the ``--audit-*`` options, the ``pytest_audit_*`` hook
specifications, and the rootdir a ``--audit-cache-dir`` implies."""

from __future__ import annotations

import pytest

from harness.run.options import PATH_OPTIONS, add_options


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from harness.run import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, args: list[str]) -> None:
    # `--audit-cache-dir DIR` made DIR pytest's rootdir: redo that choice before it is used
    from harness.core.rootdir import reresolve

    reresolve(early_config, args, PATH_OPTIONS)
