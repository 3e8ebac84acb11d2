"""Option fuzz: every ``t3d-audit`` subcommand, every option, hostile values.

The commands come from :data:`harness.cli.COMMANDS` and their options from each command's own
argparse parser (subcommands of subcommands too), so a new command or option is fuzzed
without touching this file. Each example gives one option (or positional) a value from a
hostile pool: empty, negative, huge, non-numeric, odd URLs, paths such as ``/proc/1/x`` and
``../escape``, NUL-free unicode. The outcome must be a usage error (exit 2; 4 is pytest's) or
success, never an exception out of ``main`` and never "Traceback" on stderr.

No real work runs: the entry points of rendering, scoring, training, scene building and the
pytest run are replaced by a sentinel that stops the command there. Reaching the sentinel
counts as success: every option was accepted and the command started its work.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import COMMANDS, command_parser, main
from harness.core.paths import BUNDLED_SCENES
from harness.protocol.records import write_records
from harness.scenes.sceneset import SceneSet
from tests._compare_tables import BASE_PITCH, tiny_release


class WorkStarted(Exception):
    """Raised by the stand-ins of the expensive entry points: the options were accepted."""


# module attribute -> stand-in (each one is where a command starts real work)
WORK_ENTRY_POINTS = (
    "pytest.main",
    "harness.backends.warm_on",
    "harness.run.session.AuditSession",
    "harness.render.service.RenderService.render",
    "harness.measure.cost_estimate.calibrate",
    "harness.scenes.bundle.build_scene_set",
    "harness.render.light_maps.bundled_lighting_scalars",
    "harness.commands.train_reference.run",  # imports torch and trains: checked only to argparse
    "harness.commands.score.run",  # loads a model: its option checks run while parsing
    # init's work is writing into the folder it is given: a fuzzed "/" or "~" must never write a
    # conftest.py and pyproject.toml into the machine's root or the user's home
    "harness.commands.init_project.write_through",
)

HOSTILE_TEXT = [
    "", " ", "-1", "0", "-0", "1", "3", "1.5", "-2.5", "1e309", "nan", "inf", "-inf", "abc",
    "0x10", "0,5", "1_000", "99999999999999999999999999", str(2**63), str(2**31), "auto",
    "ftp://x/y", "s3://", "s3://b", "memory://", "http://127.0.0.1:9/x", "file://relative",
    "file:///proc/1/x", "nosuch://x", "gs://UPPER/x", "ray://", "/proc/1/x", "../escape",
    "/etc/passwd", "/dev/null", "/", ".", "~", "a,b", ",", "*", "smoke", "c0", "é漢字🙂",
]
hostile = st.one_of(
    st.sampled_from(HOSTILE_TEXT),
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=24),
)

# Commands whose documented exit 1 is a verdict on their input ("checked: not valid"), not a
# failure: validating a missing or hostile path is such a verdict.
VERDICT_COMMANDS = {"validate", "card", "validate-scenes", "compare", "lighting", "build-scenes"}

# Inputs that get a command past its own input checks, so the fuzzed option meets the work
# (by dest; a command not named here gets a missing path for each required argument).
SCENE_FILE = BUNDLED_SCENES / "jittered" / "bar-03.json"
GOOD: dict[str, dict[str, Any]] = {
    "report": {"scores": ["{records}"], "out": "{tmp}/report", "bootstrap": "0"},
    "compare": {"baseline": "{records}", "candidate": "{records}", "bootstrap": "2",
                "config": "{tmp}/pyproject.toml"},
    "contact-sheet": {"scene_file": str(SCENE_FILE), "out": "{tmp}/sheet.png", "profile": "smoke"},
    "render": {"scene_file": str(SCENE_FILE), "out": "{tmp}/r.png", "profile": "smoke"},
    "probe": {"scene_file": str(SCENE_FILE), "out": "{tmp}/p.json", "probe": "keep_half"},
    "warm": {"profile": "smoke", "cache_dir": "{tmp}/cache"},
    "materialize": {"profile": "smoke", "store": "{tmp}/store"},
    "plan": {"profile": "smoke"},
    "audit": {"profile": "smoke", "cache_dir": "{tmp}/cache", "report_dir": "{tmp}/reports"},
    "protocol": {"profile": "smoke"},
    "build-scenes": {"out": "{tmp}/scenes", "prompts_dir": "{tmp}/prompts"},
    "train-reference": {"out": "{tmp}/weights"},
}


def _targets(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser, argparse.Action]]:
    """(sub-command words, parser, action) of every action that takes a value."""
    found = []
    for action in parser._actions:  # argparse keeps no public list of a parser's options
        if isinstance(action, argparse._SubParsersAction):
            for word, sub in action.choices.items():
                found += _targets(sub, (*prefix, word))
        elif action.nargs == 0 or action.nargs == argparse.REMAINDER or action.dest == "help":
            continue
        else:
            found.append((prefix, parser, action))
    return found


TARGETS = {
    name: _targets(command_parser(name)[0]) for name in COMMANDS
}
CASES = [(name, i) for name, targets in TARGETS.items() for i in range(len(targets))]


def _argv(name: str, prefix: tuple[str, ...], parser: argparse.ArgumentParser,
          target: argparse.Action, value: str, tmp: Path, records: Path) -> list[str]:  # fmt: skip
    """The command line: good or placeholder values for what is required, ``value`` for
    ``target``."""
    good = GOOD.get(name, {})
    fill = lambda v: v.format(tmp=tmp, records=records)  # noqa: E731
    options: list[str] = []
    positionals: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.nargs == 0 \
                or action.nargs == argparse.REMAINDER or action.dest == "help":  # fmt: skip
            continue
        if action is target:
            values = [value]
        elif action.dest in good:
            given_ = good[action.dest]
            values = [fill(v) for v in (given_ if isinstance(given_, list) else [given_])]
        elif action.required or (not action.option_strings and action.nargs not in ("?", "*")):
            values = [str(tmp / "missing")]
        else:
            continue
        if action.option_strings:
            flag = next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])
            options += [f"{flag}={v}" for v in values] if flag.startswith("--") else [flag, *values]
        else:
            positionals += values
    if any(p.startswith("-") for p in positionals):
        positionals = ["--", *positionals]
    return [name, *prefix, *options, *positionals]


_BUNDLED: dict[tuple, Any] = {}


@pytest.fixture
def dry(monkeypatch, tmp_path):
    def stand_in(*args: Any, **kwargs: Any) -> Any:
        raise WorkStarted

    for target in WORK_ENTRY_POINTS:
        monkeypatch.setattr(target, stand_in)
    load = SceneSet.load.__func__

    def load_once(cls, root, *args: Any, **kwargs: Any) -> Any:
        """The bundled set (300 scenes, ~0.5 s to load) once per test session."""
        if Path(root).resolve() != BUNDLED_SCENES.resolve():
            return load(cls, root, *args, **kwargs)
        key = (args, tuple(sorted(kwargs.items())))
        if key not in _BUNDLED:
            _BUNDLED[key] = load(cls, root, *args, **kwargs)
        return _BUNDLED[key]

    monkeypatch.setattr(SceneSet, "load", classmethod(load_once))
    monkeypatch.setenv("T3D_AUDIT_CACHE_DIR", str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # ../escape lands in tmp_path, never in the repository
    (work / "pyproject.toml").write_text("[tool.t3d-audit.compare]\n", encoding="utf-8")
    records = write_records(tiny_release(BASE_PITCH), tmp_path / "records.csv")
    return work, records


def _outcome(argv: list[str], capsys) -> tuple[str, str]:
    try:
        code = main(argv)
    except WorkStarted:
        code = "work"
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out = capsys.readouterr()
    return code, out.err


def test_every_command_and_option_is_fuzzed():
    assert set(TARGETS) == set(COMMANDS)
    assert len(CASES) > 100  # the enumeration found the options, not an empty list
    assert any(a.dest == "store" for _, _, a in TARGETS["warm"])
    assert {p for p, _, _ in TARGETS["card"]} == {("validate",), ("id",), ("show",)}


@pytest.mark.parametrize("name", [name for name in COMMANDS if TARGETS[name]])
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
@given(data=st.data())
def test_hostile_option_values_are_usage_errors_or_accepted(name, data, dry, capsys):
    work, records = dry
    prefix, parser, target = data.draw(st.sampled_from(TARGETS[name]), label="option")
    value = data.draw(hostile, label="value")
    argv = _argv(name, prefix, parser, target, value, work, records)
    code, err = _outcome(argv, capsys)
    assert "Traceback" not in err, argv
    allowed = (0, 1, 2, 4, "work") if name in VERDICT_COMMANDS else (0, 2, 4, "work")
    assert code in allowed, (argv, code, err)
    if code in (2, 4):
        assert err.strip() and len(err.strip().splitlines()) == 1, (argv, err)


pytest_plugins = ["pytester"]


@pytest.mark.slow
@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
@given(data=st.data())
def test_hostile_audit_option_values_are_usage_errors_or_accepted(data, pytester):
    """The ``--audit-*`` options of the pytest plugin, on a collect-only run (the dry path:
    options are resolved at configure time, nothing renders): exit 4 or a clean collection."""
    from harness.run.options import OPTIONS, flag
    from tests._audit_project import make_project

    if not (pytester.path / "audit_tests").is_dir():
        make_project(pytester)
    dest = data.draw(st.sampled_from([d for d, spec in OPTIONS.items() if spec.kind != "flag"]), label="option")
    value = data.draw(hostile, label="value")
    result = pytester.runpytest_inprocess("--co", "-q", "-p", "no:cacheprovider", "-n", "0",
                                          f"{flag(dest)}={value}")  # fmt: skip
    text = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in text and "INTERNALERROR" not in text, (dest, value, text[-2000:])
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.USAGE_ERROR), (dest, value, result.ret, text[-2000:])
    if result.ret == pytest.ExitCode.USAGE_ERROR:
        assert len([line for line in result.stderr.lines if line.strip()]) == 1, result.stderr.lines
