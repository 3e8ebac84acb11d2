"""Confirmed worst configurations saved into a profile file as named levels (issue 40 item 5).

``t3d-audit search ... --save-level NAME --into FILE`` writes the confirmed worst point into a
user profile file (never the bundled ``harness/profiles.json``): the file maps profile names to
profiles in the bundled format, each with an extra ``saved_levels`` object, level name → the
point's printed form (``pitch=52,...,colour_temperature=2500``)::

    {"smoke": {"c0": {...}, "prompts": 2, "levels": {...},
               "saved_levels": {"offgrid-2026-12": "resolution=224,...,colour_temperature=2500"}}}

A new file starts from the bundled profile the search ran on; a saved level of the same name is
replaced. :func:`saved_configurations` turns each saved level back into the very configuration
(same render key) the search measured, so the next release can measure it again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.errors import AuditError
from harness.protocol.configurations import (
    PROFILES_FILE,
    Configuration,
    Profile,
    ProtocolError,
    _parse_profile,
)

SAVED_KEY = "saved_levels"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class SavedLevelError(AuditError):
    """A profile file or saved level that cannot be read or written as asked."""


@dataclass(frozen=True)
class SavedProfile:
    """A profile of a user file and its saved levels (name → printed search point)."""

    profile: Profile
    levels: dict[str, str]


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SavedLevelError(f"cannot read profile file {path}: {exc}", where=str(path)) from None
    if not isinstance(raw, dict):
        raise SavedLevelError("a profile file maps profile name -> profile", where=str(path))
    return raw


def _parse(name: str, data: Any, path: Path) -> SavedProfile:
    if not isinstance(data, dict):
        raise SavedLevelError("profile must be an object", where=f"{path}#/{name}")
    body = {k: v for k, v in data.items() if k != SAVED_KEY}
    try:
        profile = _parse_profile(name, body)
    except ProtocolError as exc:
        raise SavedLevelError(exc.what, where=f"{path}#/{name}", hint=exc.hint) from None
    levels = data.get(SAVED_KEY, {})
    if not isinstance(levels, dict) or not all(isinstance(v, str) for v in levels.values()):
        raise SavedLevelError(f"'{SAVED_KEY}' must map level name -> printed search point",
                              where=f"{path}#/{name}/{SAVED_KEY}")  # fmt: skip
    for level in levels:
        _check_name(level, f"{path}#/{name}/{SAVED_KEY}")
    return SavedProfile(profile, dict(levels))


def _check_name(level: str, where: str) -> None:
    if not _NAME.match(level):
        raise SavedLevelError(f"bad level name {level!r}", where=where,
                              hint="letters, digits, '_', '.', '-' (at most 64), starting with a letter or digit")  # fmt: skip


def load_profile_file(path: str | Path) -> dict[str, SavedProfile]:
    """Every profile of the user file ``path`` with its saved levels (each level is checked
    to be a point of the profile's search space)."""
    path = Path(path)
    found = {name: _parse(name, data, path) for name, data in _read(path).items()}
    for saved in found.values():
        saved_configurations(saved, where=str(path))
    return found


def saved_configurations(saved: SavedProfile, where: str = "saved_levels") -> dict[str, Configuration]:
    """Each saved level as the configuration the search measured (factor ``search``, level
    the point's printed form, the same render key)."""
    from harness.search.space import space_for

    space = space_for(saved.profile)
    out = {}
    for name, text in saved.levels.items():
        try:
            out[name] = space.configuration(space.parse(text, where=f"{where}/{SAVED_KEY}/{name}"))
        except ProtocolError as exc:
            raise SavedLevelError(exc.what, where=exc.where or where, hint=exc.hint) from None
    return out


def save_level(path: str | Path, profile: str, level: str, point: str) -> Path:
    """Write ``point`` (a printed search point of ``profile``'s space) as saved level
    ``level`` of profile ``profile`` in the user file ``path`` (created from the bundled
    profile when absent; other profiles and levels kept). Returns ``path``."""
    from harness.core.fileio import write_json_atomic

    path = Path(path)
    if path.resolve() == PROFILES_FILE.resolve():
        raise SavedLevelError("refusing to write the bundled profiles file", where=str(path),
                              hint="name a profile file of your own with --into")  # fmt: skip
    _check_name(level, "--save-level")
    raw = _read(path) if path.exists() else {}
    if profile not in raw:
        bundled = json.loads(PROFILES_FILE.read_text(encoding="utf-8"))
        if profile not in bundled:
            raise SavedLevelError(f"profile {profile!r} is neither in {path} nor bundled", where="--profile")
        raw[profile] = bundled[profile]
    entry = dict(raw[profile])
    entry[SAVED_KEY] = {**entry.get(SAVED_KEY, {}), level: point}
    raw[profile] = entry
    saved = _parse(profile, entry, path)
    saved_configurations(saved, where=str(path))  # the point must be one of this profile's space
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, raw)
    return path
