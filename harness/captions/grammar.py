"""Enumerate the caption-template grammar (``grammar.json``) into templates.

The grammar is a token DAG declared as data: ``nodes`` (token id → slot and text) and
``edges`` (node id → successor ids) between the pseudo-nodes ``START`` and ``PROMPT``.
Every source-to-sink path ``START → … → PROMPT`` is one template.

Adjacency rules (details and the path arithmetic in ``GRAMMAR.md``): the paper's own rules —
one token per slot in slot order; a connective exactly when a head noun is; ``an`` only
before ``image`` and never beside a viewpoint; a/an fixed by the following word — read
naturally give 364 paths. Two choices of ours bring that to the study's 337: ``view`` takes
``of``/``depicting`` but not ``about`` (a view *about* something is an opinion; −24 paths),
and a scene frame is the complement of a connective, never a caption opener on its own
(−3 paths).

A template's id is derived from its slot choices, not from its position: the node id chosen
in each slot (``article.viewpoint.noun.connective.frame``), ``-`` for an empty slot, e.g.
``a.top-down.view.of.-`` for "A top-down view of {prompt}" and ``-.-.-.-.-`` for the
identity template (the prompt alone, verbatim). Reordering edges in the data changes the
enumeration order but never an id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.core.bounded_input import read_json
from harness.core.errors import ProtocolError

GRAMMAR_FILE = Path(__file__).with_name("grammar.json")
GRAMMAR_SCHEMA = "t3d-grammar/1"
START = "START"
PROMPT = "PROMPT"
PLACEHOLDER = "{prompt}"
EMPTY = "-"  # id component of an empty slot
SLOTS = ("article", "viewpoint", "noun", "connective", "frame")


@dataclass(frozen=True)
class Node:
    """One token of the DAG: ``id`` (unique, used in template ids), its ``slot`` and ``text``."""

    id: str
    slot: str
    text: str


@dataclass(frozen=True)
class Grammar:
    """The parsed token DAG. ``edges`` keeps the successor order of the data file."""

    slots: tuple[str, ...]
    nodes: Mapping[str, Node]
    edges: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Template:
    """One caption template (one path through the grammar).

    ``id``: stable id from the slot choices; ``choices``: ``(slot, token text or None)`` for
    every slot in grammar order; ``text``: the caption with the literal ``{prompt}``
    placeholder, first letter capitalized (except the identity template, which is just
    ``{prompt}``).
    """

    id: str
    choices: tuple[tuple[str, str | None], ...]
    text: str

    @property
    def slots(self) -> dict[str, str | None]:
        """Slot name → chosen token text (``None`` when the slot is empty)."""
        return dict(self.choices)

    @property
    def is_identity(self) -> bool:
        """True for the degenerate path START → PROMPT (prompt emitted verbatim)."""
        return self.text == PLACEHOLDER

    @property
    def prefix(self) -> str:
        """The wrapper text before the prompt ('' for the identity template)."""
        return self.text[: -len(PLACEHOLDER)].rstrip(" ")

    def realize(self, prompt: str) -> str:
        """The caption for ``prompt``: prefix + one space + :func:`embed_prompt` (prompt), or
        the prompt verbatim for the identity template."""
        if not isinstance(prompt, str) or not prompt.strip():
            raise ProtocolError(
                f"cannot realize template {self.id!r} with prompt {prompt!r}",
                where="prompt",
                hint="pass a non-empty prompt string",
            )
        return prompt if self.is_identity else f"{self.prefix} {embed_prompt(prompt)}"


def embed_prompt(prompt: str) -> str:
    """The prompt as it reads inside a wrapper: a sentence-initial capital is lowered.

    Prompts are written as sentences ("An industrial bar with ..."); after "A top-down view
    of" the caption reads as one sentence only with "an industrial bar ...". Only an ordinary
    capitalized first word is changed (first letter upper case, no other upper-case letter in
    the word: "An", "A", "The", "Loft-style"); acronyms and names with inner capitals ("TV",
    "McKinley") and everything after the first letter are kept verbatim.
    """
    first = prompt.split(maxsplit=1)[0] if prompt.strip() else ""
    ordinary = (
        first[:1].isupper()
        and len(first[0].lower()) == 1  # e.g. "İ" lowers to two code points: keep it
        and not any(ch.isupper() for ch in first[1:])
        and (len(first) > 1 or first == "A")  # a lone capital other than the article stays
    )
    if not ordinary:
        return prompt
    head = len(prompt) - len(prompt.lstrip())
    return prompt[:head] + prompt[head].lower() + prompt[head + 1 :]


def _fail(what: str, pointer: str, path: Path) -> ProtocolError:
    return ProtocolError(what, where=f"{path}#{pointer}", hint="fix the caption grammar data")


def parse_grammar(data: object, *, path: Path = GRAMMAR_FILE) -> Grammar:
    """Check and parse grammar data (the JSON value of ``grammar.json``).

    Raises :class:`ProtocolError` naming the JSON pointer for: wrong schema, unknown slot,
    an edge to an unknown node, an edge that does not move strictly forward through the
    slots (which also rules out cycles), a node not on any START→PROMPT path.
    """
    if not isinstance(data, dict) or data.get("schema") != GRAMMAR_SCHEMA:
        raise _fail(f"not a {GRAMMAR_SCHEMA} grammar", "/schema", path)
    slots = data.get("slots")
    if slots != list(SLOTS):
        raise _fail(f"slots must be {list(SLOTS)}, got {slots!r}", "/slots", path)
    raw_nodes, raw_edges = data.get("nodes"), data.get("edges")
    if not isinstance(raw_nodes, dict) or not isinstance(raw_edges, dict):
        raise _fail("'nodes' and 'edges' must be objects", "", path)
    nodes: dict[str, Node] = {}
    for node_id, spec in raw_nodes.items():
        if node_id in (START, PROMPT, EMPTY) or "." in node_id or not node_id:
            raise _fail(f"reserved or malformed node id {node_id!r}", f"/nodes/{node_id}", path)
        if (
            not isinstance(spec, dict)
            or spec.get("slot") not in SLOTS
            or not isinstance(spec.get("text"), str)
            or not spec["text"].strip()
        ):
            raise _fail("node needs a known 'slot' and non-empty 'text'", f"/nodes/{node_id}", path)
        nodes[node_id] = Node(node_id, spec["slot"], spec["text"])
    rank = {START: -1, PROMPT: len(SLOTS), **{n.id: SLOTS.index(n.slot) for n in nodes.values()}}
    edges: dict[str, tuple[str, ...]] = {}
    for src, targets in raw_edges.items():
        if src not in rank or src == PROMPT:
            raise _fail(f"edge from unknown node {src!r}", f"/edges/{src}", path)
        if not isinstance(targets, list) or len(set(targets)) != len(targets):
            raise _fail("successors must be a list without repeats", f"/edges/{src}", path)
        for i, dst in enumerate(targets):
            if dst not in rank or dst == START:
                raise _fail(f"edge to unknown node {dst!r}", f"/edges/{src}/{i}", path)
            if rank[dst] <= rank[src]:
                raise _fail(
                    f"edge {src}→{dst} does not move forward through the slots",
                    f"/edges/{src}/{i}",
                    path,
                )
        edges[src] = tuple(targets)
    grammar = Grammar(tuple(SLOTS), nodes, edges)
    reachable = _reachable(grammar, START, forward=True)
    coreachable = _reachable(grammar, PROMPT, forward=False)
    for node_id in nodes:
        if node_id not in reachable or node_id not in coreachable:
            what = f"node {node_id!r} lies on no START→PROMPT path"
            raise _fail(what, f"/nodes/{node_id}", path)
    return grammar


def _reachable(grammar: Grammar, origin: str, *, forward: bool) -> set[str]:
    if forward:
        step = grammar.edges
    else:
        step = {}
        for src, targets in grammar.edges.items():
            for dst in targets:
                step.setdefault(dst, []).append(src)
    seen, todo = {origin}, [origin]
    while todo:
        for nxt in step.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def load_grammar(path: Path = GRAMMAR_FILE) -> Grammar:
    """Read and check a grammar file (default: the bundled ``grammar.json``)."""
    try:
        data = read_json(Path(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"cannot read caption grammar: {exc}", where=str(path)) from exc
    return parse_grammar(data, path=Path(path))


def paths(grammar: Grammar) -> list[tuple[str, ...]]:
    """Every START→PROMPT path as the tuple of node ids between them, in data (DFS) order."""
    out: list[tuple[str, ...]] = []

    def walk(node: str, trail: tuple[str, ...]) -> None:
        for nxt in grammar.edges.get(node, ()):
            if nxt == PROMPT:
                out.append(trail)
            else:
                walk(nxt, (*trail, nxt))

    walk(START, ())
    return out


def template_from_path(grammar: Grammar, path: tuple[str, ...]) -> Template:
    """Build the template of one path: id from slot choices, text with capitalized first letter."""
    chosen: dict[str, Node] = {grammar.nodes[n].slot: grammar.nodes[n] for n in path}
    template_id = ".".join(chosen[s].id if s in chosen else EMPTY for s in grammar.slots)
    choices = tuple((s, chosen[s].text if s in chosen else None) for s in grammar.slots)
    words = " ".join(grammar.nodes[n].text for n in path)
    text = f"{words[:1].upper()}{words[1:]} {PLACEHOLDER}" if words else PLACEHOLDER
    return Template(template_id, choices, text)


def enumerate_templates(grammar: Grammar) -> tuple[Template, ...]:
    """All templates of ``grammar`` in DFS order of the data; ids and texts must be unique."""
    result = tuple(template_from_path(grammar, p) for p in paths(grammar))
    for attr in ("id", "text"):
        seen: set[str] = set()
        for t in result:
            value = getattr(t, attr)
            if value in seen:
                raise ProtocolError(
                    f"two grammar paths give the same {attr} {value!r}", where=str(GRAMMAR_FILE)
                )
            seen.add(value)
    return result
