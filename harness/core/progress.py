"""Progress of a long step, readable on a terminal and in a log.

On a terminal, tqdm's bar (redrawn in place). Written to a file or pipe (CI logs, ``tox``
output captured by a runner), a redrawn bar becomes one line of carriage returns that grows
for the whole step and looks dead; there, one plain line every ``interval_s`` seconds and one
at the end: ``rendered 120/1188 renders (10%), 01:05 elapsed, about 09:41 left``.

A step whose lines must pass through a sink of their own (an xdist worker writes past
pytest's capture, :func:`harness.plugin.configure._uncaptured_line`) gives ``write``: plain
lines through it, never a bar (several workers redrawing one terminal line garble it).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Protocol, TextIO

# seconds between two lines in a log; T3D_AUDIT_PROGRESS_INTERVAL overrides it
DEFAULT_INTERVAL_S = 30.0


class Progress(Protocol):
    def update(self, n: int = 1) -> object: ...

    def close(self) -> None: ...


class LineProgress:
    """Plain-line progress for a non-TTY stream: a line at most every ``interval_s`` seconds
    (the first once ``interval_s`` has passed) and a last one at :meth:`close` when anything
    was done since the previous line."""

    def __init__(
        self,
        total: int,
        *,
        verb: str,
        unit: str,
        stream: TextIO | None = None,
        interval_s: float = DEFAULT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        write: Callable[[str], None] | None = None,
        label: str = "",
    ) -> None:
        self.total, self.verb, self.unit, self.label = total, verb, unit, label
        self.stream, self.interval_s, self.clock = stream, interval_s, clock
        self.write = write
        self.n = 0
        self.note = ""  # e.g. "best 0.83": said at the end of every line
        self.started = self.last_line_at = clock()
        self.printed_n = 0

    def update(self, n: int = 1) -> None:
        self.n += n
        now = self.clock()
        if now - self.last_line_at >= self.interval_s or self.n >= self.total:
            self._line(now)

    def close(self) -> None:
        if self.n != self.printed_n:
            self._line(self.clock())

    def line(self, now: float) -> str:
        """The progress line at time ``now`` (same clock as the constructor's)."""
        from tqdm import tqdm

        elapsed = max(0.0, now - self.started)
        share = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        lead = f"{self.label}: " if self.label else ""
        text = f"{lead}{self.verb} {self.n}/{self.total} {self.unit}s{share}, {tqdm.format_interval(elapsed)} elapsed"
        if 0 < self.n < self.total and elapsed > 0:
            left = (self.total - self.n) * elapsed / self.n
            text += f", about {tqdm.format_interval(left)} left"
        return f"{text}, {self.note}" if self.note else text

    def _line(self, now: float) -> None:
        if self.write is not None:
            self.write(self.line(now))
        else:
            print(self.line(now), file=self.stream if self.stream is not None else sys.stderr, flush=True)
        self.last_line_at, self.printed_n = now, self.n


def interval_from_env(default: float = DEFAULT_INTERVAL_S) -> float:
    """``T3D_AUDIT_PROGRESS_INTERVAL`` (seconds, > 0) or ``default`` when unset; a bad value
    is refused with one line when a run starts (:func:`harness.run.environment.check_environment`), and
    a progress line never stops work, so here it falls back to ``default``."""
    from harness.core.envvars import seconds
    from harness.core.errors import AuditError

    try:
        return seconds("T3D_AUDIT_PROGRESS_INTERVAL", default)
    except AuditError:
        return default


def progress(
    total: int,
    *,
    verb: str,
    unit: str,
    stream: TextIO | None = None,
    write: Callable[[str], None] | None = None,
    label: str = "",
) -> Progress:
    """tqdm's bar on a terminal, :class:`LineProgress` elsewhere (a log, a pipe) and always
    when ``write`` is given (each line is handed to it). ``label`` leads each line (the bar's
    description on a terminal): what is being done, e.g. ``t3d-audit: measuring ref-vit-clip``."""
    if write is not None:
        return LineProgress(total, verb=verb, unit=unit, write=write, label=label, interval_s=interval_from_env())
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        from tqdm import tqdm

        return tqdm(total=total, unit=unit, desc=label or None, dynamic_ncols=True, smoothing=0.1, file=stream)
    return LineProgress(total, verb=verb, unit=unit, stream=stream, label=label, interval_s=interval_from_env())
