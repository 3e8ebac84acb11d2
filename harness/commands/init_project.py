"""``t3d-audit init [DIR]``: set up a project to audit its own evaluator with t3d-audit.

Writes into DIR (default: the working folder):

* ``pyproject.toml``: a ``[tool.t3d-audit]`` section appended (the file is created when
  absent; an existing one is never rewritten, only appended to);
* ``conftest.py``: an example ``Scorer`` offered through the ``pytest_audit_evaluators`` hook;
* ``audits/test_<name>.py``: one example audit of the project's own, with a custom threshold;
* ``.github/workflows/t3d-audit.yml``: a CI job that caches renders, audits, and gates on the
  release comparison with the last release on main (its baseline, kept in the Actions cache).

A file that exists, or a pyproject that already has ``[tool.t3d-audit]``, stops the command
before anything is written unless ``--force`` (then the file is replaced after a copy of it is
kept as ``<name>.bak``, or ``.bak.1``, ...; in ``pyproject.toml``
only the ``tool.t3d-audit`` table is, edited with tomlkit so the rest of the file, its line
endings, its mode and a symlink to it are kept). Every target is checked (readable UTF-8 TOML,
not a directory, not a dangling symlink: init would neither write where it points nor replace
it) before the first byte is written. It prints the commands to run next; they pass as
printed (tests/test_init_project.py runs them).
"""

from __future__ import annotations

import argparse
import os
import shlex
import stat
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from harness.core.errors import AuditError
from harness.run import argtypes

HELP = "set up a project to audit its own evaluator (config, example evaluator, audit, CI)"

AUDIT_DIR = "audits"
AUDIT_NAME = "colorstat_audit"
WORKFLOW = Path(".github/workflows/t3d-audit.yml")


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


#: What the workflow installs when this install's origin is not a URL CI can reach.
PLACEHOLDER_SPEC = "t3d-audit[render] @ git+https://example.invalid/your-fork/t3d-audit.git"


def audit_command() -> str:
    """The workflow's audit: the whole study suite and the project's audits, the report kept as
    ``baselines/candidate`` whatever its verdict (the comparison step gates)."""
    return (f't3d-audit audit --profile "$T3D_AUDIT_PROFILE" --workers auto --save-baseline candidate '
            f"-- {AUDIT_DIR}")


def install_spec() -> tuple[str, str]:
    """(pip requirement, where it came from) for the workflow's install step: the URL this
    install was made from (PEP 610 ``direct_url.json``: a VCS URL pinned to its commit, or an
    archive URL), else :data:`PLACEHOLDER_SPEC` with a note to replace it."""
    import json
    from importlib import metadata

    try:
        recorded = metadata.distribution("t3d-audit").read_text("direct_url.json")
        origin = json.loads(recorded) if recorded else {}
    except (metadata.PackageNotFoundError, ValueError):
        origin = {}
    url = str(origin.get("url", "")) if isinstance(origin, dict) else ""
    vcs = origin.get("vcs_info") if isinstance(origin, dict) else None
    if url.startswith(("https://", "http://", "ssh://", "git@")):
        if isinstance(vcs, dict) and vcs.get("vcs") == "git":
            commit = f"@{vcs['commit_id']}" if vcs.get("commit_id") else ""
            return f"t3d-audit[render] @ git+{url}{commit}", "the git URL this install came from"
        if "archive_info" in origin:
            return f"t3d-audit[render] @ {url}", "the archive this install came from"
    return PLACEHOLDER_SPEC, "REPLACE this placeholder with a git URL or a wheel CI can reach"


def workflow_text() -> str:
    """The CI workflow, with this install's origin as its install step."""
    spec, origin = install_spec()
    return template("t3d-audit.yml.tmpl").format(audit_command=audit_command(), install_spec=spec,
                                                 install_origin=origin)


def next_commands() -> list[str]:
    """The commands ``init`` prints, in order (run from the project folder)."""
    return [
        f"t3d-audit audit --profile smoke --workers 2 --no-warm -- {AUDIT_DIR}",
        f"t3d-audit audit --no-warm -- {AUDIT_DIR}",
    ]


def without_own_tables(text: str) -> str:
    """``text`` (a pyproject) with its ``tool.t3d-audit`` table removed in whatever form it is
    written (``[tool.t3d-audit*]`` headers, an inline table, dotted keys), everything else kept
    byte for byte (tomlkit round-trips comments, layout and line endings)."""
    import tomlkit

    doc = tomlkit.parse(text)
    tool = doc.get("tool")
    if isinstance(tool, dict) and "t3d-audit" in tool:
        del tool["t3d-audit"]
    return tomlkit.dumps(doc)


def with_own_section(text: str, section: str, where: Path) -> str:
    """``text`` (a pyproject, maybe empty) with ``section``'s ``[tool.t3d-audit]`` tables in
    place of its own; the added lines use ``text``'s line ending. Raises :class:`AuditError`
    when the result would not be valid TOML holding exactly ``section``'s table."""
    import tomllib

    import tomlkit

    newline = "\r\n" if "\r\n" in text else "\n"
    base = without_own_tables(text)
    if base and not base.endswith("\n"):
        base += newline
    wanted = tomllib.loads(section)["tool"]["t3d-audit"]
    candidate = base + section.replace("\n", newline)
    if _holds(candidate, wanted):
        return candidate
    # the [tool] table is inline (or not a table): a [tool.t3d-audit] header cannot follow it,
    # so the table goes in through tomlkit, inline
    doc = tomlkit.parse(base)
    try:
        doc["tool"]["t3d-audit"] = wanted
        candidate = tomlkit.dumps(doc)
    except (ValueError, TypeError, KeyError, tomlkit.exceptions.TOMLKitError):
        candidate = ""
    if _holds(candidate, wanted):
        return candidate
    raise AuditError(
        "cannot add a [tool.t3d-audit] table to this pyproject (its 'tool' key is not a table)",
        where=str(where), hint="add the section by hand (docs/writing-an-audit.md) or fix 'tool'",
    )


def _holds(text: str, wanted: dict) -> bool:
    import tomllib

    from harness.core.bounded_input import toml_loads

    try:
        tool = toml_loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return False
    return isinstance(tool, dict) and tool.get("t3d-audit") == wanted


def _read_pyproject(pyproject: Path) -> str:
    """The pyproject's text ("" when absent); raises :class:`AuditError` when it is not a
    regular UTF-8 file (a symlink to one is followed)."""
    if not pyproject.exists():
        if pyproject.is_symlink():
            raise AuditError("is a dangling symlink", where=str(pyproject),
                             hint="point it at a file, or remove it")
        return ""
    if not pyproject.is_file():
        raise AuditError("is not a regular file", where=str(pyproject),
                         hint="move it aside, then run t3d-audit init again")
    try:
        return pyproject.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AuditError(f"is not UTF-8 text ({exc.reason} at byte {exc.start})",
                         where=str(pyproject), hint="save it as UTF-8 (TOML files are UTF-8)") from exc
    except OSError as exc:
        raise AuditError(f"cannot read it: {exc.strerror}", where=str(pyproject)) from exc


def _check_targets(root: Path, files: dict[Path, str]) -> None:
    """Every file init writes can be written: no target is a directory and no folder on the way
    is a file. Raises :class:`AuditError` naming the first that cannot, before anything is
    written."""
    for path in files:
        for link in (path, *(root / parent for parent in path.relative_to(root).parents)):
            if link.is_symlink() and not link.exists():  # where it points may be anywhere
                raise AuditError(f"is a dangling symlink (to {os.readlink(link)!r}); init writes "
                                 "neither through it nor over it", where=str(link),
                                 hint="point it at a file, or remove it, then run t3d-audit init again")  # fmt: skip
        if path.exists() and not path.is_file():
            raise AuditError("is not a regular file", where=str(path),
                             hint="move it aside, then run t3d-audit init again")
        for parent in path.relative_to(root).parents:
            folder = root / parent
            if folder.exists() and not folder.is_dir():
                raise AuditError("is in the way of a folder init writes into", where=str(folder),
                                 hint="move it aside, then run t3d-audit init again")


def plan(root: Path, force: bool) -> Plan:
    """Everything init would write into ``root``; raises :class:`AuditError` when it would
    overwrite without ``force``, or when any target cannot be read or written (nothing has been
    written then)."""
    import tomllib

    from harness.core.bounded_input import toml_loads

    files = {
        root / "conftest.py": template("conftest.py.tmpl"),
        root / AUDIT_DIR / f"test_{AUDIT_NAME}.py": template("test_audit.py.tmpl"),
        root / WORKFLOW: workflow_text(),
    }
    _check_targets(root, files)
    existing = [p for p in files if p.exists()]
    pyproject = root / "pyproject.toml"
    text = _read_pyproject(pyproject)
    try:
        tool = toml_loads(text).get("tool", {})
    except tomllib.TOMLDecodeError as exc:
        raise AuditError(f"cannot read it as TOML: {exc}", where=str(pyproject),
                         hint="fix the file, then run t3d-audit init again") from exc
    if isinstance(tool, dict) and "t3d-audit" in tool:
        existing.append(pyproject)
    if existing and not force:
        raise AuditError(
            "init would overwrite " + ", ".join(str(p) for p in existing), where=str(root),
            hint="move them aside, or pass --force to replace them (pyproject.toml: only its "
            "[tool.t3d-audit] tables)",
        )
    section = template("pyproject.toml.tmpl").format(audit_dir=AUDIT_DIR, audit_name=AUDIT_NAME)
    return Plan(files, pyproject, with_own_section(text, section, pyproject), existing)


def _new_file_mode() -> int:
    """The mode a new file gets from ``open`` under the current umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_through(path: Path, text: str) -> None:
    """Replace ``path``'s content atomically, keeping what the user set up: a symlink's target
    is written (the link stays a link), the permission bits are kept, the text is encoded as
    given (line endings untouched)."""
    from harness.core.fileio import write_text_atomic

    target = Path(os.path.realpath(path))
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else _new_file_mode()
    write_text_atomic(target, text, mode=mode)


def back_up(path: Path) -> Path:
    """Copy the file ``path`` (a symlink's target) to the first free ``<name>.bak``,
    ``<name>.bak.1``, ... beside it, mode kept; returns the copy's path."""
    from harness.core.fileio import write_bytes_atomic

    target = Path(os.path.realpath(path))
    backup, n = path.with_name(f"{path.name}.bak"), 0
    while backup.exists() or backup.is_symlink():
        n += 1
        backup = path.with_name(f"{path.name}.bak.{n}")
    write_bytes_atomic(backup, target.read_bytes(), mode=stat.S_IMODE(target.stat().st_mode))
    return backup


def run(args: argparse.Namespace) -> int:
    root = Path(args.directory).resolve()
    todo = plan(root, args.force)
    # --force replaces a user's file only after a copy of it is kept
    backups = {path: back_up(path) for path in todo.replaced}
    for path, text in todo.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_through(path, text)
    write_through(todo.pyproject, todo.pyproject_text)
    for path in [todo.pyproject, *todo.files]:
        verb = "replaced" if path in todo.replaced else "wrote"
        kept = f" (the previous one is kept as {backups[path].relative_to(root).as_posix()})" if path in backups else ""
        through = f" through its link, in {os.path.realpath(path)}" if path.is_symlink() else ""
        print(f"t3d-audit init: {verb} {path.relative_to(root).as_posix()}{through}{kept}")
    print(f"\nNext, in {shlex.quote(str(root))}:")
    print(f"  {next_commands()[0]}   # a quick check: the study's audit + {AUDIT_DIR}/ on colorstat")
    print(f"  {next_commands()[1]}   # the study's protocol (profile in pyproject.toml)")
    print("Reports go to reports/<run-id>/ here; renders and scores to the per-user cache "
          "($T3D_AUDIT_CACHE_DIR overrides it). CI: .github/workflows/t3d-audit.yml (audit, then "
          "gate on `t3d-audit compare` against the last release on main).")
    if install_spec()[0] == PLACEHOLDER_SPEC:
        print(f"CI: set T3D_AUDIT_SPEC in {WORKFLOW.as_posix()}: this t3d-audit was installed from a "
              "local folder, which CI cannot reach (give a git URL or a wheel)")
    return 0
