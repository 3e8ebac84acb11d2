"""Served model ids that echo the API key in an encoded, doubled, interleaved or split form are
never stored: the class of encodings, not one example each."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.ids import SERVED_MODEL_ID, UNRECOGNISED_MODEL
from harness.evaluators.judge import MAX_SERVED_IDS, served_model_id
from harness.evaluators.secrets import Secret

KEY = "sk-live-XQ7r2Lm9Pz4Kt8Vw3Yb6Nc1D"
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"


def echo_forms(key: str) -> dict[str, str]:
    """The key as a served model id (every form inside the id charset)."""
    raw = key.encode()
    b32 = base64.b32encode(raw).decode().rstrip("=")
    return {
        "base32": b32,
        "base32-lower": b32.lower(),
        "base32-reversed-key": base64.b32encode(key[::-1].encode()).decode().rstrip("="),
        "base32-in-id": f"gpt-4o/{b32[5:40]}",
        "doubled": "".join(c * 2 for c in key),
        "tripled": "".join(c * 3 for c in key),
        "doubled-reversed": "".join(c * 2 for c in key[::-1]),
        "interleaved": "".join(c + "x" for c in key),
        "interleaved-colon": ":".join(key),
        "interleaved-two": "".join(c + "/." for c in key)[:100],
        "hex-upper": raw.hex().upper()[:100],
        "hex-reversed": key[::-1].encode().hex()[:100],
        "base64url-of-reversed": base64.urlsafe_b64encode(key[::-1].encode()).decode().rstrip("="),
        "base64-odd-alignment": base64.b64encode(b"xy" + raw).decode().replace("+", "-").replace("/", "_").rstrip("="),
        "half-key": f"gpt-4o-{key[4:16]}",
        "reversed-upper": key[::-1].upper(),
        "doubled-base32": "".join(c * 2 for c in b32)[:100],
    }


FORMS = echo_forms(KEY)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_served_model_id_echoing_the_key_is_not_stored(form):
    echo = FORMS[form]
    assert SERVED_MODEL_ID.fullmatch(echo), form  # a form the pattern alone would let through
    assert served_model_id(echo, Secret(KEY)) == UNRECOGNISED_MODEL


def _client():
    import threading

    from harness.evaluators.judge import JudgeClient

    client = JudgeClient.__new__(JudgeClient)  # no HTTP: only the served-id bookkeeping
    client.__dict__.update(_key=Secret(KEY), _served_ids=[], _served_lock=threading.Lock(),
                           _served_closed=False)  # fmt: skip
    return client


@pytest.mark.parametrize("order", ["in-order", "reversed", "odd-then-even"])
@pytest.mark.parametrize("width", [3, 4, 5, 7])
@pytest.mark.parametrize("prefix", ["", "gpt-4o/", "m-"])
def test_a_key_spread_in_pieces_across_rows_is_not_stored(width, prefix, order):
    client = _client()
    pieces = [prefix + KEY[i : i + width] for i in range(0, len(KEY), width)]
    if order == "reversed":
        pieces = pieces[::-1]
    elif order == "odd-then-even":
        pieces = pieces[::2] + pieces[1::2]
    kept = [client._served_id(piece) for piece in pieces]
    stored = [k for k in kept if k != UNRECOGNISED_MODEL]
    joined = "".join(stored)
    alnum = "".join(c for c in joined if c.isalnum())
    key_alnum = "".join(c for c in KEY if c.isalnum())
    for i in range(len(key_alnum) - 7):  # no 8 consecutive key characters in what was stored
        assert key_alnum[i : i + 8] not in alnum, stored
    for piece in stored:  # no piece of 5 or more key characters; at most 4 pieces in all
        core = "".join(c for c in piece.removeprefix(prefix) if c.isalnum())
        assert not any(core[i : i + 5] in key_alnum for i in range(len(core) - 4)), stored
    assert len(stored) <= MAX_SERVED_IDS, stored


def test_only_the_first_distinct_served_ids_are_stored():
    secret = Secret(KEY)
    ids = [f"model-{i}" for i in range(MAX_SERVED_IDS + 2)]
    got = [served_model_id(m, secret, tuple(ids[:i])) for i, m in enumerate(ids)]
    assert got[:MAX_SERVED_IDS] == ids[:MAX_SERVED_IDS]
    assert got[MAX_SERVED_IDS:] == [UNRECOGNISED_MODEL] * 2
    assert served_model_id("model-0", secret, tuple(ids)) == "model-0"  # one seen before


REAL = ["gpt-4o-2024-11-20", "gpt-4o-mini-2024-07-18", "claude-3-5-sonnet-20241022",
        "gemini-1.5-pro-002", "meta-llama/Llama-3.2-90B-Vision-Instruct", "Qwen/Qwen2-VL-72B-Instruct",
        "accounts/fireworks/models/llama-v3p2-90b-vision", "gpt-4o-2024-08-06"]  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(st.text(ALPHABET, min_size=20, max_size=60).filter(lambda k: len(set(k)) > 10))
def test_real_model_ids_are_kept_alone_and_in_sequence(key):
    secret = Secret(key)
    for model in REAL:
        assert served_model_id(model, secret) == model
    for start in range(0, len(REAL), MAX_SERVED_IDS):
        stored: list[str] = []
        for model in REAL[start : start + MAX_SERVED_IDS]:
            assert served_model_id(model, secret, tuple(stored)) == model
            stored.append(model)


@settings(max_examples=40, deadline=None)
@given(st.text(ALPHABET, min_size=20, max_size=60).filter(lambda k: len(set(k)) > 10),
       st.sampled_from(sorted(echo_forms("k" * 20))))
def test_every_form_of_any_key_is_seen(key, form):
    echo = echo_forms(key)[form]
    assert Secret(key).leaks(echo)
