"""``t3d-audit claim``: does generator A beat generator B under evaluator E, and under which
protocols? (docs/claims.md)

    t3d-audit claim --evaluator E --a A --b B [--scenes DIR | --profile P] [--presets all|NAME,...]
        [--search-budget N] [--flip-points N] [--seed S] [--json] [--out DIR]
    t3d-audit claim --evaluator E --all-pairs [--generators G1,G2,...] ...

Measures the pair on the profile's grid and under the presets, searches the protocol space
beyond the grid for where the pair's order flips, and prints the verdict in one line with its
evidence level, the evidence, and the paper block (Markdown). ``--out DIR`` writes
``claim.json``, ``claim.md``, ``claim.tex``, ``card.json``, ``claim.html`` and the figures,
all or none. Unset options come from the project's ``[tool.t3d-audit]`` (``profile``,
``scenes``, one ``evaluators`` entry, ``thresholds``); the project's ``conftest.py`` scorers
are found as ``t3d-audit score`` finds them.

Exit status: 0 answered (whatever the verdict), 2 bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.run import argtypes

HELP = "does generator A beat B under an evaluator, and under which protocols? (verdict, evidence, paper block)"


def _names(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in str(text).split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r:.60}: an empty name; write names joined by commas")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--evaluator", default=None,
                        help="evaluator id (default: the one entry of evaluators in [tool.t3d-audit])")
    parser.add_argument("--a", default=None, help="the generator claimed better")
    parser.add_argument("--b", default=None, help="the generator claimed worse")
    parser.add_argument("--all-pairs", action="store_true",
                        help="every pairwise claim of --generators (default: all of the scene set's, in c0's order)")
    parser.add_argument("--generators", type=_names, default=None,
                        help="with --all-pairs: the claimed order, best first, joined by commas")
    parser.add_argument("--profile", default=None, help="profile (default: [tool.t3d-audit] profile, else default)")
    parser.add_argument("--scenes", type=argtypes.input_path, default=None,
                        help="scene set, e.g. from import-scenes (default: [tool.t3d-audit] scenes, else bundled)")
    parser.add_argument("--presets", default="all", help="all, none, or preset names joined by commas")
    parser.add_argument("--max-views", type=argtypes.integer(1, 100_000), default=4,
                        help="views per preset at most (default 4; icosphere presets drop subdivision levels)")
    parser.add_argument("--presets-as-published", action="store_true",
                        help="score the presets unscaled (their own views, resolution and samples)")
    parser.add_argument("--search-budget", type=argtypes.integer(0, 100_000), default=16,
                        help="configurations the search beyond the grid evaluates (default 16; 0: no search)")
    parser.add_argument("--flip-points", type=argtypes.integer(0, 65_536), default=32,
                        help="Sobol points of the flip region on the claim's prompts (default 32; 0: none)")
    parser.add_argument("--seed", type=argtypes.seed, default=0, help="search and bootstrap seed (default 0)")
    parser.add_argument("--bootstrap", type=argtypes.integer(10, 100_000), default=None,
                        help="prompt-bootstrap draws (default: the profile's)")
    parser.add_argument("--cache-dir", type=argtypes.output_dir, default=None, help="render and score cache directory")
    parser.add_argument("--backend", choices=("inline", "local"), default="local",
                        help="where missing renders are made: local (--jobs processes, default) or inline")
    parser.add_argument("--jobs", type=argtypes.jobs, default=None, help="local render processes")
    parser.add_argument("--json", action="store_true", help="print claim.json's object")
    parser.add_argument("--out", type=argtypes.output_dir, default=None,
                        help="write claim.json, claim.md, claim.tex, card.json, claim.html and the figures here")


def run(args: argparse.Namespace) -> int:
    from harness.backends.prefetch import prefetch_for
    from harness.claims.inputs import ClaimRequest, project_config
    from harness.claims.outputs import check_out
    from harness.claims.pipeline import run_claim, write_out
    from harness.core.errors import AuditError
    from harness.core.jsonout import print_json
    from harness.core.paths import default_cache_dir
    from harness.render.renderer import default_renderer
    from harness.run.project_evaluators import project_specs

    if args.all_pairs and (args.a or args.b):
        raise AuditError("--all-pairs claims every pair; leave out --a and --b", where="--all-pairs")
    if args.generators and not args.all_pairs:
        raise AuditError("--generators goes with --all-pairs", where="--generators", hint="or name the pair with --a and --b")
    if args.out is not None:
        check_out(Path(args.out))  # before any render
    cache_dir = Path(args.cache_dir or default_cache_dir())
    renderer = default_renderer(cache_dir / "renders")
    request = ClaimRequest(args.evaluator or "", args.a, args.b, args.profile, args.scenes, args.presets,
                           args.search_budget, args.flip_points, args.seed, args.bootstrap, args.max_views,
                           as_published=args.presets_as_published, all_pairs=args.all_pairs,
                           generators=args.generators)  # fmt: skip
    result = run_claim(request, cache_dir=cache_dir, renderer=renderer,
                       prefetch=prefetch_for(args.backend, cache_dir / "renders", args.jobs),
                       config=project_config(), offered=project_specs())  # fmt: skip
    if args.out is not None:
        write_out(result, Path(args.out), renderer)
    if args.json:
        print_json(result.to_dict(), ensure_ascii=True)
        return 0
    print(result.text())
    if args.out is not None:
        print(f"-> {args.out}/claim.md, claim.tex, claim.html, claim.json, card.json")
    return 0
