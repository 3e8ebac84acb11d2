"""Evaluator Configuration Cards (schema v1.0, study Table 6) and the report's provenance manifest."""

from harness.cards.card_format import (
    CARD_TYPE,
    GROUPS,
    NOT_REPORTED,
    SCHEMA_VERSION,
    build_card,
    card_id,
    read_card,
    read_report_cards,
    validate_card,
    write_card,
)

__all__ = [
    "CARD_TYPE",
    "GROUPS",
    "NOT_REPORTED",
    "SCHEMA_VERSION",
    "build_card",
    "card_id",
    "read_card",
    "read_report_cards",
    "validate_card",
    "write_card",
]
