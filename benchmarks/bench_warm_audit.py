"""The warm main job, end to end and its report writing step by step (targets: ≤ 10 s end to end, ≤ 2 s writing the report).

Needs a warm cache: run the main job once first (``t3d-audit audit --profile default``, with the
same ``$T3D_AUDIT_CACHE_DIR``). Then this prints, best of ``--repeat`` runs (the machine may be
shared; ``uptime`` is printed too):

* ``end to end``: ``t3d-audit audit --profile PROFILE`` as a subprocess (what ``tox -e audit``
  runs, without tox's own ~4 s), writing its report to a temporary directory; with its two
  parts run alone: ``warm step`` (``t3d-audit warm``) and ``pytest`` (``audit --no-warm``).
  Children run without ``PYTHONDONTWRITEBYTECODE``, as under tox, and the wall times, user
  and system CPU seconds (children included) are printed: on a shared machine CPU time is the
  steadier number;
* ``report writing``: :func:`harness.report.writer.write_report` in this process on a session
  whose records are already loaded (as on the xdist controller), in total and per step: the
  derived files (summary, tables, figures; the panel result when they are not cached), cards,
  thumbnails, manifest, ``report.html`` (its thumbnail sections separately).

    python benchmarks/bench_warm_audit.py [--profile default] [--repeat 3] [--skip-e2e]

Steps are timed by wrapping the writer's functions, so the script also times an older writer
(a step it lacks is left out).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def timed_run(argv: list[str], repeat: int) -> tuple[float, float, float, int]:
    """Best wall, user and system seconds of ``argv`` (with its children) over ``repeat``
    runs, each the minimum on its own, and the last exit code."""
    import resource

    wall = user = system = float("inf")
    code = 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # tox does not pass it: imports use cached bytecode
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        code = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, check=False).returncode
        wall = min(wall, time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        user = min(user, after.ru_utime - before.ru_utime)
        system = min(system, after.ru_stime - before.ru_stime)
    return wall, user, system, code


class StepTimer:
    """Wraps named functions (module or class attributes) and adds up their wall time."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self._undo: list[Callable[[], None]] = []
        self._depth: dict[str, int] = defaultdict(int)

    def wrap(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return
        timer = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            timer._depth[label] += 1
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timer._depth[label] -= 1
                if timer._depth[label] == 0:  # recursion and re-entry count once
                    timer.totals[label] += time.perf_counter() - t

        setattr(owner, name, timed)
        self._undo.append(lambda: setattr(owner, name, original))

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()


def report_steps(profile: str, repeat: int) -> list[tuple[str, float]]:
    """The steps of the fastest of ``repeat`` report writings, each by a fresh session with its
    records loaded (the first may fill the pieces of this report, whose results differ from the
    main job's). A step that did not run (a cache hit) is left out."""
    from harness.checks.thresholds import Thresholds
    from harness.core.paths import default_cache_dir
    from harness.measure import thumbs as measure_thumbs
    from harness.render import host
    from harness.report import thumbs, writer
    from harness.report.html import page as html_page
    from harness.run.card_facts import RunCards
    from harness.run.inputs import RunInputs
    from harness.run.outputs import run_result
    from harness.run.session import AuditOptions, AuditSession
    from harness.run.summary_cache import SummaryCache

    steps = [
        (writer, "write_derived_cached", "derived files (summary, tables, figures)"),
        (SummaryCache, "panel_result", "  of which the panel result"),
        (writer, "write_derived", "  of which computing and drawing them"),
        (RunCards, "card", "cards"),
        (measure_thumbs, "thumb_images", "thumbnails (cache reads or encoding)"),
        (thumbs, "write_thumbs", "  of which writing them"),
        (writer, "_inputs", "manifest inputs (hashing)"),
        (writer, "build_manifest", "manifest outputs, source, packages"),
        (RunInputs, "render_host", "render host"),
        (html_page, "write_html", "report.html"),
        (html_page, "page_key", "  of which hashing its inputs (page piece key)"),
        (html_page, "build_html", "  of which building the page"),
        (html_page, "ReportData", "    of which reading the report"),
        (html_page, "thumb_sections", "    of which factor strips and probe pairs"),
        (html_page, "_strips", "      of which drawing the strips"),
    ]
    runs: list[dict[str, float]] = []
    table = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    thresholds = Thresholds.from_table(table.get("tool", {}).get("t3d-audit", {}).get("thresholds"))
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            host.blender_build.cache_clear()  # a main job probes Blender once per process
            options = AuditOptions(profile=profile, report_dir=Path(tmp), cache_dir=default_cache_dir(),
                                   thresholds=thresholds)
            session = AuditSession(options)
            evaluators = sorted(session.inputs.specs)
            for ev in evaluators:  # as the controller has them before it writes
                session.record_cache.records(ev)
            timer = StepTimer()
            for owner, name, label in steps:
                timer.wrap(owner, name, label)
            t = time.perf_counter()
            try:
                writer.write_report(run_result(session, evaluators), [])
            finally:
                timer.undo()
            runs.append({"report writing (total)": time.perf_counter() - t, **timer.totals})
    best = min(runs, key=lambda r: r["report writing (total)"])  # its steps, not mixed runs
    order = ["report writing (total)"] + [label for _o, _n, label in steps]
    return [(label, best[label]) for label in order if label in best]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-e2e", action="store_true", help="only time the report writing")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"on {os.cpu_count()} cores; best of {args.repeat}")
    if not args.skip_e2e:
        with tempfile.TemporaryDirectory() as tmp:
            rows = [
                ("end to end: t3d-audit audit", ["audit", "--profile", args.profile, "--report-dir", tmp]),
                ("  warm step: t3d-audit warm", ["warm", "--profile", args.profile, "--jobs", str(os.cpu_count() or 1)]),
                ("  pytest: t3d-audit audit --no-warm",
                 ["audit", "--profile", args.profile, "--no-warm", "--report-dir", tmp]),
            ]
            for label, argv in rows:
                wall, user, system, code = timed_run(_cli(*argv), args.repeat)
                print(f"{label:<48} {wall:7.2f} s  (cpu: user {user:.2f} s, sys {system:.2f} s)"
                      + (f"  (exit code {code})" if code else ""))
    for label, seconds in report_steps(args.profile, args.repeat):
        print(f"{label:<48} {seconds:7.2f} s")


if __name__ == "__main__":
    main()
