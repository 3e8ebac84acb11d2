"""``t3d-audit`` command line. Each subcommand lives in a module of ``harness/commands/`` (see ``COMMANDS``).

A command module provides ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``. Modules are imported only when their command runs, so ``--help`` and
light commands never import bpy or torch. Errors derived from :class:`AuditError` are printed
as one clear line and exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from harness import __version__
from harness.errors import AuditError

# command name -> (module under harness.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("audit", "run the audit suite (pytest) and print the verdict"),
    "templates": ("templates", "list the 337 caption templates"),
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
    module_name, help_ = COMMANDS[name]
    try:
        module = importlib.import_module(f"harness.commands.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"harness.commands.{module_name}":
            print(f"t3d-audit: command {name!r} is not available in this build", file=sys.stderr)
            return 2
        raise
    parser = argparse.ArgumentParser(prog=f"t3d-audit {name}", description=help_)
    module.add_arguments(parser)
    args = parser.parse_args(rest)
    try:
        return int(module.run(args) or 0)
    except AuditError as exc:
        print(f"t3d-audit {name}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"t3d-audit {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: not an error. Point stdout at devnull so the
        # interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
