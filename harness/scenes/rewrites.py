"""Programmatic paraphrases of the sampled prompts (``fixtures/prompts/paraphrases.json``).

Each prompt gets exactly :data:`N_REWRITES` rewrites written from its structured spec with a
seeded :class:`random.Random` (``sha256("<prompt id>|paraphrase")``). Rewrite kinds:

========================  ===================================================  =================
kind                      what changes                                         meaning_preserved
========================  ===================================================  =================
reword                    synonyms for room, objects, relations and style      true
reorder                   objects named in another order, relations first      true
list                      "A room containing ...; where ..." phrasing           true
terse                     object list only, relations dropped                  false
count drift               one object count changed                             false
drop object               one requested object left out                        false
style drift               style replaced (or one added)                        false
room drift                room named as a near room type (bar → pub, ...)      null (unaudited)
duplicate                 an earlier text with other case / final period       copies its source
========================  ===================================================  =================

Between 0 and 3 rewrites are *duplicates* (another rewrite or the original re-cased or with a
trailing period added/removed), so after the collapse rule of
:func:`harness.captions.paraphrase.normalise` every prompt keeps 8–11 distinct captions,
original included.
"""

from __future__ import annotations

import hashlib
import random

from harness.captions.paraphrase import SCHEMA as PARAPHRASE_SCHEMA
from harness.scenes.prompts import PromptSpec

N_REWRITES = 10

ROOM_WORDS = {
    "bedroom": ["bedroom", "sleeping room"],
    "living room": ["living room", "lounge", "sitting room"],
    "kitchen": ["kitchen", "cooking space"],
    "dining room": ["dining room", "dining area"],
    "office": ["office", "workspace"],
    "bathroom": ["bathroom", "washroom"],
    "classroom": ["classroom", "teaching room"],
    "bar": ["bar", "bar room"],
    "library": ["library", "book room"],
    "kids room": ["kids room", "children's room"],
}
ROOM_DRIFT = {
    "bedroom": "hotel room",
    "living room": "family room",
    "kitchen": "kitchenette",
    "dining room": "breakfast nook",
    "office": "study",
    "bathroom": "powder room",
    "classroom": "lecture hall",
    "bar": "pub",
    "library": "archive",
    "kids room": "nursery",
}
OBJECT_WORDS = {
    "bed": ["bed"],
    "nightstand": ["nightstand", "bedside table"],
    "wardrobe": ["wardrobe", "armoire"],
    "dresser": ["dresser", "chest of drawers"],
    "sofa": ["sofa", "couch"],
    "armchair": ["armchair", "easy chair"],
    "coffee table": ["coffee table", "low table"],
    "tv stand": ["TV stand", "media console"],
    "tv": ["TV", "television"],
    "dining table": ["dining table", "table"],
    "chair": ["chair", "seat"],
    "desk": ["desk", "writing desk"],
    "office chair": ["office chair", "swivel chair"],
    "bookshelf": ["bookshelf", "bookcase"],
    "lamp": ["lamp", "table lamp"],
    "rug": ["rug", "carpet"],
    "plant": ["plant", "potted plant"],
    "toilet": ["toilet", "WC"],
    "sink": ["sink", "washbasin"],
    "bathtub": ["bathtub", "tub"],
    "counter": ["counter", "countertop"],
    "stool": ["stool", "bar stool"],
    "fridge": ["fridge", "refrigerator"],
    "stove": ["stove", "cooker"],
    "whiteboard": ["whiteboard", "dry-erase board"],
    "cabinet": ["cabinet", "cupboard"],
}
RELATION_WORDS = {
    "beside": ["beside", "next to"],
    "facing": ["facing", "turned towards"],
    "on": ["on", "on top of"],
    "around": ["around", "arranged around"],
    "in_front_of": ["in front of", "placed before"],
    "under": ["under", "beneath"],
}
STYLE_WORDS = {
    "modern": ["modern", "contemporary"],
    "rustic": ["rustic", "country-style"],
    "minimalist": ["minimalist", "pared-back"],
    "industrial": ["industrial", "loft-style"],
    "scandinavian": ["Scandinavian", "Nordic"],
    "cozy": ["cozy", "snug"],
    "victorian": ["Victorian", "period"],
    "bohemian": ["bohemian", "boho"],
}
NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]


def _plural(noun: str) -> str:
    if noun == "chest of drawers":
        return "chests of drawers"
    if noun.endswith("shelf"):
        return noun[:-1] + "ves"
    if noun.endswith(("s", "sh", "ch", "x")):
        return noun + "es"
    return noun + "s"


def _article(noun: str) -> str:
    return "an" if noun[0].lower() in "aeiou" else "a"


class _Writer:
    """Picks words with one seeded RNG; ``synonyms=False`` keeps the spec's own words."""

    def __init__(self, spec: PromptSpec, rng: random.Random, synonyms: bool):
        self.spec = spec
        self.rng = rng
        self.synonyms = synonyms
        self.nouns = {label: self._choose(OBJECT_WORDS[label]) for label, _ in spec.objects}

    def _choose(self, options: list[str]) -> str:
        if not self.synonyms:
            return options[0]
        return options[min(len(options) - 1, int(self.rng.random() * len(options)))]

    def room(self, room_type: str | None = None) -> str:
        return self._choose(ROOM_WORDS[room_type or self.spec.room_type])

    def style(self, style: str | None = None) -> str:
        style = style if style is not None else self.spec.style
        return f"{self._choose(STYLE_WORDS[style])} " if style else ""

    def counted(self, label: str, count: int) -> str:
        noun = self.nouns[label]
        if count == 1:
            return f"{_article(noun)} {noun}"
        return f"{NUMBERS[count]} {_plural(noun)}"

    def objects(self, items: list[tuple[str, int]]) -> str:
        parts = [self.counted(label, count) for label, count in items]
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]

    def relation(self, subject: str, kind: str, anchor: str) -> str:
        n_s, n_a = self.spec.count(subject), self.spec.count(anchor)
        s_noun = self.nouns[subject] if n_s == 1 else _plural(self.nouns[subject])
        word = self._choose(RELATION_WORDS[kind])
        if subject == anchor:
            return f"the {s_noun} stand {word} each other"
        a_noun = self.nouns[anchor] if n_a == 1 else _plural(self.nouns[anchor])
        verb = "is" if n_s == 1 else "are"
        return f"the {s_noun} {verb} {word} the {a_noun}"

    def relations(self, rels=None) -> str:
        rels = self.spec.relations if rels is None else rels
        texts = [self.relation(r.subject, r.kind, r.anchor) for r in rels]
        return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def _room_phrase(w: _Writer, *, style: str | None = None, room: str | None = None) -> str:
    """``a modern bedroom``: article, optional style, room noun (each word chosen once)."""
    words = (w.style(style) if style is not None else w.style()) + (room or w.room())
    return f"{_article(words)} {words}"


def _rewrite_kinds(spec: PromptSpec, rng: random.Random) -> list[tuple[str, bool | None]]:
    objs = list(spec.objects)
    rels = list(spec.relations)
    fresh = lambda: _Writer(spec, rng, synonyms=True)  # noqa: E731
    plain = _Writer(spec, rng, synonyms=False)
    out: list[tuple[str, bool | None]] = []
    # meaning-preserving rewrites
    w = fresh()
    out.append((f"{_cap(_room_phrase(w))} with {w.objects(objs)}, where {w.relations()}.", True))
    w = fresh()
    out.append((f"{_cap(w.relations())}, in {_room_phrase(w)} that holds {w.objects(objs[::-1])}.", True))
    out.append((f"{_cap(_room_phrase(plain))} containing {plain.objects(objs)}; {plain.relations()}", True))
    w = fresh()
    out.append((f"Inside this {w.style()}{w.room()}, {w.relations(rels[::-1])}. It has {w.objects(objs)}.", True))
    w = fresh()
    be = "is" if objs[0][1] == 1 else "are"
    out.append((f"There {be} {w.objects(objs)} in {_room_phrase(w)}: {w.relations()}.", True))
    # drifted rewrites
    w = fresh()
    out.append((f"{_cap(_room_phrase(w))} with {w.objects(objs)}.", False))
    i = min(len(objs) - 1, int(rng.random() * len(objs)))
    label, count = objs[i]
    changed = [*objs[:i], (label, count + 1 if count < 3 else count - 1), *objs[i + 1 :]]
    out.append((f"{_cap(_room_phrase(plain))} with {plain.objects(changed)}, where {plain.relations()}.", False))
    w = fresh()
    kept = [o for o in objs if o[0] != objs[-1][0]] if len(objs) > 1 else objs
    dropped = f"{_cap(_room_phrase(w))} with {w.objects(kept)}."
    out.append((dropped if len(objs) > 1 else f"An empty {w.room()}.", False))
    others = sorted(s for s in STYLE_WORDS if s != spec.style)
    other = others[min(len(others) - 1, int(rng.random() * len(others)))]
    out.append((f"{_cap(_room_phrase(plain, style=other))} with {plain.objects(objs)}, where {plain.relations()}.", False))
    drift = ROOM_DRIFT[spec.room_type]
    out.append((f"{_cap(_room_phrase(plain, room=drift))} with {plain.objects(objs)}, where {plain.relations()}.", None))
    return out


def _variant_of(text: str, rng: random.Random) -> str:
    """Same normal form, other surface: re-cased and/or final period toggled."""
    choice = int(rng.random() * 3)
    if choice == 0:
        return text.rstrip(".") if text.endswith(".") else text + "."
    if choice == 1:
        return text.lower()
    return text.upper() if len(text) < 60 else text[0].lower() + text[1:]


def rewrites_for(spec: PromptSpec) -> list[dict[str, object]]:
    """The :data:`N_REWRITES` rewrites of ``spec`` as ``{"text", "meaning_preserved"}`` dicts."""
    rng = random.Random(int.from_bytes(hashlib.sha256(f"{spec.id}|paraphrase".encode()).digest()[:8], "big"))
    items = _rewrite_kinds(spec, rng)[:N_REWRITES]
    n_dup = [0, 1, 1, 2, 3][min(4, int(rng.random() * 5))]
    # Replace the last n_dup rewrites by surface variants of earlier texts (original included).
    for k in range(N_REWRITES - n_dup, N_REWRITES):
        src = min(k, int(rng.random() * k))  # 0 = original, i = rewrite i
        text, flag = (spec.text, True) if src == 0 else items[src - 1]
        items[k] = (_variant_of(text, rng), flag)
    return [{"text": " ".join(t.split()), "meaning_preserved": flag} for t, flag in items]


def paraphrase_document(specs: tuple[PromptSpec, ...]) -> dict[str, object]:
    """The ``t3d-paraphrases/1`` document for ``specs`` (prompt ids in the given order)."""
    return {
        "schema": PARAPHRASE_SCHEMA,
        "prompts": {s.id: {"original": s.text, "rewrites": rewrites_for(s)} for s in specs},
    }
