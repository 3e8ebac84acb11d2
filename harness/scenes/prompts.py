"""Indoor-scene prompts with structured specs: the written pool, validation, seeded sampling.

The pool (``fixtures/prompts/pool.jsonl``, one JSON object per line) is written by hand:
each prompt has an ``id`` (``<room-type>-NN``), a ``room_type``, a ``prompt_source`` tag
(``written-descriptive``, ``written-terse``, ``written-relational``, ``written-stylized``), an
optional ``style``, the prompt ``text``, the requested ``objects`` (asset-category label →
count, in the order the text names them) and pairwise ``relations``
``[subject_label, relation, anchor_label]``.

The bundled set samples :data:`SAMPLE_SIZE` prompts with :data:`SAMPLE_SEED`: prompts are
ranked by ``sha256("<seed>:<id>")`` and the first ``n`` kept, then sorted by id, so the draw is
reproducible on any platform and Python version. ``fixtures/prompts/prompts.json`` records the
seed, the pool's sha256 and the sampled specs.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from harness.core import bounded_input
from harness.core.bounded_input import read_json
from harness.core.errors import SceneError
from harness.core.hashing import sha256_bytes
from harness.core.paths import FIXTURES
from harness.scenes.assets import CATEGORIES

POOL_PATH = FIXTURES / "prompts" / "pool.jsonl"
PROMPTS_PATH = FIXTURES / "prompts" / "prompts.json"
PROMPTS_SCHEMA = "t3d-prompts/1"
SAMPLE_SIZE = 50
SAMPLE_SEED = 20260
SOURCES = ("written-descriptive", "written-terse", "written-relational", "written-stylized")

#: Relations a spec may request. ``subject REL anchor`` reads "the subject is REL the anchor".
RELATIONS = ("beside", "facing", "on", "around", "in_front_of", "under")

_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*-[0-9]{2}$")


@dataclass(frozen=True)
class RoomType:
    """Base floor ``size`` (x, y) and ``wall_height`` in metres; generators may enlarge the floor."""

    size: tuple[float, float]
    wall_height: float


ROOM_TYPES: dict[str, RoomType] = {
    "bedroom": RoomType((3.6, 3.2), 2.6),
    "living room": RoomType((4.5, 4.0), 2.7),
    "kitchen": RoomType((3.6, 3.2), 2.6),
    "dining room": RoomType((4.0, 3.6), 2.7),
    "office": RoomType((3.6, 3.2), 2.7),
    "bathroom": RoomType((2.6, 2.2), 2.5),
    "classroom": RoomType((6.0, 5.0), 3.0),
    "bar": RoomType((5.0, 4.0), 3.0),
    "library": RoomType((4.2, 3.8), 3.0),
    "kids room": RoomType((3.4, 3.0), 2.6),
}


@dataclass(frozen=True)
class Relation:
    """``subject`` (label) stands in ``kind`` relation to ``anchor`` (label)."""

    subject: str
    kind: str
    anchor: str


@dataclass(frozen=True)
class PromptSpec:
    """One prompt: text plus the structured request a faithful scene must meet.

    ``objects`` is ``((label, count), ...)`` in the order the text names them.
    """

    id: str
    text: str
    room_type: str
    prompt_source: str
    style: str | None
    objects: tuple[tuple[str, int], ...]
    relations: tuple[Relation, ...]

    @property
    def n_objects(self) -> int:
        """Requested object instances (counts summed)."""
        return sum(count for _, count in self.objects)

    def count(self, label: str) -> int:
        """Requested count of ``label`` (0 if not requested)."""
        return dict(self.objects).get(label, 0)

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "room_type": self.room_type,
            "prompt_source": self.prompt_source,
            "style": self.style,
            "text": self.text,
            "objects": dict(self.objects),
            "relations": [[r.subject, r.kind, r.anchor] for r in self.relations],
        }


def parse_spec(data: object, *, where: str = "<prompt>") -> PromptSpec:
    """Validate one pool entry; raises :class:`SceneError` naming the field at fault."""

    def fail(what: str, pointer: str, hint: str | None = None) -> SceneError:
        return SceneError(what, path=where, pointer=pointer, hint=hint)

    if not isinstance(data, dict):
        raise fail("a prompt entry must be a JSON object", "")
    keys = {"id", "room_type", "prompt_source", "style", "text", "objects", "relations"}
    if set(data) != keys:
        raise fail(f"fields must be exactly {sorted(keys)}, got {sorted(data)}", "")
    pid = data["id"]
    if not isinstance(pid, str) or not _ID.match(pid):
        raise fail(f"bad prompt id {pid!r}", "/id", "use '<room-type>-NN', e.g. 'bedroom-03'")
    if data["room_type"] not in ROOM_TYPES:
        raise fail(f"unknown room type {data['room_type']!r}", "/room_type", f"use one of {sorted(ROOM_TYPES)}")
    if data["prompt_source"] not in SOURCES:
        raise fail(f"unknown prompt source {data['prompt_source']!r}", "/prompt_source", f"use one of {SOURCES}")
    style = data["style"]
    if style is not None and (not isinstance(style, str) or not style.strip()):
        raise fail("style must be null or a non-empty string", "/style")
    text = data["text"]
    if not isinstance(text, str) or not text.strip():
        raise fail("text must be a non-empty string", "/text")
    objects = data["objects"]
    if not isinstance(objects, dict) or not objects:
        raise fail("objects must be a non-empty {label: count} object", "/objects")
    for label, count in objects.items():
        if label not in CATEGORIES:
            raise fail(f"unknown object label {label!r}", f"/objects/{label}", f"use one of {sorted(CATEGORIES)}")
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 12:
            raise fail(f"count of {label!r} must be an integer 1..12", f"/objects/{label}")
    relations = data["relations"]
    if not isinstance(relations, list) or not relations:
        raise fail("relations must be a non-empty list", "/relations")
    parsed = []
    for i, rel in enumerate(relations):
        if not (isinstance(rel, list) and len(rel) == 3 and all(isinstance(v, str) for v in rel)):
            raise fail("a relation is [subject, relation, anchor]", f"/relations/{i}")
        subject, kind, anchor = rel
        if kind not in RELATIONS:
            raise fail(f"unknown relation {kind!r}", f"/relations/{i}/1", f"use one of {RELATIONS}")
        for j, label in ((0, subject), (2, anchor)):
            if label not in objects:
                raise fail(f"relation names {label!r}, which is not among the objects", f"/relations/{i}/{j}")
        if subject == anchor and objects[subject] < 2:
            raise fail(f"{subject!r} relates to itself but is requested once", f"/relations/{i}")
        parsed.append(Relation(subject, kind, anchor))
    return PromptSpec(
        id=pid,
        text=text,
        room_type=data["room_type"],
        prompt_source=data["prompt_source"],
        style=style,
        objects=tuple((label, int(count)) for label, count in objects.items()),
        relations=tuple(parsed),
    )


def load_pool(path: str | Path = POOL_PATH) -> tuple[PromptSpec, ...]:
    """Parse and validate the JSONL pool; ids must be unique."""
    path = Path(path)
    specs: list[PromptSpec] = []
    seen: set[str] = set()
    try:
        text = bounded_input.read_text(path, what="prompt pool")
    except (OSError, UnicodeDecodeError) as exc:
        raise SceneError(f"cannot read the prompt pool: {exc}", path=path) from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            data = bounded_input.loads(line, where=where)
        except json.JSONDecodeError as exc:
            raise SceneError(f"malformed JSON: {exc.msg}", path=where, hint="one JSON object per line") from None
        spec = parse_spec(data, where=where)
        if spec.id in seen:
            raise SceneError(f"duplicate prompt id {spec.id!r}", path=where, pointer="/id")
        seen.add(spec.id)
        specs.append(spec)
    return tuple(specs)


def pool_sha256(path: str | Path = POOL_PATH) -> str:
    """sha256 of the pool file's bytes (recorded with the sample)."""
    return sha256_bytes(bounded_input.read_bytes(path, what="prompt pool"))


def sample(pool: tuple[PromptSpec, ...], n: int = SAMPLE_SIZE, seed: int = SAMPLE_SEED) -> tuple[PromptSpec, ...]:
    """``n`` prompts ranked by ``sha256("<seed>:<id>")``, returned sorted by id."""
    if not 0 < n <= len(pool):
        raise SceneError(f"cannot sample {n} prompts from a pool of {len(pool)}", hint="lower n")

    def rank(spec: PromptSpec) -> str:
        return hashlib.sha256(f"{seed}:{spec.id}".encode()).hexdigest()

    return tuple(sorted(sorted(pool, key=rank)[:n], key=lambda s: s.id))


def prompts_document(pool_path: str | Path = POOL_PATH, n: int = SAMPLE_SIZE, seed: int = SAMPLE_SEED) -> dict[str, object]:
    """The JSON document of the sampled prompts (what ``prompts.json`` stores)."""
    specs = sample(load_pool(pool_path), n, seed)
    return {
        "schema": PROMPTS_SCHEMA,
        "seed": seed,
        "n": n,
        "pool": Path(pool_path).name,
        "pool_sha256": pool_sha256(pool_path),
        "prompts": [s.to_dict() for s in specs],
    }


def load_prompts(path: str | Path = PROMPTS_PATH) -> tuple[PromptSpec, ...]:
    """Load a sampled-prompts document (``prompts.json``)."""
    path = Path(path)
    try:
        doc = read_json(path)
    except (OSError, json.JSONDecodeError) as exc:
        raise SceneError(f"cannot read prompts file: {exc}", path=path, hint="run t3d-audit build-scenes") from None
    if not isinstance(doc, dict) or doc.get("schema") != PROMPTS_SCHEMA:
        raise SceneError(f"not a {PROMPTS_SCHEMA} document", path=path, pointer="/schema")
    specs = tuple(parse_spec(p, where=f"{path}#/prompts/{i}") for i, p in enumerate(doc["prompts"]))
    first: dict[str, int] = {}
    for i, spec in enumerate(specs):
        if spec.id in first:
            raise SceneError(f"duplicate prompt id {spec.id!r} (first at /prompts/{first[spec.id]})",
                             path=path, pointer=f"/prompts/{i}", hint="give every prompt its own id")  # fmt: skip
        first[spec.id] = i
    return specs
