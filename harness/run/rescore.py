"""``t3d-audit validate --rescore N``: re-derive a random sample of a report's records from
its scenes and evaluators, not from any cache.

``validate --deep`` makes the raw score files the trust root; a score file that was itself
forged (a cache entry edited and resealed, docs/cache.md) passes it. Re-scoring makes the
*scenes and the models* the trust root: a seeded sample of N records (over all evaluators) is
measured again from the scene set, with the renderer and the evaluators, in a fresh, empty
cache directory (nothing is read from ``--audit-cache-dir`` or a store), and each recomputed
record is compared with the report's: status, caption and scene hash exactly, the score within
:data:`DEFAULT_TOLERANCE` relative to ``max(1, |score|)`` (docs/report-format.md).

Before measuring, the inputs are checked to be the report's: the plan built from the given
scenes must have the manifest's ``plan_sha256`` (same scenes, profile and probe seed), every
sampled evaluator its ``evaluators`` identity hash and, when an image evaluator is sampled,
the renderer its ``renderer`` identity. A mismatch there is a problem, not a pass.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

#: Accepted |recomputed - reported| score difference, relative to max(1, |reported score|).
#: A sample is scored in smaller image x caption grids than the run was, and the similarity
#: matrix product's last float32 bits follow its shape: re-rendering (Blender, empty cache) and
#: re-scoring 12 records of ref-vit-clip (smoke profile) reproduced 5 exactly and 7 within
#: 7.45e-8 to 1.49e-7 (1-2 float32 ulps at scores ~1.2). 1e-6 is about 8 ulps, far below any
#: forged edit worth making.
DEFAULT_TOLERANCE = 1e-6

KEY = ("generator", "prompt_id", "factor", "level")


@dataclass
class RescoreResult:
    """What a re-scoring found: ``problems`` (mismatches and inputs that are not the report's;
    empty means every sampled record reproduced) and ``sampled`` records, per evaluator."""

    sampled: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def n_sampled(self) -> int:
        return sum(self.sampled.values())


def sample_records(records: object, n: int, seed: int) -> object:
    """``n`` rows of ``records`` drawn without replacement with ``numpy.random.default_rng(seed)``
    (all rows when ``n`` is larger), in the table's order."""
    import numpy as np

    take = min(int(n), len(records))
    rows = np.sort(np.random.default_rng(seed).choice(len(records), size=take, replace=False))
    return records.iloc[rows]


def allowed(score: float, tolerance: float) -> float:
    """The largest accepted difference for a reported ``score``: ``tolerance · max(1, |score|)``
    (float32 rounding grows with the magnitude; a logit-scaled score of 30 has 16× coarser
    ulps than a cosine)."""
    return tolerance * max(1.0, abs(score))


def _same_score(a: float, b: float, tolerance: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= allowed(a, tolerance)


def compare_row(reported: object, recomputed: object, tolerance: float) -> str | None:
    """Why ``recomputed`` (a records row) does not reproduce ``reported``; ``None`` if it does."""
    for column in ("status", "caption", "scene_sha256"):
        if str(reported[column]) != str(recomputed[column]):
            return f"{column} {str(reported[column])[:40]!r} in the report, recomputed {str(recomputed[column])[:40]!r}"
    a, b = float(reported["score"]), float(recomputed["score"])
    if not _same_score(a, b, tolerance):
        return (f"score {a!r} in the report, recomputed {b!r} "
                f"(|Δ| {abs(a - b):.3g} > {allowed(a, tolerance):.3g})")
    return None


def rescore_report(
    report: Path,
    n: int,
    *,
    seed: int = 0,
    scenes: Path | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    renderer_factory: Callable[[Path], object] | None = None,
    extra_evaluators: list[object] | None = None,
    load_evaluator: Callable[[object], object] | None = None,
    device: str = "auto",
) -> RescoreResult:
    """Re-measure ``n`` seeded-random records of ``report`` (see the module docstring).

    ``scenes``: the scene set the report was measured on (default: the bundled one);
    ``renderer_factory``, ``extra_evaluators``, ``load_evaluator``: as for
    :class:`harness.run.session.AuditSession` (hook-provided renderers and evaluators)."""
    import pandas as pd

    from harness.cards.provenance import load_manifest, manifest_problems
    from harness.core.errors import AuditError
    from harness.core.progress import progress
    from harness.measure.images import measure, measurement_kind, render_total
    from harness.protocol.records import read_records
    from harness.run.options import AuditOptions
    from harness.run.session import AuditSession

    result = RescoreResult()
    report = Path(report)
    try:
        manifest = load_manifest(report)
    except AuditError as exc:
        return RescoreResult(problems=[f"rescore: {exc}"])
    shape = manifest_problems(manifest)
    if shape:
        return RescoreResult(problems=[f"rescore: {line}" for line in shape])
    options = manifest["options"]
    frames = []
    for path in sorted((report / "scores").glob("*.csv")):
        try:
            frames.append(read_records(path))
        except AuditError as exc:
            result.problems.append(f"rescore: {exc}")
    if not frames:
        result.problems.append("rescore: no readable raw score files in scores/")
        return result
    records = pd.concat(frames, ignore_index=True)
    sample = sample_records(records, n, seed)
    policies = set(records.get("view_policy", pd.Series([], dtype=object))) - {""}
    view_policy = policies.pop() if len(policies) == 1 else "single"
    evaluators = tuple(sorted(set(sample["evaluator"])))
    with tempfile.TemporaryDirectory(prefix="t3d-rescore-") as work:
        audit_options = AuditOptions(
            profile=str(options.get("profile")), evaluators=evaluators, scenes=scenes,
            cache_dir=Path(work) / "cache", report_dir=Path(work) / "reports",
            probe_seed=int(options.get("probe_seed", 0)), device=device, view_policy=view_policy,
        )  # fmt: skip
        session = AuditSession(audit_options, renderer_factory=renderer_factory,
                               extra_evaluators=extra_evaluators, load_evaluator=load_evaluator)  # fmt: skip
        try:
            plan, specs = session.inputs.plan, session.inputs.specs
        except AuditError as exc:
            return RescoreResult(problems=[f"rescore: cannot rebuild the run's inputs: {exc}"])
        if plan.key != options.get("plan_sha256"):
            return RescoreResult(problems=[
                f"rescore: the plan built from the scenes given ({scenes or 'bundled scenes'}, profile "
                f"{options.get('profile')}, probe seed {options.get('probe_seed')}) is "
                f"{plan.key[:12]}…, the report's is {str(options.get('plan_sha256'))[:12]}…: "
                "pass the report's scene set with --scenes"
            ])  # fmt: skip
        skip: set[str] = set()
        for ev in evaluators:
            want = (options.get("evaluators") or {}).get(ev)
            if specs[ev].identity_hash != want:
                skip.add(ev)
                result.problems.append(
                    f"rescore: evaluator {ev} here has identity {specs[ev].identity_hash[:12]}…, "
                    f"the report's is {str(want)[:12]}… (other weights or code): not rescored"
                )
        images = {ev for ev in evaluators if measurement_kind(specs[ev]) == "image"}
        if images and session.inputs.renderer_identity != options.get("renderer"):
            result.problems.append(
                f"rescore: the renderer here is {session.inputs.renderer_identity!r}, the report's is "
                f"{options.get('renderer')!r}: image evaluators not rescored"
            )
            skip |= images
        for ev in evaluators:
            if ev in skip:
                continue
            mine = sample[sample["evaluator"] == ev]
            wanted = {tuple(str(v) for v in row) for row in mine[list(KEY)].itertuples(index=False)}
            rows = [r for r in plan.rows if (r.generator, r.prompt_id, r.factor, r.level) in wanted]
            found = {(r.generator, r.prompt_id, r.factor, r.level) for r in rows}
            for key in sorted(wanted - found):
                result.problems.append(f"scores/{ev}.csv: {'/'.join(key[:2])} {key[2]}={key[3]}: "
                                       "not a measurement of the report's plan")  # fmt: skip
            renderer = session.inputs.renderer if measurement_kind(specs[ev]) == "image" else None
            sampled = replace(plan, rows=rows)
            # re-rendered in an empty cache: a bar on a terminal, plain lines in a log (stderr)
            bar = progress(render_total(sampled), verb="fetched", unit="render",
                           label=f"rescore {ev}") if renderer is not None else None  # fmt: skip
            try:
                fresh = measure(specs[ev], sampled, renderer, cache_dir=audit_options.cache_dir,
                                load_evaluator=session.record_cache.build_evaluator, progress=bar)  # fmt: skip
            finally:
                if bar is not None:
                    bar.close()
            by_key = {tuple(str(v) for v in row[list(KEY)]): row for _, row in fresh.iterrows()}
            for _, row in mine.iterrows():
                key = tuple(str(row[c]) for c in KEY)
                if key not in by_key:
                    continue
                why = compare_row(row, by_key[key], tolerance)
                if why:
                    result.problems.append(f"scores/{ev}.csv: {key[0]}/{key[1]} {key[2]}={key[3]}: {why}")
            result.sampled[ev] = len(mine)
    return result
