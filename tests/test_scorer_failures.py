"""A user Scorer's every failure is a failed record with a scrubbed reason (fast, in process;
the audit-level checks are in tests/test_scorer_misbehaviour.py)."""

from __future__ import annotations

import base64
import itertools
import math
import numbers
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import AuditError, EvaluatorError
from harness.evaluators.scorer import Scorer, ScorerEvaluator, batch_scores, build, score_value
from harness.evaluators.secrets import Secret, environment_secrets, scrub_reason

KEY = "sk-proj-Q8wErT5yUi2oPa7sDf4G"
IMAGE = np.zeros((4, 4, 3), np.uint8)


class Returns(Scorer):
    name = "returns"
    score_range = (0.0, 1.0)
    batch_size = 2

    def __init__(self, value=None, device="auto"):
        super().__init__(device)
        self.value = value
        self.closed = False

    def score_batch(self, images, texts):
        value = self.value
        return value(len(images)) if callable(value) else value

    def close(self):
        self.closed = True


def _scores(value, n=2, **kw):
    ev = ScorerEvaluator(Returns.spec(), Returns(value), 2, secrets=[Secret(KEY)], **kw)
    return ev, ev.score([IMAGE] * n, ["a"] * n)


@pytest.mark.parametrize("value", ["0.5", b"0.25", True, np.True_, None, np.array([0.5]), [0.5], {"s": 1}])
def test_a_value_that_is_not_a_real_number_fails_its_row(value):
    _, results = _scores(lambda n: [value, 0.75])
    assert results[0].status == "failed" and math.isnan(results[0].score)
    assert "not a number" in results[0].error
    assert results[1].status == "ok" and results[1].score == 0.75


@pytest.mark.parametrize("returned", [np.full((2, 1), 0.5), "05", b"\x00\x01", {"a": 0.5, "b": 0.5},
                                      0.5, [0.5], [0.5, 0.5, 0.5], iter([0.5, 0.5])])
def test_a_batch_that_is_not_a_flat_sequence_of_its_size_fails_every_row(returned):
    _, results = _scores(lambda n: returned)
    assert [r.status for r in results] == ["failed", "failed"]
    assert all(math.isnan(r.score) for r in results)


@pytest.mark.parametrize("value", [1, np.float32(0.25), np.int64(1), 0.0])
def test_python_and_numpy_numbers_are_scores(value):
    _, results = _scores(lambda n: np.array([value] * n) if isinstance(value, np.generic) else [value] * n)
    assert [r.status for r in results] == ["ok", "ok"] and results[0].score == float(value)


@pytest.mark.parametrize("exc", [SystemExit(0), SystemExit(3), GeneratorExit(), RuntimeError("x"),
                                 MemoryError(), NotImplementedError()])
def test_any_base_exception_but_keyboard_interrupt_is_a_failed_batch(exc):
    def raise_(n):
        raise exc

    ev, results = _scores(raise_, n=3)
    assert [r.status for r in results] == ["failed"] * 3
    assert type(exc).__name__ in results[0].error
    ev.close()
    assert ev.scorer.closed


def test_keyboard_interrupt_still_stops_scoring():
    def raise_(n):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _scores(raise_)


def test_a_batch_past_its_deadline_fails_and_later_batches_fail_at_once():
    release = threading.Event()

    def hang(n):
        release.wait(30)
        return [0.5] * n

    start = time.monotonic()
    ev, results = _scores(hang, n=6, deadline_s=0.2)
    took = time.monotonic() - start
    release.set()
    assert [r.status for r in results] == ["failed"] * 6
    assert "deadline of 0.2 s" in results[0].error and "earlier batch" in results[-1].error
    assert took < 5  # one deadline, not one per batch
    ev.close()
    assert not ev.scorer.closed  # never closed under a running batch


@pytest.mark.parametrize("form", ["plain", "reversed", "upper", "spaced", "in-repr"])
def test_a_reason_holding_the_key_is_scrubbed(form):
    shown = {"plain": KEY, "reversed": KEY[::-1], "upper": KEY.upper(), "spaced": " ".join(KEY),
             "in-repr": repr({"key": KEY})}[form]

    def raise_(n):
        raise RuntimeError(f"auth failed: {shown}")

    _, results = _scores(raise_)
    for r in results:
        assert KEY.lower()[3:11] not in r.error.lower().replace(" ", "")
        assert KEY[::-1].lower()[3:11] not in r.error.lower().replace(" ", "")


def test_environment_secrets_are_the_secret_looking_variables():
    env = {"MY_API_KEY": KEY, "GH_TOKEN": "ghp_abcdefgh1234", "HOME": "/home/someone-long",
           "SHORT_KEY": "abc", "db_password": "hunter2hunter2"}
    secrets = environment_secrets(env)
    text = f"{KEY} ghp_abcdefgh1234 /home/someone-long hunter2hunter2"
    assert scrub_reason(text, secrets) == "*** *** /home/someone-long ***"


@settings(max_examples=60, deadline=None)
@given(prefix=st.text(max_size=20), suffix=st.text(max_size=20), start=st.integers(0, len(KEY) - 8),
       reverse=st.booleans())
def test_no_run_of_the_key_survives_scrubbing(prefix, suffix, start, reverse):
    piece = KEY[start:]
    piece = piece[::-1] if reverse else piece
    out = scrub_reason(prefix + piece + suffix, [Secret(KEY)], 280)
    low = out.lower()
    for i in range(len(KEY) - 7):
        assert KEY[i : i + 8].lower() not in low and KEY[i : i + 8][::-1].lower() not in low


class Unbuildable(Scorer):
    name = "unbuildable-unit"

    def __init__(self, device="auto"):
        raise SystemExit(f"login with {KEY} refused")


def test_a_scorer_whose_init_raises_is_one_error_naming_it(monkeypatch):
    from harness.evaluators.scorer import add_scorer, forget_scorer

    monkeypatch.setenv("UNIT_SERVICE_API_KEY", KEY)
    spec = add_scorer(Unbuildable)
    try:
        with pytest.raises(EvaluatorError) as info:
            build(spec)
    finally:
        forget_scorer(spec.id)
    text = str(info.value)
    assert "unbuildable-unit" in text and "SystemExit" in text and KEY[:12] not in text
    assert "\n" not in text.split(" (")[0]


@pytest.mark.parametrize("raw", ["nan", "inf", "-3", "0", "abc", "1e999"])
def test_a_bad_scorer_deadline_is_an_error_naming_the_variable(monkeypatch, raw):
    monkeypatch.setenv("T3D_AUDIT_SCORER_DEADLINE", raw)
    with pytest.raises(AuditError, match="T3D_AUDIT_SCORER_DEADLINE"):
        ScorerEvaluator(Returns.spec(), Returns([0.5, 0.5]), 2)


def test_batch_scores_and_score_value_by_hand():
    assert batch_scores((1.0, 2.0), 2) == [1.0, 2.0]
    assert score_value(np.float64(0.5)) == 0.5 and isinstance(score_value("0.5"), str)


class _StrRaises(RuntimeError):
    def __str__(self):
        raise ValueError("no message")


class _LyingLength:
    """Says it holds two scores; its iterator never ends."""

    def __len__(self):
        return 2

    def __iter__(self):
        return itertools.count()


class _FloatRaises:
    def __float__(self):
        raise RuntimeError("no float")


numbers.Real.register(_FloatRaises)


def _raise(exc):
    raise exc


@pytest.mark.parametrize(("returned", "reason"), [
    (lambda n: _raise(_StrRaises()), "_StrRaises"),   # the handler must not raise in turn
    (lambda n: _LyingLength(), "3 scores for 2 rows"),  # read no further than the batch
    (lambda n: [_FloatRaises(), _FloatRaises()], "not a number (RuntimeError)"),
])
def test_held_out_misbehaviour_is_a_failed_batch_not_a_traceback_or_a_hang(returned, reason):
    """Regression: an exception whose str() raises, a sequence whose length lies
    over an endless iterator, a numbers.Real whose __float__ raises anything."""
    _, results = _scores(returned)
    assert [r.status for r in results] == ["failed", "failed"]
    assert all(reason in r.error for r in results)


def _fullwidth(text):
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@pytest.mark.parametrize("form", [
    lambda k: k.encode().hex(" "),                                # hexdump, spaced
    lambda k: k.encode().hex(":").upper(),                        # colon-separated, upper case
    lambda k: "\n".join(base64.b64encode(k.encode()).decode()[i:i + 9] for i in range(0, 40, 9)),
    lambda k: _fullwidth(k),                                      # NFKC folds it back
    lambda k: str(list(k.encode())),                              # list(key.encode())
    lambda k: str([ord(c) for c in k]),
    lambda k: "".join(f"\\{b:03o}" for b in k.encode()),          # octal escapes
    lambda k: "".join(f"\\U{ord(c):08x}" for c in k),             # \U escapes
])  # fmt: skip
def test_held_out_echo_forms_of_the_key_are_withheld(form):
    """Regression: forms a dump, a repr or a debug print writes the key in."""
    reason = scrub_reason(f"RuntimeError: auth failed: {form(KEY)}", [Secret(KEY)], 280)
    assert reason == "failure reason withheld: it carried the API key"


def test_ordinary_numbers_and_hex_in_a_reason_are_kept():
    text = "CUDA error 2 at [1, 2, 3, 4, 5, 6, 7, 8, 9] sha 0a:1b:2c:3d:4e:5f:60:71 ＡＢＣ"
    assert scrub_reason(text, [Secret(KEY)], 280) == text


@pytest.mark.parametrize("declared", [
    {"batch_size": 0},  # range(0, n, 0): a ValueError traceback at scoring
    {"batch_size": -5},  # no batch at all: three rows in, no record out
    {"batch_size": "8"}, {"batch_size": True}, {"batch_size": 10**9},
])  # fmt: skip
def test_a_batch_size_given_as_an_option_is_checked_like_the_attribute(declared):
    """Regression: the evaluator reads ``batch_size`` from its options, but only the
    class attribute was checked."""
    cls = type("Sized", (Returns,), {"name": "sized", "options": declared, "batch_size": None})
    with pytest.raises(EvaluatorError, match="batch_size must be"):
        cls.spec()


@pytest.mark.parametrize("declared", [(0.0, 1.0, 2.0), (None, 1.0), ("0", "1"), (False, True), 5])
def test_a_malformed_score_range_is_an_evaluator_error(declared):
    """Regression: a NaN range was an EvaluatorError, but three items or a None was a
    ValueError/TypeError (an INTERNALERROR from a hook) and strings or booleans were read as
    numbers."""
    cls = type("Ranged", (Returns,), {"name": "ranged", "score_range": declared})
    with pytest.raises(EvaluatorError, match="score_range must be"):
        cls.spec()


def test_an_option_integer_too_long_for_the_identity_hash_is_refused_at_declaration():
    """Regression: options={"seed": 10**5000} was accepted, then identity_hash()
    raised ValueError (over 4300 digits) wherever the evaluator was first hashed."""
    cls = type("Seeded", (Returns,), {"name": "seeded", "options": {"seed": 10**5000}})
    with pytest.raises(EvaluatorError, match="option 'seed'"):
        cls.spec()
    ok = type("Seeded2", (Returns,), {"name": "seeded2", "options": {"seed": 2**63}})
    assert ok.spec().identity_hash


class _SlowToRead:
    """Two scores, each read slowly: the hang is in reading the values, not in score_batch."""

    def __len__(self):
        return 2

    def __iter__(self):
        for _ in range(2):
            time.sleep(30)
            yield 0.5


def test_reading_the_returned_values_is_under_the_deadline_too():
    """Regression: score_batch returned at once, but iterating its result (and a user
    __float__) ran in the caller with no deadline."""
    started = time.monotonic()
    _, results = _scores(lambda n: _SlowToRead(), deadline_s=0.5)
    assert time.monotonic() - started < 10
    assert [r.status for r in results] == ["failed", "failed"]
    assert all("deadline" in r.error for r in results)
