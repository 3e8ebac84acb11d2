"""``pytest --audit-baseline=PATH``: the release comparison as parametrized tests.

Registered by ``harness.plugin`` (its ``pytest_plugins``). With a baseline (a report
directory, a saved baseline ``baselines/<name>/`` or a score file) every test that takes
the ``audit_baseline_metric`` fixture — ``audit_tests/test_regression.py`` — is
parametrized over (candidate evaluator, metric), with ids such as
``test_no_regression[clip-v2-rho-pitch]``, so the JUnit XML that gates a release also
carries the comparison. Without the option those tests are skipped. Each evaluator of the
run pairs with the baseline evaluator of the same id, else (one alignment evaluator on each
side) with the baseline's single alignment evaluator. The candidate's card records the
baseline's card id. Margins come from ``[tool.t3d-audit.compare]`` (docs/release-gate.md).

The trust rules are those of ``t3d-audit compare``: a baseline directory whose manifest or cards
do not verify is a usage error (``harness.release.baselines.release_problems``), and an evaluator present
on only one side is a failing ``test_no_regression[<evaluator>-unpaired]`` unless
``--audit-allow-unpaired`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness.core.errors import AuditError

if TYPE_CHECKING:
    from harness.release.baselines import Release
    from harness.release.comparison import Comparison
    from harness.release.margins import Margins
    from harness.run.outputs import GatedRun

OPTION = "audit_baseline"
ALLOW_UNPAIRED = "audit_allow_unpaired"
UNPAIRED = "unpaired"  # the metric id of the test that fails for an unpaired evaluator
FIXTURE = "audit_baseline_metric"
GATE_KEY = pytest.StashKey["BaselineGate"]()
DEFAULT_BOOTSTRAP = 2000


def pytest_addoption(parser: pytest.Parser) -> None:
    help_ = "previous release to gate against: report directory, saved baseline or score file"
    parser.getgroup("t3d-audit").addoption("--audit-baseline", dest=OPTION, default=None, help=help_)
    parser.addini(OPTION, help_, type="string")
    parser.getgroup("t3d-audit").addoption(
        "--audit-allow-unpaired", dest=ALLOW_UNPAIRED, action="store_true", default=False,
        help="with --audit-baseline: pass although an evaluator is only in the baseline or only "
        "in this run (default: a failing test_no_regression[<evaluator>-unpaired])",
    )  # fmt: skip


@dataclass
class BaselineGate:
    """The baseline, the pairing with the run's evaluators and per-process comparisons."""

    release: Release
    pairs: dict[str, str]  # candidate (run) evaluator → baseline evaluator
    margins: Margins
    run: GatedRun
    unpaired: dict[str, list[str]] = field(default_factory=dict)  # side → evaluators (gating)
    _done: dict[str, Comparison] = field(default_factory=dict)

    def comparison(self, evaluator: str) -> Comparison:
        """The run's ``evaluator`` against its baseline (computed once per process)."""
        if evaluator not in self._done:
            from harness.release.comparison import compare_records

            boot = self.run.bootstrap
            self._done[evaluator] = compare_records(
                self.release.records,
                self.run.records(evaluator),
                baseline_evaluator=self.pairs[evaluator],
                candidate_evaluator=evaluator,
                margins=self.margins.for_evaluator(evaluator),
                bootstrap=boot if boot >= 2 else DEFAULT_BOOTSTRAP,
                seed=self.run.seed,
                human=self.run.human_means(),
            )
        return self._done[evaluator]


def _baseline_path(config: pytest.Config) -> Path | None:
    value = config.getoption(OPTION)
    if value:
        return (Path(config.invocation_params.dir) / value).resolve()
    ini = config.getini(OPTION)
    return (Path(config.rootpath) / ini).resolve() if ini else None


def pair_with_baseline(session_specs: dict[str, object], baseline: dict[str, bool]) -> dict[str, str]:
    """Run evaluator → baseline evaluator: equal ids first, else the single alignment
    evaluator of each side. ``baseline``: id → alignment (see ``comparison.evaluators_of``)."""
    pairs = {e: e for e in session_specs if e in baseline}
    run_align = [e for e, s in session_specs.items() if getattr(s, "needs_text", True)]
    base_align = [e for e, a in baseline.items() if a]
    if not pairs and len(run_align) == 1 and len(base_align) == 1:
        pairs = {run_align[0]: base_align[0]}
    return pairs


@pytest.hookimpl(trylast=True)  # after harness.plugin has stashed the session
def pytest_configure(config: pytest.Config) -> None:
    path = _baseline_path(config)
    if path is None:
        return
    from harness.release.baselines import load_margins, load_release, unpaired
    from harness.release.comparison import evaluators_of
    from harness.run.outputs import gated_run

    run = gated_run(config)
    try:
        release = load_release(path, role="baseline")
        margins = load_margins(Path(config.rootpath) / "pyproject.toml")
        pairs = pair_with_baseline(run.specs, evaluators_of(release.records))
    except AuditError as exc:
        raise pytest.UsageError(f"--audit-baseline: {exc}") from exc
    if not pairs:
        raise pytest.UsageError(
            f"--audit-baseline: no evaluator of this run pairs with the baseline's "
            f"{sorted(evaluators_of(release.records))} (use the same evaluator ids)"
        )
    run.note_baseline_cards({candidate: release.card_ids[base] for candidate, base in pairs.items()
                             if base in release.card_ids})  # fmt: skip
    left_out: dict[str, list[str]] = {}
    if not config.getoption(ALLOW_UNPAIRED):
        left_out = unpaired(sorted(evaluators_of(release.records)), sorted(run.specs),
                            [(b, c) for c, b in pairs.items()])  # fmt: skip
    config.stash[GATE_KEY] = BaselineGate(release, pairs, margins, run, left_out)


@dataclass(frozen=True)
class BaselineMetric:
    """One parameter of ``test_no_regression``: a run evaluator and a metric id."""

    evaluator: str
    metric: str
    gate: BaselineGate = field(repr=False, compare=False)

    def check(self) -> None:
        """Fail on a confirmed regression or an unpaired evaluator; skip a metric undefined on
        both sides."""
        from harness.release.comparison import REGRESSION

        if self.metric == UNPAIRED:
            side = "baseline" if self.evaluator in self.gate.unpaired.get("baseline", ()) else "run"
            other = "this run" if side == "baseline" else "the baseline"
            pytest.fail(
                f"evaluator {self.evaluator} is in the {side} but not in {other}, so it was not "
                "compared (pass --audit-allow-unpaired to allow that)",
                pytrace=False,
            )

        try:
            comparison = self.gate.comparison(self.evaluator)
        except AuditError as exc:
            pytest.fail(f"t3d-audit: {exc}", pytrace=False)
        found = {m.metric: m for m in comparison.metrics}
        if self.metric not in found:
            pytest.skip(f"{self.metric} is undefined for both releases")
        m = found[self.metric]
        if m.verdict == REGRESSION:
            sign = "+" if m.harmful > 0 else "−"
            pytest.fail(
                f"{self.metric} of {self.evaluator} regressed against baseline "
                f"{comparison.baseline_evaluator}: {m.baseline:.4g} → {m.candidate:.4g}, "
                f"Δ = {m.difference:+.4g}, 95 % simultaneous CI [{m.ci[0]:.4g}, {m.ci[1]:.4g}] "
                f"beyond the margin {sign}{m.margin:g}" + _indicative(comparison.n_prompts),
                pytrace=False,
            )


def _indicative(n_prompts: int) -> str:
    """``; indicative: small sample: …`` for a comparison over few prompt blocks, else ``""``."""
    from harness.checks.wording import small_sample_note

    note = small_sample_note(n_prompts)
    return f"; indicative ({note})" if note else ""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if FIXTURE not in metafunc.fixturenames:
        return
    gate = metafunc.config.stash.get(GATE_KEY, None)
    if gate is None:
        metafunc.parametrize(FIXTURE, [pytest.param(None, marks=pytest.mark.skip(
            reason="no --audit-baseline given"))], ids=["no-baseline"])
        return
    from harness.release.comparison import metric_id, planned_metrics
    from harness.stats.table import pivot_records

    tables = pivot_records(gate.release.records)
    human = gate.run.human_means() is not None
    params = []
    for candidate, base in sorted(gate.pairs.items()):
        for kind, subject in planned_metrics(tables[base], human):
            name = metric_id(kind, subject)
            params.append(pytest.param(
                BaselineMetric(candidate, name, gate), id=f"{candidate}-{name}",
                marks=pytest.mark.xdist_group(candidate),
            ))
    for side in ("baseline", "candidate"):
        for evaluator in gate.unpaired.get(side, ()):
            params.append(pytest.param(BaselineMetric(evaluator, UNPAIRED, gate),
                                       id=f"{evaluator}-{UNPAIRED}"))  # fmt: skip
    metafunc.parametrize(FIXTURE, params)
