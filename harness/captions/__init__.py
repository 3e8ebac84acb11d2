"""Evaluation captions: the 337-template grammar and the paraphrase file.

Public API::

    templates()            -> tuple[Template, ...]   # all 337, stable order
    template_ids()         -> tuple[str, ...]
    get_template(id)       -> Template                # ProtocolError on unknown id
    realize(id, prompt)    -> str                     # the caption that is scored
    DEFAULT_TEMPLATE_ID    # "A top-down view of {prompt}"
    IDENTITY_TEMPLATE_ID   # "{prompt}" (prompt verbatim)
    BEST_PAPER_TEMPLATE_ID # "A top-down rendering of a virtual scene: {prompt}"

Paraphrases live in :mod:`harness.captions.paraphrase` (imported lazily by callers).
"""

from __future__ import annotations

from functools import cache

from harness.captions.grammar import Template, enumerate_templates, load_grammar
from harness.core.errors import ProtocolError

__all__ = [
    "BEST_PAPER_TEMPLATE_ID",
    "DEFAULT_TEMPLATE_ID",
    "IDENTITY_TEMPLATE_ID",
    "TEMPLATE_COUNT",
    "Template",
    "get_template",
    "realize",
    "template_ids",
    "templates",
]

TEMPLATE_COUNT = 337
DEFAULT_TEMPLATE_ID = "a.top-down.view.of.-"
IDENTITY_TEMPLATE_ID = "-.-.-.-.-"
BEST_PAPER_TEMPLATE_ID = "a.top-down.rendering.of.a-virtual-scene"


@cache
def templates() -> tuple[Template, ...]:
    """All templates of the bundled grammar, in the grammar file's DFS order (cached)."""
    result = enumerate_templates(load_grammar())
    if len(result) != TEMPLATE_COUNT:
        raise ProtocolError(
            f"caption grammar gives {len(result)} templates, expected {TEMPLATE_COUNT}",
            where="harness/captions/grammar.json",
            hint="the study's grammar has exactly 337 paths; see GRAMMAR.md",
        )
    return result


@cache
def _by_id() -> dict[str, Template]:
    return {t.id: t for t in templates()}


def template_ids() -> tuple[str, ...]:
    """Ids of all templates, in :func:`templates` order."""
    return tuple(t.id for t in templates())


def get_template(template_id: str) -> Template:
    """The template with this id, or :class:`ProtocolError`."""
    try:
        return _by_id()[template_id]
    except (KeyError, TypeError):
        raise ProtocolError(
            f"unknown caption template {template_id!r}",
            where="template",
            hint="run 't3d-audit templates' to list the 337 ids "
            "(id = article.viewpoint.noun.connective.frame, '-' for an empty slot)",
        ) from None


def realize(template_id: str, prompt: str) -> str:
    """The caption that template ``template_id`` makes of ``prompt``."""
    return get_template(template_id).realize(prompt)
