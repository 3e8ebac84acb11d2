"""``t3d-audit`` command line. Each subcommand lives in a module of ``harness/commands/`` (see ``COMMANDS``).

A command module provides ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``. Modules are imported only when their command runs, so ``--help`` and
light commands never import bpy or torch. Errors derived from :class:`AuditError` are printed
as one clear line and exit with status 2. Option values are checked while the command line
is parsed (the ``type=`` checks of :mod:`harness.run.argtypes`), before the command does any
work: a bad value is one line naming the option and exits with status 2 too.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from harness import __version__
from harness.core.errors import AuditError

# command name -> (module under harness.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("audit", "run the audit suite (pytest) and print the verdict"),
    "init": ("init_project", "set up a project to audit its own evaluator (config, example, audit, CI)"),
    "templates": ("templates", "list the 337 caption templates"),
    "thresholds": ("thresholds_list", "list the known thresholds with their built-in values"),
    "protocol": ("protocol_list", "list a profile's configuration family"),
    "validate-scenes": ("validate_scenes", "validate a scene set against its manifest"),
    "import-scene": ("import_scene", "import a sceneState JSON or glTF/GLB scene into a scene set"),
    "import-scenes": ("import_scenes", "import a folder of generator outputs into one scene set"),
    "build-scenes": ("build_scenes", "generate the bundled frozen scene set"),
    "probe": ("probe", "apply a content probe to a scene file"),
    "plan": ("plan", "show a profile's render plan"),
    "render": ("render", "render one scene under one configuration"),
    "warm": ("warm", "render everything a profile needs into the cache or a shared store"),
    "materialize": ("materialize", "render and score a profile into a shared store (pytest --audit-store)"),
    "contact-sheet": ("contact_sheet", "one PNG grid of a scene under each factor's levels"),
    "evaluators": ("evaluators", "list registered evaluators"),
    "score": ("score", "score images against captions"),
    "report": ("report", "compute tables and summary.json from raw score files"),
    "validate": ("validate", "re-verify a report directory"),
    "html": ("html", "write a report directory's self-contained report.html"),
    "compare": ("compare", "gate a release against its previous release (paired, with margins)"),
    "card": ("card", "build or validate an Evaluator Configuration Card"),
    "lighting": ("lighting", "EV and CCT of the lighting maps (study Table 8)"),
    "train-reference": ("train_reference", "train the bundled reference evaluators"),
    "agreement": ("agreement", "agreement of evaluator scores with human ratings (noise ceiling beside)"),
    "leaderboard": ("leaderboard", "rank evaluators across several report directories"),
    "concordance": ("concordance", "rank generators under several protocol presets and find where their winners disagree"),
    "reproduce": ("reproduce", "find the protocol presets and nearby protocols consistent with a reported score or ordering"),
    "search": ("search", "search the protocol space beyond the grid for where a verdict breaks"),
    "claim": ("claim", "does generator A beat B under an evaluator, and under which protocols? (verdict, paper block)"),
}


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="t3d-audit",
        description="Audit text-to-3D evaluators for configuration fragility.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n"
        + "\n".join(f"  {name:<16} {help_}" for name, (_, help_) in COMMANDS.items())
        + "\n\nRun 't3d-audit COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"t3d-audit {__version__}")
    parser.add_argument("command", nargs="?", help="one of the commands below")
    return parser


def one_line(text: str) -> str:
    """``text`` with control characters (newlines, carriage returns, escapes) written as
    Python escapes: an error quoting a hostile value stays one line and cannot move the
    cursor or fake a second message."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


class CommandParser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line (what is wrong, where to read more)
    instead of the usage block. A bad option value (a failed ``type=`` check, an invalid
    choice) reaches :func:`main` as :class:`argparse.ArgumentError` and is reported like a
    typed error; a missing or unknown argument exits here with status 2, as argparse does."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("exit_on_error", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see '{self.prog} --help')\n")


def option_error(exc: argparse.ArgumentError) -> str:
    """``--jobs must be at least 1, got 0``: the option's long name, then what is wrong."""
    names = (exc.argument_name or "").split("/")
    name = next((n for n in names if n.startswith("--")), names[0])
    if not name:
        return exc.message
    return f"{name} {exc.message}" if exc.message.startswith("must") else f"{name}: {exc.message}"


def command_parser(name: str) -> tuple[argparse.ArgumentParser, ModuleType]:
    """The parser of command ``name`` and its module (imports the module: bpy/torch only
    if the module imports them at load time, which none does)."""
    module_name, help_ = COMMANDS[name]
    module = importlib.import_module(f"harness.commands.{module_name}")
    parser = CommandParser(prog=f"t3d-audit {name}", description=help_)
    module.add_arguments(parser)
    return parser, module


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    top = _top_parser()
    if not argv or argv[0].startswith("-"):
        top.parse_args(argv)
        top.print_help()
        return 0 if not argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        top.error(f"unknown command {name!r}; choose from {', '.join(COMMANDS)}")
    try:
        parser, module = command_parser(name)
    except ModuleNotFoundError as exc:
        if exc.name == f"harness.commands.{COMMANDS[name][0]}":
            print(f"t3d-audit: command {name!r} is not available in this build", file=sys.stderr)
            return 2
        raise
    try:
        args = parser.parse_args(rest)
        args.argv = [name, *rest]  # the command line as given (a retry command repeats it)
    except argparse.ArgumentError as exc:
        print(f"t3d-audit {name}: error: {one_line(option_error(exc))} (see 't3d-audit {name} --help')",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        from harness.run.environment import check_environment

        check_environment()  # every T3D_AUDIT_* value, before any work
        return int(module.run(args) or 0)
    except AuditError as exc:
        print(f"t3d-audit {name}: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"t3d-audit {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: not an error. Point stdout at devnull so the
        # interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
