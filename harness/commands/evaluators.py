"""``t3d-audit evaluators [PATTERN ...] [--json]``: list registered evaluators.

Works offline and fast: no torch import; weight availability is a file-presence check in the
Hugging Face cache, ``$T3D_AUDIT_WEIGHTS_DIR`` and local paths (the judge: its API key
variable is set).

Text output: one line per evaluator, tab-separated: ``id, family, model name, checkpoint,
weights (yes/no), needs_text (text/no-text)``.
``--json``: a list of objects with every identity field (``id, family, adapter, model_name,
checkpoint, checkpoint_sha256, preprocessing, score_scale, instruction, decoding, needs_text,
max_text_tokens, options``) plus ``identity_hash``, ``weights_available``, ``description``.
"""

from __future__ import annotations

import argparse
import json
import sys

HELP = "list registered evaluators"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("patterns", nargs="*", help="evaluator ids or globs (default: all)")
    parser.add_argument("--json", action="store_true", help="print every identity field as JSON")


def run(args: argparse.Namespace) -> int:
    from harness.evaluators import registry

    specs = registry.select(args.patterns) if args.patterns else registry.all_specs()
    if args.json:
        payload = [
            {
                **spec.identity(),
                "identity_hash": spec.identity_hash,
                "weights_available": spec.weights_available(),
                "description": spec.description,
            }
            for spec in specs
        ]
        json.dump(payload, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    for spec in specs:
        fields = (
            spec.id,
            spec.family,
            spec.model_name,
            spec.checkpoint,
            "weights:yes" if spec.weights_available() else "weights:no",
            "text" if spec.needs_text else "no-text",
        )
        print("\t".join(fields))
    return 0
