"""``t3d-audit init [DIR]``: set up a project to audit its own evaluator with t3d-audit.

Writes into DIR (default: the working folder):

* ``pyproject.toml``: a ``[tool.t3d-audit]`` section appended (the file is created when
  absent; an existing one is never rewritten, only appended to);
* ``conftest.py``: an example ``Scorer`` offered through the ``pytest_audit_evaluators`` hook;
* ``audits/test_<name>.py``: one example audit of the project's own, with a custom threshold;
* ``.github/workflows/t3d-audit.yml``: a CI job that caches renders and gates on the verdict.

A file that exists, or a pyproject that already has ``[tool.t3d-audit]``, stops the command
before anything is written unless ``--force`` (then the file is replaced; in ``pyproject.toml``
only the ``[tool.t3d-audit*]`` tables are). It prints the commands to run next; they pass as
printed (tests/test_init_project.py runs them).
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from harness import argtypes
from harness.errors import AuditError

HELP = "set up a project to audit its own evaluator (config, example evaluator, audit, CI)"

AUDIT_DIR = "audits"
AUDIT_NAME = "colorstat_audit"
WORKFLOW = Path(".github/workflows/t3d-audit.yml")
# a [tool.t3d-audit] or [tool.t3d-audit.*] table header (also the quoted "t3d-audit" form)
_OWN_TABLE = re.compile(r'^\s*\[\s*tool\s*\.\s*"?t3d-audit"?\s*(\.|\])')
_ANY_TABLE = re.compile(r"^\s*\[")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", type=argtypes.output_dir, default=Path("."),
                        help="the project folder (default: the working folder)")
    parser.add_argument("--force", action="store_true",
                        help="replace existing files and an existing [tool.t3d-audit] section")


@dataclass(frozen=True)
class Plan:
    """What init writes: ``files`` path -> text (replacing), ``pyproject`` the new text."""

    files: dict[Path, str]
    pyproject: Path
    pyproject_text: str
    replaced: list[Path]


def template(name: str) -> str:
    return resources.files("harness").joinpath("init_templates", name).read_text(encoding="utf-8")


def gate_command() -> str:
    return f"t3d-audit audit --gate --no-warm --workers auto -- {AUDIT_DIR}"


def next_commands() -> list[str]:
    """The commands ``init`` prints, in order (run from the project folder)."""
    return [
        f"t3d-audit audit --profile smoke --workers 2 --no-warm -- {AUDIT_DIR}",
        f"t3d-audit audit --no-warm -- {AUDIT_DIR}",
    ]


def without_own_tables(text: str) -> str:
    """``text`` (a pyproject) with every ``[tool.t3d-audit*]`` table removed, the rest kept."""
    kept, inside = [], False
    for line in text.splitlines(keepends=True):
        if _ANY_TABLE.match(line):
            inside = bool(_OWN_TABLE.match(line))
        if not inside:
            kept.append(line)
    return "".join(kept)


def plan(root: Path, force: bool) -> Plan:
    """Everything init would write into ``root``; raises :class:`AuditError` when it would
    overwrite without ``force``."""
    import tomllib

    files = {
        root / "conftest.py": template("conftest.py.tmpl"),
        root / AUDIT_DIR / f"test_{AUDIT_NAME}.py": template("test_audit.py.tmpl"),
        root / WORKFLOW: template("t3d-audit.yml.tmpl").format(gate_command=gate_command()),
    }
    existing = [p for p in files if p.exists()]
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8") if pyproject.is_file() else ""
    try:
        has_table = "t3d-audit" in tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError as exc:
        raise AuditError(f"cannot read it as TOML: {exc}", where=str(pyproject),
                         hint="fix the file, then run t3d-audit init again") from exc
    if has_table:
        existing.append(pyproject)
    if existing and not force:
        raise AuditError(
            "init would overwrite " + ", ".join(str(p) for p in existing), where=str(root),
            hint="move them aside, or pass --force to replace them (pyproject.toml: only its "
            "[tool.t3d-audit] tables)",
        )
    section = template("pyproject.toml.tmpl").format(audit_dir=AUDIT_DIR, audit_name=AUDIT_NAME)
    base = without_own_tables(text) if has_table else text
    if base and not base.endswith("\n"):
        base += "\n"
    return Plan(files, pyproject, base + section, existing)


def run(args: argparse.Namespace) -> int:
    from harness.fileio import write_text_atomic

    root = Path(args.directory).resolve()
    todo = plan(root, args.force)
    for path, text in todo.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
    write_text_atomic(todo.pyproject, todo.pyproject_text)
    for path in [todo.pyproject, *todo.files]:
        verb = "replaced" if path in todo.replaced else "wrote"
        print(f"t3d-audit init: {verb} {path.relative_to(root).as_posix()}")
    print(f"\nNext, in {shlex.quote(str(root))}:")
    print(f"  {next_commands()[0]}   # a quick check: the study's audit + {AUDIT_DIR}/ on colorstat")
    print(f"  {next_commands()[1]}   # the study's protocol (profile in pyproject.toml)")
    print("Reports go to reports/<run-id>/ here; renders and scores to the per-user cache "
          "($T3D_AUDIT_CACHE_DIR overrides it). CI: .github/workflows/t3d-audit.yml.")
    return 0
