"""harness.core.progress: a bar on a terminal, plain lines in a log (a tqdm
bar written to a log would be one long line of carriage returns)."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from harness.core import progress as P


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_log_gets_one_line_per_interval_and_a_last_one():
    clock, out = Clock(), io.StringIO()
    bar = P.LineProgress(10, verb="rendered", unit="render", stream=out, interval_s=30, clock=clock)
    for t in (10, 20, 31, 40, 65, 70):  # renders finishing at these seconds
        clock.t = 100.0 + t
        bar.update()
    clock.t = 180.0
    bar.close()
    assert out.getvalue().splitlines() == [
        "rendered 3/10 renders (30%), 00:31 elapsed, about 01:12 left",  # 7 * 31 / 3 = 72.3 s
        "rendered 5/10 renders (50%), 01:05 elapsed, about 01:05 left",
        "rendered 6/10 renders (60%), 01:20 elapsed, about 00:53 left",  # at close
    ]
    assert "\r" not in out.getvalue()


def test_the_last_render_always_prints_and_close_adds_nothing_after_it():
    clock, out = Clock(), io.StringIO()
    bar = P.LineProgress(2, verb="rendered", unit="render", stream=out, interval_s=30, clock=clock)
    bar.update()
    clock.t += 5
    bar.update()
    bar.close()
    assert out.getvalue() == "rendered 2/2 renders (100%), 00:05 elapsed\n"


def test_progress_picks_a_bar_only_for_a_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(P.progress(5, verb="rendered", unit="render", stream=io.StringIO()), P.LineProgress)
    bar = P.progress(5, verb="rendered", unit="render", stream=Tty())
    assert not isinstance(bar, P.LineProgress)
    bar.close()
    monkeypatch.setenv("T3D_AUDIT_PROGRESS_INTERVAL", "2.5")
    assert P.progress(5, verb="x", unit="y", stream=io.StringIO()).interval_s == 2.5
    for bad in ("0", "-1", "soon", ""):
        monkeypatch.setenv("T3D_AUDIT_PROGRESS_INTERVAL", bad)
        assert P.interval_from_env() == P.DEFAULT_INTERVAL_S


@given(st.integers(1, 60), st.lists(st.floats(0, 100), min_size=1, max_size=60))
def test_lines_are_sparse_monotone_and_end_at_the_count(total, gaps):
    clock, out = Clock(), io.StringIO()
    bar = P.LineProgress(total, verb="rendered", unit="render", stream=out, interval_s=30, clock=clock)
    done = min(total, len(gaps))
    for gap in gaps[:done]:
        clock.t += gap
        bar.update()
    bar.close()
    lines = out.getvalue().splitlines()
    counts = [int(line.split()[1].split("/")[0]) for line in lines]
    assert counts == sorted(set(counts)) and counts[-1] == done
    # at most one line per interval, plus the final one
    assert len(lines) <= 1 + sum(gaps[:done]) // 30 + 1


def test_a_line_ends_with_its_note():
    """The search's best value so far rides on each plain progress line (a log has no bar)."""
    import io

    from harness.core.progress import LineProgress

    out = io.StringIO()
    clock = iter([0.0, 40.0, 40.0]).__next__
    bar = LineProgress(8, verb="searched", unit="configuration", stream=out, interval_s=30, clock=clock)
    bar.note = "best 0.83"
    bar.update(4)
    assert out.getvalue().strip() == "searched 4/8 configurations (50%), 00:40 elapsed, about 00:40 left, best 0.83"
