"""toxfile.py hands pip's index configuration to uv: uv never reads pip.conf, so
without this tox-uv would resolve from PyPI alone and could pull another torch build."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent


def _toxfile():
    spec = importlib.util.spec_from_file_location("t3d_toxfile", ROOT / "toxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


toxfile = _toxfile()

# `pip config list` on the CI machine (pip.conf plus PIP_* variables)
LISTING = """\
:env:.cert='/etc/ssl/certs/ca-certificates.crt'
:env:.default-timeout='180'
:env:.disable-pip-version-check='1'
:env:.find-links='/opt/wheels'
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.find-links='/opt/wheels'
"""


def test_the_ci_machines_pip_config_becomes_uv_variables():
    env = toxfile.uv_environment(toxfile.parse_pip_config_list(LISTING))
    assert env == {
        "UV_EXTRA_INDEX_URL": "file:///opt/pypi/simple file:///opt/pypi-more/simple",
        "UV_FIND_LINKS": "/opt/wheels",
        "UV_CONSTRAINT": "/etc/xdg/pip/constraints.txt",
        "UV_HTTP_TIMEOUT": "180",
        "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
        # pip picks the best version over all indexes; uv's default stops at the first
        "UV_INDEX_STRATEGY": "unsafe-best-match",
    }


def test_env_beats_install_beats_global():
    listing = ("global.index-url='https://a/simple'\ninstall.index-url='https://b/simple'\n"
               "global.timeout='5'\n:env:.timeout='7'\n")
    options = toxfile.parse_pip_config_list(listing)
    assert options == {"index-url": "https://b/simple", "timeout": "7"}
    assert toxfile.uv_environment(options) == {"UV_INDEX_URL": "https://b/simple",
                                               "UV_HTTP_TIMEOUT": "7"}


def test_several_find_links_are_comma_separated_and_no_index_carries_over():
    options = toxfile.parse_pip_config_list(
        "global.find-links='/w1\\n/w2'\nglobal.no-index='true'\nglobal.trusted-host='h1 h2'\n")
    assert toxfile.uv_environment(options) == {
        "UV_FIND_LINKS": "/w1,/w2", "UV_NO_INDEX": "1", "UV_INSECURE_HOST": "h1 h2",
        "UV_INDEX_STRATEGY": "unsafe-best-match"}


def test_no_pip_config_sets_nothing_and_garbage_lines_are_skipped():
    assert toxfile.uv_environment(toxfile.parse_pip_config_list("")) == {}
    assert toxfile.parse_pip_config_list("no equals sign\nnosection='x'\nfoo.bar='y'\n") == {}


def test_a_variable_the_user_set_is_never_overridden(monkeypatch):
    monkeypatch.setattr(toxfile, "pip_config_listing", lambda: LISTING)
    environ = {"UV_CONSTRAINT": "/mine.txt"}
    added = toxfile.export_pip_config_to_uv(environ)
    assert environ["UV_CONSTRAINT"] == "/mine.txt" and "UV_CONSTRAINT" not in added
    assert environ["UV_EXTRA_INDEX_URL"] == "file:///opt/pypi/simple file:///opt/pypi-more/simple"


def test_the_listing_comes_from_the_first_python_with_pip(tmp_path):
    missing = str(tmp_path / "no-python")
    assert toxfile.pip_config_listing((missing,)) == ""
    # this interpreter may lack pip (a uv-made venv); then the result is empty, not an error
    assert isinstance(toxfile.pip_config_listing((missing, sys.executable)), str)


_urls = st.lists(st.from_regex(r"file:///[a-z]{1,8}(/[a-z]{1,8}){0,2}", fullmatch=True),
                 min_size=1, max_size=4)


@given(_urls, _urls)
def test_every_configured_location_reaches_uv_in_order(indexes, links):
    listing = (f"global.extra-index-url={' '.join(indexes)!r}\n"
               f"global.find-links={chr(10).join(links)!r}\n")
    env = toxfile.uv_environment(toxfile.parse_pip_config_list(listing))
    assert env["UV_EXTRA_INDEX_URL"].split(" ") == indexes
    assert env["UV_FIND_LINKS"].split(",") == links
    assert env["UV_INDEX_STRATEGY"] == "unsafe-best-match"
