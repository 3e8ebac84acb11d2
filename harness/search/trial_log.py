"""The search's trial log: an append-only JSON-lines file that makes a search resumable.

Line 1 is the header: what was searched (``{"kind": "header", "key", "search": {...}}``, the
search's inputs with the space). Every later line is one evaluated trial, appended, flushed
and fsync'ed before the optimiser is told its value::

    {"kind": "trial", "n": 17, "batch": 2, "point": "pitch=52,...", "value": 3.1,
     "status": "ok", "error": "", "seconds": 0.41}

``value`` is ``null`` for a failed trial (``status`` ``failed``, reason in ``error``): a
failure is never a number. After a crash or ``kill -9`` the file holds every finished trial
and at most one torn last line, which :func:`read_log` drops; renders and scores are in their
caches, so a resumed search replays the log (the seeded optimiser proposes the same points in
the same order) and continues where it stopped.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.errors import AuditError

LOG_VERSION = 1


class TrialLogError(AuditError):
    """A trial log that belongs to another search or cannot be read."""


@dataclass(frozen=True)
class Trial:
    """One evaluated point: its index ``n`` (0-based, ask order), ``batch``, printed ``point``,
    ``value`` (the objective's effect; NaN when failed), ``status``, ``error``, ``seconds``."""

    n: int
    batch: int
    point: str
    value: float
    status: str = "ok"
    error: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "trial", "n": self.n, "batch": self.batch, "point": self.point,
                "value": self.value if math.isfinite(self.value) else None, "status": self.status,
                "error": self.error, "seconds": round(self.seconds, 4)}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trial:
        value = d.get("value")
        return cls(int(d["n"]), int(d["batch"]), str(d["point"]),
                   math.nan if value is None else float(value), str(d.get("status", "ok")),
                   str(d.get("error", "")), float(d.get("seconds", 0.0)))  # fmt: skip


def _append(fh: Any, entry: dict[str, Any]) -> None:
    fh.write(json.dumps(entry, sort_keys=True, allow_nan=False) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def read_log(path: Path, key: str) -> list[Trial]:
    """The trials of the log at ``path`` written for search ``key`` (``[]`` when absent). A
    torn last line (a kill mid-write) is dropped; a header for another search is an error."""
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")
    complete = lines[:-1]  # every complete line ends with "\n": the last piece is torn or ""
    if not complete:
        return []
    try:
        header = json.loads(complete[0])
    except ValueError as exc:
        raise TrialLogError(f"unreadable header: {exc}", where=f"{path}:1",
                            hint="delete the file to start the search afresh") from None  # fmt: skip
    if header.get("kind") != "header" or header.get("key") != key:
        raise TrialLogError(
            "this trial log belongs to another search (its evaluator, profile, objective, "
            "budget, seed, split or space differ)", where=f"{path}:1",
            hint="give another --log, or delete the file to start afresh",
        )  # fmt: skip
    trials: list[Trial] = []
    for i, line in enumerate(complete[1:], start=2):
        try:
            entry = json.loads(line)
            trials.append(Trial.from_dict(entry))
        except (ValueError, KeyError, TypeError) as exc:
            raise TrialLogError(f"unreadable trial line: {exc}", where=f"{path}:{i}",
                                hint="delete the file to start the search afresh") from None  # fmt: skip
        if trials[-1].n != len(trials) - 1:
            raise TrialLogError(f"trial {trials[-1].n} out of order", where=f"{path}:{i}")
    return trials


class TrialLog:
    """Appends trials to ``path`` (creating it with its header), fsync'ed line by line."""

    def __init__(self, path: Path, key: str, header: dict[str, Any]):
        self.path = Path(path)
        self.key = key
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keep = read_log(self.path, key)  # validates the header of an existing log
        if self.path.is_file():
            # drop a torn last line before appending after it
            text = self.path.read_text(encoding="utf-8")
            if not text.endswith("\n"):
                with open(self.path, "r+", encoding="utf-8") as fh:
                    fh.truncate(len(text[: text.rfind("\n") + 1].encode("utf-8")))
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - held open while searching
        if self._fh.tell() == 0:
            _append(self._fh, {"kind": "header", "key": key, "version": LOG_VERSION, "search": header})
        self.trials = keep

    def append(self, trial: Trial) -> None:
        _append(self._fh, trial.to_dict())
        self.trials.append(trial)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> TrialLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
