"""What the preset commands (``concordance``, ``reproduce``) share: their common options and
the evaluator, scene set, caption template and protocols those options name."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.errors import EvaluatorError
from harness.protocol.presets import Protocol
from harness.run import argtypes

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from harness.evaluators.base import EvaluatorSpec

MAX_VIEWS = 100_000  # --max-views: no preset has more views; a larger number is a typo


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--evaluator", required=True, help="evaluator id (registry, or preset-tiling / preset-viewspike)")
    parser.add_argument("--profile", default="smoke", help="profile whose prompts and generators are scored")
    parser.add_argument("--scenes", type=argtypes.input_path, default=None, help="scene set (default: the bundled one)")
    parser.add_argument("--cache-dir", type=argtypes.output_dir, default=None, help="render and score cache directory")
    parser.add_argument("--max-views", type=argtypes.integer(1, MAX_VIEWS), default=None,
                        help="score at most this many views per preset (icosphere presets drop subdivision levels)")
    parser.add_argument("--resolution", type=argtypes.integer(16, 8192), default=None,
                        help="render every preset at this many pixels instead of its own")
    parser.add_argument("--samples", type=argtypes.samples, default=None, help="Cycles samples per view")
    parser.add_argument("--bootstrap", type=argtypes.integer(10, 100_000), default=1000, help="prompt-bootstrap draws")
    parser.add_argument("--seed", type=argtypes.seed, default=0, help="bootstrap seed")
    parser.add_argument("--json", action="store_true", help="print JSON")


def evaluator_spec(evaluator_id: str) -> object:
    """The one spec ``evaluator_id`` names (registry, the preset known answers or the noisy ones)."""
    from harness.evaluators.reference.specs import noisy_planted_specs, preset_planted_specs
    from harness.run.evaluator_selection import select_evaluators

    specs = select_evaluators([evaluator_id], preset_planted_specs() + noisy_planted_specs())
    if len(specs) != 1:
        raise EvaluatorError(f"--evaluator {evaluator_id!r} matches {len(specs)} evaluators",
                             hint="give exactly one id (see 't3d-audit evaluators')")  # fmt: skip
    return specs[0]


@dataclass
class PresetRun:
    """The resolved inputs of a preset command."""

    spec: EvaluatorSpec
    scene_set: object
    template: str
    cache_dir: Path
    profile: str

    def scaled(self, protocol: Protocol, args: argparse.Namespace) -> Protocol:
        return protocol.scaled(max_views=args.max_views, resolution_px=args.resolution, samples=args.samples)

    def measure(self, protocols: Sequence[Protocol]) -> pd.DataFrame:
        """The evaluator's scores of the scene set under ``protocols``
        (:func:`harness.peers.measure.score_protocols`), with one progress line over them all."""
        from harness.peers.measure import StudyProgress, score_protocols

        study = StudyProgress(self.spec, self.scene_set, protocols, self.template)
        try:
            return score_protocols(self.spec, self.scene_set, protocols, template=self.template,
                                   cache_dir=self.cache_dir, progress_of=study.of)  # fmt: skip
        finally:
            study.close()


def resolve(args: argparse.Namespace) -> PresetRun:
    from harness.core.paths import default_cache_dir
    from harness.protocol.profiles import get_profile
    from harness.scenes.scene_source import load_scene_set

    cache_dir = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    named = get_profile(args.profile)
    scene_set = load_scene_set(args.scenes, cache_dir).select_for_profile(named.prompts, named.generators)
    profile = named.for_scene_kind(scene_set.kind)
    return PresetRun(evaluator_spec(args.evaluator), scene_set, profile.c0_template, cache_dir, named.name)


def presentation_threshold(config: Path | None, evaluator_id: str) -> float:
    """``min_presentation_agreement`` for ``evaluator_id``: the study default layered under
    ``[tool.t3d-audit.thresholds]`` (overrides included) of ``config``, else of
    ``./pyproject.toml`` when present, exactly as an audit reads it."""
    from harness.checks.thresholds import layered
    from harness.core.bounded_input import read_toml
    from harness.vocab.metrics import MIN_PRESENTATION_AGREEMENT

    path = Path(config) if config is not None else Path("pyproject.toml")
    table = None
    if path.is_file():
        table = read_toml(path).get("tool", {}).get("t3d-audit", {}).get("thresholds")
    return layered(table, where=f"{path}: [tool.t3d-audit.thresholds]").for_evaluator(evaluator_id)[
        MIN_PRESENTATION_AGREEMENT]
