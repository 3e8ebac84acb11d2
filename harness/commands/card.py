"""``t3d-audit card``: validate, identify or summarise Evaluator Configuration Cards.

    t3d-audit card validate reports/<run-id>/cards/*.json   # schema v1.0 + id check
    t3d-audit card id CARD.json                            # the id its content hashes to
    t3d-audit card show CARD.json                          # the ten groups, one line each
    t3d-audit card schema                                  # path of the JSON Schema file

Cards are built by the audit run (``reports/<run-id>/cards/``); a card edited afterwards no
longer matches its id and fails validation.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.core.bounded_input import read_json
from harness.run import argtypes

HELP = "validate, identify or summarise Evaluator Configuration Cards"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    validate = sub.add_parser("validate", help="check cards against schema v1.0 and their ids")
    validate.add_argument("cards", nargs="+", type=argtypes.input_path)
    ident = sub.add_parser("id", help="print the ecc-v1-sha256 id a card's content hashes to")
    ident.add_argument("card", type=argtypes.input_path)
    show = sub.add_parser("show", help="print a card's ten field groups")
    show.add_argument("card", type=argtypes.input_path)
    sub.add_parser("schema", help="print the path of the card JSON Schema")


def _load(path: Path) -> dict:
    from harness.core.errors import CardError

    try:
        data = read_json(path)
    except (OSError, ValueError) as exc:
        raise CardError(f"cannot read card: {exc}", where=path) from exc
    if not isinstance(data, dict):
        raise CardError("a card must be a JSON object", where=path)
    return data


def run(args: argparse.Namespace) -> int:
    from harness.cards import GROUPS, card_id, validate_card
    from harness.cards.card_format import SCHEMA_FILE
    from harness.core.errors import CardError

    if args.action == "schema":
        print(SCHEMA_FILE)
        return 0
    if args.action == "id":
        print(card_id(_load(args.card)))
        return 0
    if args.action == "show":
        card = _load(args.card)
        print(f"card_id: {card.get('card_id')}")
        for group in GROUPS:
            value = card.get(group, "MISSING")
            text = json.dumps(value, sort_keys=True, ensure_ascii=False)
            print(f"{group}: {text[:160]}{'…' if len(text) > 160 else ''}")
        return 0
    failures = 0
    for path in args.cards:
        try:
            validate_card(_load(path), where=str(path))
        except CardError as exc:
            failures += 1
            print(f"INVALID {exc}")
        else:
            print(f"ok      {path}")
    return 1 if failures else 0
