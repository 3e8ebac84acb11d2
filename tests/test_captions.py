"""Caption grammar: 337 templates, the paper's rules, stable ids, typed errors."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.captions import (
    BEST_PAPER_TEMPLATE_ID,
    DEFAULT_TEMPLATE_ID,
    IDENTITY_TEMPLATE_ID,
    get_template,
    realize,
    template_ids,
    templates,
)
from harness.captions.grammar import (
    GRAMMAR_FILE,
    SLOTS,
    embed_prompt,
    enumerate_templates,
    parse_grammar,
)
from harness.core.errors import ProtocolError

VOWEL_INITIAL = ("image",)


def _grammar_data() -> dict:
    return json.loads(GRAMMAR_FILE.read_text(encoding="utf-8"))


def test_exactly_337_unique_templates():
    ts = templates()
    assert len(ts) == 337
    assert len({t.id for t in ts}) == 337
    assert len({t.text for t in ts}) == 337
    assert template_ids() == tuple(t.id for t in ts)
    assert templates() is templates()  # cached


def test_named_templates():
    assert get_template(DEFAULT_TEMPLATE_ID).text == "A top-down view of {prompt}"
    assert get_template(IDENTITY_TEMPLATE_ID).text == "{prompt}"
    assert get_template(BEST_PAPER_TEMPLATE_ID).text == (
        "A top-down rendering of a virtual scene: {prompt}"
    )
    assert get_template(DEFAULT_TEMPLATE_ID).slots == {
        "article": "a",
        "viewpoint": "top-down",
        "noun": "view",
        "connective": "of",
        "frame": None,
    }
    assert get_template(IDENTITY_TEMPLATE_ID).is_identity
    assert sum(t.is_identity for t in templates()) == 1


def test_slot_breakdown_hand_counted():
    # 6 paths into each noun; image/photo/picture/rendering take 3 connectives, view 2;
    # each connective is followed by 4 frame choices (none + 3).
    nouns = Counter(t.slots["noun"] for t in templates())
    assert nouns == {None: 1, "image": 72, "photo": 72, "picture": 72, "rendering": 72, "view": 48}
    frames = Counter(t.slots["frame"] for t in templates())
    assert frames == {None: 85, "scene:": 84, "a scene:": 84, "a virtual scene:": 84}
    articles = Counter(t.slots["article"] for t in templates())
    # "an": an image × 3 connectives × 4 frames. "a" without a viewpoint: photo, picture,
    # rendering (3 connectives) + view (2) = 11 noun phrases × 4 frames; with one of the two
    # viewpoints: 4 nouns × 3 + view × 2 = 14 noun phrases × 4 frames.
    assert articles["an"] == 12
    assert articles["a"] == 11 * 4 + 2 * 14 * 4
    assert sum(articles.values()) == 337


def test_capitalization_and_text_follow_slots():
    for t in templates():
        tokens = [tok for _, tok in t.choices if tok is not None]
        if not tokens:
            assert t.text == "{prompt}"
            continue
        words = " ".join(tokens)
        assert t.text == words[0].upper() + words[1:] + " {prompt}"
        assert t.text[0].isupper()
        assert t.text.count("{prompt}") == 1 and t.text.endswith("{prompt}")


def test_article_rules():
    for t in templates():
        s = t.slots
        if s["article"] == "an":
            assert s["noun"] == "image" and s["viewpoint"] is None, t.id
        if s["article"] is not None:
            assert s["noun"] is not None, t.id
            following = s["viewpoint"] or s["noun"]
            expected = "an" if following.startswith(VOWEL_INITIAL) else "a"
            assert s["article"] == expected, t.id
    texts = {t.text.lower() for t in templates()}
    assert not any(x.startswith("a image") for x in texts)
    assert "an image of {prompt}" in texts
    assert "a top-down image of {prompt}" in texts


def test_connective_iff_head_noun_and_frame_needs_connective():
    for t in templates():
        s = t.slots
        assert (s["connective"] is None) == (s["noun"] is None), t.id
        assert s["viewpoint"] is None or s["noun"] is not None, t.id
        if s["frame"] is not None:
            assert s["connective"] is not None, t.id
        assert not (s["noun"] == "view" and s["connective"] == "about"), t.id


def test_ids_derive_from_slot_choices():
    nodes = _grammar_data()["nodes"]
    token_to_id = {(spec["slot"], spec["text"]): node_id for node_id, spec in nodes.items()}
    for t in templates():
        parts = ["-" if tok is None else token_to_id[(slot, tok)] for slot, tok in t.choices]
        assert t.id == ".".join(parts)
        assert [slot for slot, _ in t.choices] == list(SLOTS)


def test_natural_reading_gives_364():
    # Restoring the two documented exclusions gives the natural reading of the slots.
    data = _grammar_data()
    data["edges"]["view"] = ["of", "about", "depicting"]
    data["edges"]["START"] = [*data["edges"]["START"], "scene", "a-scene", "a-virtual-scene"]
    assert len(enumerate_templates(parse_grammar(data))) == 364


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False))
def test_ids_stable_under_edge_reordering(rnd: random.Random):
    data = copy.deepcopy(_grammar_data())
    for targets in data["edges"].values():
        rnd.shuffle(targets)
    shuffled = {t.id: t for t in enumerate_templates(parse_grammar(data))}
    assert shuffled == {t.id: t for t in templates()}


@given(st.text(min_size=1).filter(lambda s: s.strip()))
def test_realize(prompt: str):
    assert realize(IDENTITY_TEMPLATE_ID, prompt) == prompt
    embedded = embed_prompt(prompt)
    assert realize(DEFAULT_TEMPLATE_ID, prompt) == "A top-down view of " + embedded
    assert realize(BEST_PAPER_TEMPLATE_ID, prompt).endswith("virtual scene: " + embedded)
    # at most the first non-space character changes, and only to its lower case
    assert len(embedded) == len(prompt)
    diff = [i for i, (a, b) in enumerate(zip(prompt, embedded, strict=True)) if a != b]
    assert diff in ([], [len(prompt) - len(prompt.lstrip())])
    assert all(embedded[i] == prompt[i].lower() for i in diff)


@pytest.mark.parametrize(
    ("prompt", "embedded"),
    [
        ("An industrial bar with a TV.", "an industrial bar with a TV."),
        ("A loft-style bar", "a loft-style bar"),
        ("The bar stools are placed", "the bar stools are placed"),
        ("Loft-style bar", "loft-style bar"),
        ("TV room with a sofa", "TV room with a sofa"),
        ("McKinley's study", "McKinley's study"),
        ("I see a room", "I see a room"),
        ("a bedroom", "a bedroom"),
        ("Über-modern kitchen", "über-modern kitchen"),
        ("3 chairs", "3 chairs"),
    ],
)
def test_embed_prompt(prompt, embedded):
    assert embed_prompt(prompt) == embedded
    assert realize(IDENTITY_TEMPLATE_ID, prompt) == prompt


def test_realize_examples():
    assert realize("an.-.image.about.a-scene", "a bedroom") == "An image about a scene: a bedroom"
    assert (
        realize("-.bird-eye.photo.depicting.scene", "a den")
        == "Bird-eye photo depicting scene: a den"
    )
    # braces in the prompt are not format fields
    assert realize(DEFAULT_TEMPLATE_ID, "{x} room") == "A top-down view of {x} room"


@pytest.mark.parametrize(
    "bad", ["", "a.top-down.view.about.-", "A top-down view of {prompt}", None, 3]
)
def test_unknown_template_is_protocol_error(bad):
    with pytest.raises(ProtocolError, match="unknown caption template"):
        get_template(bad)


@pytest.mark.parametrize("prompt", ["", "   ", None])
def test_realize_rejects_empty_prompt(prompt):
    with pytest.raises(ProtocolError, match="cannot realize"):
        realize(DEFAULT_TEMPLATE_ID, prompt)


def _mutated(fn) -> dict:
    data = copy.deepcopy(_grammar_data())
    fn(data)
    return data


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(schema="other"), "grammar"),
        (lambda d: d.update(slots=["noun", "article"]), "slots must be"),
        (lambda d: d["edges"]["of"].append("view"), "does not move forward"),
        (lambda d: d["edges"]["a"].append("a"), "does not move forward"),
        (lambda d: d["edges"]["an"].append("nowhere"), "unknown node"),
        (lambda d: d["edges"].update(ghost=["PROMPT"]), "unknown node"),
        (lambda d: d["nodes"].update(lonely={"slot": "noun", "text": "sketch"}), "no START"),
        (lambda d: d["nodes"]["view"].update(slot="verb"), "known 'slot'"),
        (lambda d: d["edges"]["a"].append("top-down"), "without repeats"),
    ],
)
def test_malformed_grammar_is_protocol_error(mutate, message):
    with pytest.raises(ProtocolError, match=message):
        parse_grammar(_mutated(mutate))


def test_duplicate_text_is_rejected():
    def dup(d):
        d["nodes"]["scene2"] = {"slot": "frame", "text": "scene:"}
        d["edges"]["of"].append("scene2")
        d["edges"]["scene2"] = ["PROMPT"]

    with pytest.raises(ProtocolError, match="same"):
        enumerate_templates(parse_grammar(_mutated(dup)))
