"""``t3d-audit audit``: run the audit suite (``audit_tests/``) with pytest and print the verdict.

This is the README's main job. It is a thin wrapper over
``pytest --pyargs audit_tests -n auto --dist loadgroup --max-worker-restart 0 --audit-profile=P``,
run from the invoking folder: the installed suite runs with that project's conftest, audit files
and ``[tool.t3d-audit]``, and the report lands in its ``reports/<run-id>/`` whatever the verdict. Renders are warmed first with
``t3d-audit warm`` over all cores: xdist groups tests per evaluator, and every evaluator needs
the same renders, so without the warm step one worker renders while the others wait on its
per-key locks. Without ``--gate`` a completed
audit exits 0 even when audit assertions fail (fragility is the finding, not an error); with
``--gate`` a failing assertion exits 1, as a release gate needs, and so does a run that ends
without a report and its verdict, whatever the project's code does (``sys.exit``, ``os._exit``:
the gated audit runs in a child process, :mod:`harness.run.gate_guard`). Errors (bad options,
a crash, nothing collected) always exit non-zero. With ``--workers auto`` a warm run (every evaluator's
records already cached) runs in this one process instead of starting workers
(:class:`harness.plugin.warm.WarmInProcess`); the report is the same.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Mapping
from pathlib import Path

from harness.checks.evidence import check_outcomes, undecided_checks
from harness.run import argtypes
from harness.run.suite_argv import SuiteRun, latest_report, pytest_argv, reports_dir

HELP = "run the audit suite with pytest and print the verdict"

_PASSED, _FAILED = 0, 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="default", help="protocol profile (default: default)")
    parser.add_argument(
        "--profile-file", metavar="FILE", type=argtypes.input_path,
        help="profile file of your own whose saved levels of --profile are checked too (pytest "
        "--audit-profile-file; written by 't3d-audit search --save-level NAME --into FILE')",
    )
    parser.add_argument("--evaluators", type=argtypes.name_list, help="comma-separated evaluator ids or globs")
    parser.add_argument(
        "--workers", type=argtypes.workers, default="auto",
        help="pytest-xdist workers (default: auto: one per core, none when every records file is cached)",
    )
    parser.add_argument("--report-dir", type=argtypes.output_dir, help="directory for <run-id>/ (default: reports/ in the project's root)")
    parser.add_argument("--cache-dir", type=argtypes.output_dir,
                        help="audit cache (default: $T3D_AUDIT_CACHE_DIR, else the per-user cache dir)")
    parser.add_argument(
        "--no-warm", action="store_true", help="skip rendering the profile in parallel first"
    )
    parser.add_argument(
        "--view-policy", default="single", type=argtypes.view_policy,
        help="how each configuration is looked at: single, mean4, max4, sheet4 or preset:NAME "
        "(pytest --audit-view-policy; default single)",
    )
    parser.add_argument(
        "--gate", action="store_true", help="exit 1 when an audit assertion fails (release gating)"
    )
    parser.add_argument(
        "--evidence", choices=("descriptive", "confirmed"), default=None,
        help="which evidence gates a check: descriptive (the point estimate, as the study "
        "reports; default) or confirmed (an interval at the family-wise level beyond the "
        "threshold); docs/release-gate.md, 'Evidence'",
    )
    parser.add_argument(
        "--baseline", metavar="PATH", type=argtypes.input_path,
        help="gate against a previous release too (pytest --audit-baseline; docs/release-gate.md)",
    )
    parser.add_argument(
        "--save-baseline", metavar="NAME", type=argtypes.plain_name,
        help="store this run's scores and cards as baselines/NAME/ for the next release, whatever its verdict",
    )
    parser.add_argument(
        "pytest_args", nargs=argparse.REMAINDER, help="extra pytest arguments after '--'"
    )


def warm_argv(args: argparse.Namespace) -> list[str]:
    """The ``t3d-audit warm`` command line that renders the profile before pytest runs."""
    jobs = (os.cpu_count() or 1) if args.workers in ("auto", "logical") else max(1, int(args.workers))
    argv = ["warm", "--profile", args.profile, "--jobs", str(jobs)]
    if args.cache_dir:
        argv += ["--cache-dir", str(args.cache_dir)]
    if getattr(args, "view_policy", "single") != "single":
        argv += ["--view-policy", args.view_policy]
    scenes = project_scenes(Path.cwd())
    if scenes is not None:
        argv += ["--scenes", str(scenes)]
    return argv


def project_scenes(invocation_dir: Path) -> Path | None:
    """``scenes`` of the invoking project's ``[tool.t3d-audit]`` (relative to its root), so
    the warm step renders the scenes the audit reads and not the bundled ones; ``None`` when
    the project names none or its pyproject cannot be read (pytest then reports that)."""
    import tomllib

    from harness.core.rootdir import project_root

    root = project_root(invocation_dir)
    try:
        from harness.core.bounded_input import read_toml

        data = read_toml(root / "pyproject.toml")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    scenes = data.get("tool", {}).get("t3d-audit", {}).get("scenes")
    return (root / scenes).resolve() if isinstance(scenes, str) and scenes.strip() else None


def run(args: argparse.Namespace) -> int:
    """The audit; with ``--gate`` in a forked child whose exit the parent checks
    (:mod:`harness.run.gate_guard`: user code calling ``os._exit(0)`` is no pass)."""
    if args.gate:
        from harness.run.gate_guard import in_guarded_child

        return in_guarded_child(lambda: _audit(args))
    return _audit(args)


def _audit(args: argparse.Namespace) -> int:
    import pytest

    from harness.cli import main as cli_main
    from harness.commands.materialize import check_selection

    # Every option is checked before the warm step renders anything. Evaluators are checked
    # against the registry and the project's conftest hooks unless extra pytest arguments may
    # load a plugin that adds some.
    extra = list(args.pytest_args or [])
    evaluators = tuple(e.strip() for e in (args.evaluators or "").split(",") if e.strip())
    if evaluators and not any(a.startswith("-p") for a in extra):
        from harness.run.project_evaluators import project_specs
        from harness.search.known_answers import named_known_answers

        offered = list(project_specs())
        check_selection(args.profile, evaluators, [*offered, *named_known_answers(evaluators, offered)])
    else:
        check_selection(args.profile, ())
    if getattr(args, "profile_file", None):
        from harness.search.saved_levels import audit_profile

        audit_profile(args.profile_file, args.profile)  # a bad file: one line before any render
    if args.baseline is not None and not Path(args.baseline).exists():
        from harness.core.errors import AuditError

        raise AuditError("the baseline does not exist", where=str(args.baseline),
                         hint="give a report directory or score file of the previous release")  # fmt: skip
    if not args.no_warm:
        print("t3d-audit audit: t3d-audit " + " ".join(warm_argv(args)), flush=True)
        code = cli_main(warm_argv(args))
        if code not in (0, 1):  # 1: some renders failed; the audit records them as failures
            print(f"t3d-audit audit: warming the render cache failed (exit code {code})")
            return code
    argv = pytest_argv(SuiteRun.from_args(args))
    print("t3d-audit audit: pytest " + " ".join(argv), flush=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.time()
    from harness.plugin.warm import WarmInProcess

    try:
        code = int(pytest.main(argv, plugins=[WarmInProcess()]))
    except SystemExit:  # user code (a conftest, a scorer) exiting through pytest
        print("t3d-audit audit: the audit was ended by a SystemExit (user code), so there is no verdict")
        return 1 if args.gate else 3
    where = _report_of_run(args, started)
    if code == _PASSED and not where and args.gate:
        print("t3d-audit audit: no report was written by this run, so there is no verdict: gate FAIL")
        return 1
    results = _run_results(args, started) if where else {}
    partial = _partial_report(results)
    undecided = undecided_checks(check_outcomes(results.get("results")))  # the summary printed both levels
    on = f" on {args.evidence} evidence" if getattr(args, "evidence", None) else ""
    if code not in (_PASSED, _FAILED):
        print(f"t3d-audit audit: the audit did not complete (pytest exit code {code})")
        return code
    if args.save_baseline:  # whatever the verdict: the next release is compared with this one
        _save_baseline(args, started, partial)
    if code == _PASSED and partial:
        print(f"t3d-audit audit: verdict PASS{on} for the checks this run selected only: {partial}" + where)
        if args.gate:
            print("t3d-audit audit: a partial audit cannot pass a gate: gate FAIL")
            return 1
    elif code == _PASSED and undecided and getattr(args, "evidence", None) == "confirmed":
        print(f"t3d-audit audit: verdict PASS on confirmed evidence, but {undecided} interval checks were not "
              "confirmable at this run's prompt count, so they could not fail" + where)
        if args.gate:
            print("t3d-audit audit: a gate on confirmed evidence needs every interval check decidable: gate FAIL "
                  "(audit more prompts, or gate on descriptive evidence)")
            return 1
    elif code == _PASSED:
        print(f"t3d-audit audit: verdict PASS{on} (every audit assertion held)" + where)
    else:
        found = results.get("evaluators")
        note = _expected_note(args, [str(e) for e in found] if isinstance(found, list) else None)
        if note:  # before the verdict, which stays the last line
            print(f"t3d-audit audit: {note}")
        print(f"t3d-audit audit: verdict FAIL{on} (audit assertions failed)" + where)
        if args.gate:
            return 1
    return 0


def _save_baseline(args: argparse.Namespace, started: float, partial: str | None) -> None:
    """Keep this run's report as the named baseline, independent of its verdict (a release that
    fails a study threshold is still the one the next release is compared with); a partial
    report is not kept, and the line says why."""
    from harness.release.baselines import save_baseline

    if partial:
        print(f"t3d-audit audit: baseline {args.save_baseline!r} not saved: {partial}")
        return
    saved = save_baseline(latest_report(reports_dir(args.report_dir), started), args.save_baseline)
    print(f"t3d-audit audit: saved this run's report as baseline {saved}, whatever its verdict; "
          f"gate the next release with: t3d-audit compare {saved} <its report>")


def _expected_note(args: argparse.Namespace, audited: list[str] | None = None) -> str:
    """That FAIL is expected, when the run audited only the bundled evaluators (``""`` for a
    run of a user's own). ``audited``: the evaluators the run's report covers, else those the
    command line or the profile names (a project's own configuration can choose others)."""
    from harness.evaluators.reference.planted import PLANTED_IDS
    from harness.protocol.profiles import get_profile
    from harness.report.verdict_words import bundled_panel, expected_verdict_note

    chosen = [e.strip() for e in (args.evaluators or "").split(",") if e.strip()]
    try:
        audited = audited or chosen or list(get_profile(args.profile).evaluators)
    except Exception:  # an unknown profile was reported before the run
        return ""
    if any(ch in ev for ev in audited for ch in "*?["):  # a glob may match more than the panel
        return ""
    return expected_verdict_note(audited, failing=True, bundled=bundled_panel() | frozenset(PLANTED_IDS))


def _run_results(args: argparse.Namespace, started: float) -> dict[str, object]:
    """The ``results.json`` of the report this run wrote (``{}`` when it cannot be read)."""
    import json

    from harness.core.errors import AuditError

    try:
        doc = json.loads((latest_report(reports_dir(args.report_dir), started) / "results.json").read_text())
    except (AuditError, OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _partial_report(results: Mapping[str, object]) -> str | None:
    """Why the report is partial (its ``results.json`` says ``complete: false``), or ``None``
    when it is complete or was not read."""
    if results.get("complete") is not False:
        return None
    ran = len(results.get("results") or ())
    missing = len(results.get("missing") or ())
    how = f"it selected part of the suite ({results['selection']})" if results.get("selection") else "part of the suite ran"
    lacking = f", {missing} collected audit tests have no result" if missing else ""
    return f"{how}, {ran} audit test results{lacking}; the report is marked partial"


def _report_of_run(args: argparse.Namespace, started: float) -> str:
    """``; report <dir>/report.html`` for the report this run wrote, or ``""`` when none."""
    from harness.core.errors import AuditError

    try:
        found = latest_report(reports_dir(args.report_dir), started)
    except (AuditError, OSError):
        return ""
    return f"; report {found / 'report.html'}"
