"""Confirmed worst configurations saved into a profile file as named levels,
and that file read back by the audit (``--audit-profile-file``, docs/search.md).

``t3d-audit search ... --save-level NAME --into FILE`` writes the confirmed worst point into a
user profile file (never the bundled ``harness/profiles.json``). The file maps names of bundled
profiles to what it adds to them: ``saved_levels`` (level name → the point's printed form and
the objective it was found with) and optionally a ``search`` block::

    {"smoke": {"saved_levels": {"offgrid-2026-12": {"point": "resolution=224,...,colour_temperature=2500",
                                                    "objective": "pair:faithful,gridded"}}}}

A level may also be the printed point alone (a string; its objective is then the profile's
search block's, else ``shift``). Any other profile key the file gives (files written before
this layout copied the whole bundled profile) must equal the bundled profile's: a file adds to
a bundled profile, it never changes its grid, so the grid a report names by the profile's name
is the grid it measured. :func:`saved_configurations` turns each saved level back into the very
configuration (same render key) the search measured, so the next release measures it again:
under ``pytest audit_tests --audit-profile NAME --audit-profile-file FILE`` each saved level is
checked by ``test_saved_level`` against the threshold of its objective.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NoReturn

from harness.core.errors import AuditError, ProtocolError
from harness.protocol.configurations import Configuration
from harness.protocol.profiles import PROFILES_FILE, Profile, _parse_profile

SAVED_KEY = "saved_levels"
#: What a profile file may add to a bundled profile (every other key must equal the bundled one).
ADDED_KEYS = frozenset({SAVED_KEY, "search"})
#: The most saved levels one profile of a file may hold (each is measured in every audit).
MAX_SAVED_LEVELS = 1000
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class SavedLevelError(AuditError):
    """A profile file or saved level that cannot be read or written as asked."""


@dataclass(frozen=True)
class SavedLevel:
    """One saved level: its ``name``, the printed search ``point`` and the ``objective`` it was
    found with (``None``: the profile's search block's, else ``shift``)."""

    name: str
    point: str
    objective: str | None = None

    def to_dict(self) -> dict[str, str] | str:
        return self.point if self.objective is None else {"point": self.point, "objective": self.objective}


@dataclass(frozen=True)
class SavedProfile:
    """A bundled profile as a user file extends it: the profile (with the file's search block
    when it gives one) and its saved levels by name."""

    profile: Profile
    saved: dict[str, SavedLevel]

    @property
    def levels(self) -> dict[str, str]:
        """Level name → printed point."""
        return {name: level.point for name, level in self.saved.items()}

    def objective_of(self, name: str) -> str:
        """The objective level ``name`` is checked with."""
        level = self.saved[name]
        if level.objective is not None:
            return level.objective
        return self.profile.search.objective if self.profile.search is not None else "shift"


def _bundled_raw() -> dict[str, object]:
    return json.loads(PROFILES_FILE.read_text(encoding="utf-8"))


_READ_HINT = "give a JSON file written by 't3d-audit search --save-level NAME --into FILE'"


def _read(path: Path) -> dict[str, object]:
    """The user profile file ``path`` as JSON: bounded (harness.core.bounded_input), without
    NaN or Infinity, and with no key given twice in one object (JSON would keep the last)."""
    from harness.core.bounded_input import DuplicateKeyError, loads, read_text, unique_object

    text = ""
    try:
        text = read_text(path, what="profile file")
        raw = loads(text, where=path, object_pairs_hook=unique_object, parse_constant=_no_constant)
    except DuplicateKeyError as exc:
        lines = _lines_of(text, exc.key)
        at = f" (lines {', '.join(map(str, lines[:-1]))} and {lines[-1]})" if len(lines) > 1 else ""
        shown = repr(exc.key) if len(exc.key) <= 80 else repr(exc.key[:77] + "...")
        raise SavedLevelError(f"{shown} is given twice in one object{at}: JSON would keep only the last, "
                              "so the first would vanish", where=str(path),
                              hint="remove or rename one of them") from None  # fmt: skip
    except AuditError as exc:
        raise SavedLevelError(f"cannot read profile file: {exc.what}", where=str(path), hint=_READ_HINT) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SavedLevelError(f"cannot read profile file: {exc}", where=str(path), hint=_READ_HINT) from None
    if not isinstance(raw, dict):
        raise SavedLevelError("a profile file maps profile name -> profile", where=str(path),
                              hint='e.g. {"smoke": {"saved_levels": {"NAME": {"point": "...", "objective": "..."}}}}')  # fmt: skip
    return raw


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def _lines_of(text: str, key: str) -> list[int]:
    """The 1-based lines where ``key`` is written as an object key (``"key":``)."""
    import json
    import re

    pattern = re.compile(r'(?<!\\)' + re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:")
    found = [text.count("\n", 0, m.start()) + 1 for m in pattern.finditer(text)]
    if len(found) < 2:  # written with escapes (\u0041): name the key only
        escaped = re.compile(re.escape(json.dumps(key)) + r"\s*:")
        found += [text.count("\n", 0, m.start()) + 1 for m in escaped.finditer(text)]
    return sorted(set(found))[:4]


def _refuse_odd_target(path: Path, what: str) -> None:
    """:class:`SavedLevelError` when ``path`` is a symlink, folder, FIFO, device or socket
    (a missing file passes: the caller decides whether it may be created)."""
    from harness.core.fileio import not_a_plain_file

    try:
        kind = not_a_plain_file(path)
    except OSError as exc:
        raise SavedLevelError(f"cannot read the {what}: {exc.strerror}", where=str(path)) from None
    if kind is not None:
        raise SavedLevelError(f"the {what} is {kind}", where=str(path),
                              hint="name a plain JSON file of your own")  # fmt: skip


def _level(name: str, value: object, where: str) -> SavedLevel:
    _check_name(name, where)
    if isinstance(value, str):
        return SavedLevel(name, value)
    if isinstance(value, dict) and set(value) <= {"point", "objective"} and isinstance(value.get("point"), str):
        objective = value.get("objective")
        if objective is not None and (not isinstance(objective, str) or not objective):
            raise SavedLevelError(f"objective of saved level {name!r} must be shift, ranking or pair:A,B",
                                  where=f"{where}/{name}/objective")  # fmt: skip
        return SavedLevel(name, value["point"], objective)
    raise SavedLevelError(f"saved level {name!r} must be a printed search point or "
                          '{"point": "...", "objective": "..."}', where=f"{where}/{name}")  # fmt: skip


def _parse(name: str, data: object, path: Path, bundled: dict[str, object] | None = None) -> SavedProfile:
    where = f"{path}#/{name}"
    bundled = _bundled_raw() if bundled is None else bundled
    if name not in bundled:
        raise SavedLevelError(f"profile {name!r} is not a bundled profile", where=where,
                              hint=f"a profile file adds saved levels to a bundled profile: one of {', '.join(bundled)}")  # fmt: skip
    if not isinstance(data, dict):
        raise SavedLevelError("profile must be an object", where=where,
                              hint=f"keys: {', '.join(sorted(ADDED_KEYS))}")  # fmt: skip
    changed = sorted(k for k in data if k not in ADDED_KEYS and data[k] != bundled[name].get(k))
    if changed:
        raise SavedLevelError(f"{', '.join(changed)} differ from the bundled profile {name!r}", where=where,
                              hint=f"a profile file only adds {' and '.join(sorted(ADDED_KEYS))}: remove the other keys "
                              "(the bundled profile's grid is used)")  # fmt: skip
    body = dict(bundled[name])
    if "search" in data:
        body["search"] = data["search"]
    try:
        profile = _parse_profile(name, body)
    except ProtocolError as exc:
        raise SavedLevelError(exc.what, where=f"{where}/search" if "search" in data else where, hint=exc.hint) from None
    levels = data.get(SAVED_KEY, {})
    if not isinstance(levels, dict):
        raise SavedLevelError(f"'{SAVED_KEY}' must map level name -> printed search point",
                              where=f"{where}/{SAVED_KEY}")  # fmt: skip
    if len(levels) > MAX_SAVED_LEVELS:
        raise SavedLevelError(f"{len(levels)} saved levels, more than {MAX_SAVED_LEVELS}", where=f"{where}/{SAVED_KEY}",
                              hint="each level is measured in every audit: keep the ones still worth checking")  # fmt: skip
    saved = {level: _level(level, value, f"{where}/{SAVED_KEY}") for level, value in levels.items()}
    return SavedProfile(profile, saved)


def _check_name(level: object, where: str) -> None:
    ok = isinstance(level, str) and 0 < len(level) <= 64 and set(level) <= _NAME_CHARS and level[0] not in "_.-"
    if not ok:
        raise SavedLevelError(f"bad level name {level!r}", where=where,
                              hint="letters, digits, '_', '.', '-' (at most 64), starting with a letter or digit")  # fmt: skip


def load_profile_file(path: str | Path) -> dict[str, SavedProfile]:
    """Every profile of the user file ``path`` with its saved levels (each level is checked
    to be a point of the profile's search space, and its objective to parse)."""
    path = Path(path)
    bundled = _bundled_raw()
    found = {name: _parse(name, data, path, bundled) for name, data in _read(path).items()}
    for name, saved in found.items():
        configurations = saved_configurations(saved, where=str(path))
        # each point in its printed form (a hand-written one may space or order its axes freely)
        found[name] = SavedProfile(saved.profile, {level: replace(value, point=configurations[level].level)
                                                   for level, value in saved.saved.items()})  # fmt: skip
    return found


def audit_profile(path: str | Path, name: str) -> SavedProfile:
    """Profile ``name`` as the user file ``path`` extends it (``--audit-profile-file``)."""
    found = load_profile_file(path)
    if name not in found:
        raise SavedLevelError(f"profile {name!r} is not in the profile file", where=str(path),
                              hint=f"it has {', '.join(found) or 'no profile'}; name one with --audit-profile")  # fmt: skip
    return found[name]


def saved_configurations(saved: SavedProfile, where: str = "saved_levels") -> dict[str, Configuration]:
    """Each saved level as the configuration the search measured (factor ``search``, level
    the point's printed form, the same render key)."""
    from harness.search.space import space_for

    space = space_for(saved.profile)
    out = {}
    for name, level in saved.saved.items():
        at = f"{where}#/{saved.profile.name}/{SAVED_KEY}/{name}"
        try:
            out[name] = space.configuration(space.parse(level.point, where=at))
        except ProtocolError as exc:
            raise SavedLevelError(exc.what, where=exc.where or at, hint=exc.hint) from None
        _check_objective(saved.objective_of(name), f"{at}/objective")
    return out


def _check_objective(text: str, where: str) -> None:
    """``shift``, ``ranking`` or ``pair:A,B`` in form (the generators are checked against the
    run's scene set when the level is measured)."""
    from harness.protocol.search_limits import check_objective_form

    try:
        check_objective_form(text, where)
    except AuditError as exc:
        raise SavedLevelError(exc.what, where=where) from None


def check_save_target(path: str | Path, profile: str, level: str) -> dict[str, object]:
    """Check, before any search, that saved level ``level`` of bundled profile ``profile`` can
    be written into the user file ``path``: the name is valid, the target is not the bundled
    file, a symlink, a folder or another kind of file, and an existing file is a t3d-audit
    profile file (every profile in it reads back); returns the file's JSON (``{}`` when absent).
    :class:`SavedLevelError` naming what is wrong otherwise."""
    path = Path(path)
    _check_name(level, "--save-level")
    if profile not in _bundled_raw():
        raise SavedLevelError(f"profile {profile!r} is not bundled", where="--profile")
    _refuse_odd_target(path, "--into file")
    if path.resolve() == PROFILES_FILE.resolve():
        raise SavedLevelError("refusing to write the bundled profiles file", where=str(path),
                              hint="name a profile file of your own with --into")  # fmt: skip
    if not path.exists():
        return {}
    raw = _read(path)
    try:
        bundled = _bundled_raw()
        for name, data in raw.items():
            saved_configurations(_parse(name, data, path, bundled), where=str(path))
    except SavedLevelError as exc:
        raise SavedLevelError(f"not a t3d-audit profile file, left as it is: {exc.what}", where=exc.where or str(path),
                              hint="name a profile file of your own (or a new file) with --into") from None  # fmt: skip
    return raw


def save_level(path: str | Path, profile: str, level: str, point: str, objective: str | None = None) -> Path:
    """Write ``point`` (a printed search point of ``profile``'s space, found with ``objective``)
    as saved level ``level`` of bundled profile ``profile`` in the user file ``path`` (created
    when absent; other profiles and levels kept, a level of the same name replaced); the target
    is checked first (:func:`check_save_target`). Returns ``path``."""
    from harness.core.fileio import write_json_atomic

    path = Path(path)
    raw = check_save_target(path, profile, level)
    entry = dict(raw.get(profile, {}))
    entry[SAVED_KEY] = {**entry.get(SAVED_KEY, {}), level: SavedLevel(level, point, objective).to_dict()}
    raw[profile] = entry
    saved = _parse(profile, entry, path)
    saved_configurations(saved, where=str(path))  # the point must be one of this profile's space
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, raw)
    return path
