"""Hosted judge client against a real HTTP server on 127.0.0.1 with injected faults."""

from __future__ import annotations

import contextlib
import json
import math
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.errors import EvaluatorError
from harness.evaluators import builders, judge, judge_settings, registry
from tests import _key_forms as key_forms
from tests._extras import need
from tests._net_helpers import loopback_only  # noqa: F401  (autouse: loopback only)

KEY = "sk-test-SECRET-0123456789abcdef"
MODEL_REPORTED = "gpt-4o-2024-11-20"


class Script:
    """A queue of canned behaviours; each request pops the next (the last one repeats)."""

    def __init__(self):
        self.steps: list[dict] = []
        self.requests: list[dict] = []
        self.sent: list[int] = []
        self.lock = threading.Lock()

    def next(self) -> dict:
        with self.lock:
            return self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]


def ok_body(rating, model=MODEL_REPORTED, content=None):
    text = content if content is not None else json.dumps({"rating": rating})
    return json.dumps(
        {"id": "x", "model": model, "choices": [{"index": 0, "message": {"role": "assistant",
         "content": text}, "finish_reason": "stop"}]}
    ).encode()  # fmt: skip


class Handler(BaseHTTPRequestHandler):
    script: Script

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        step = self.script.next()
        with self.script.lock:
            self.script.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
            )
        if step.get("sleep"):
            time.sleep(step["sleep"])
        if step.get("trickle"):
            return self.trickle(step)
        if step.get("big"):
            return self.big(step)
        status = step.get("status", 200)
        payload = step.get("body", ok_body(step.get("rating", 50)))
        self.send_response(status, step.get("reason"))
        for k, v in step.get("headers", {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(payload)

    def trickle(self, step):
        """One byte every ``interval`` s for ``seconds`` s: in the status line or in the body."""
        interval, seconds = step["trickle"]
        head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
        data = head + b" " * 100000 if step.get("in_headers") else head
        sent, start = 0, time.monotonic()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if not step.get("in_headers"):
                self.wfile.write(head)
                self.wfile.flush()
                data = b" " * 100000
            while time.monotonic() - start < seconds and sent < len(data):
                self.wfile.write(data[sent : sent + 1])
                self.wfile.flush()
                sent += 1
                time.sleep(interval)
        self.close_connection = True

    def big(self, step):
        """``big`` bytes of body in 64 KiB writes (one buffer, reused); counts what was sent."""
        size, block = step["big"], b"x" * 65536
        self.send_response(step.get("status", 500))
        if step.get("length", True):
            self.send_header("Content-Length", str(size))
        self.send_header("Connection", "close")
        self.end_headers()
        sent = 0
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            while sent < size:
                self.wfile.write(block)
                sent += len(block)
        with self.script.lock:
            self.script.sent.append(sent)
        self.close_connection = True


@pytest.fixture
def server():
    script = Script()
    handler = type("H", (Handler,), {"script": script})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    script.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield script
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def make(server, sleeps, monkeypatch):
    need("httpx")  # the judge's client
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", KEY)

    def factory(**overrides):
        spec = builders.judge_spec(
            "test-judge", "gpt-4o-2024-11-20", base_url=server.base_url,
            api_key_env="T3D_TEST_JUDGE_KEY", timeout_s=overrides.pop("timeout_s", 2.0),
            max_retries=overrides.pop("max_retries", 3), backoff_base_s=0.5, backoff_max_s=8.0,
            max_concurrency=overrides.pop("max_concurrency", 1),
        )  # fmt: skip
        return judge.build(spec, sleep=sleeps.append)

    return factory


IMAGE = np.zeros((8, 8, 3), np.uint8)


def assert_no_key(*texts):
    for text in texts:
        assert KEY not in str(text)


def test_ok_rating_request_shape_and_model_recorded(server, make):
    server.steps = [{"rating": 87}]
    ev = make()
    (res,) = ev.score([IMAGE], ["a bedroom with a bed"])
    assert res.status == "ok" and res.score == 87.0
    assert res.metadata["model"] == MODEL_REPORTED
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["auth"] == f"Bearer {KEY}"
    body = req["body"]
    assert body["model"] == "gpt-4o-2024-11-20"
    assert body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    text, image = body["messages"][0]["content"]
    assert '"a bedroom with a bed"' in text["text"] and "{text}" not in text["text"]
    assert image["image_url"]["url"].startswith("data:image/png;base64,")
    assert_no_key(res, repr(ev), repr(ev.client))


def test_429_with_retry_after_is_respected_then_succeeds(server, make, sleeps):
    server.steps = [
        {"status": 429, "headers": {"Retry-After": "3"}, "body": b'{"error": "slow down"}'},
        {"rating": 40},
    ]
    (res,) = make().score([IMAGE], ["x"])
    assert res.status == "ok" and res.score == 40.0
    assert sleeps == [3.0]
    assert res.metadata["attempts"] == "2"


def test_500s_back_off_exponentially_and_give_up_as_failed(server, make, sleeps):
    server.steps = [{"status": 500, "body": b"internal"}]
    (res,) = make(max_retries=3).score([IMAGE], ["x"])
    assert res.status == "failed" and math.isnan(res.score)
    assert "gave up after 4 attempts" in res.error and "HTTP 500" in res.error
    assert sleeps == [0.5, 1.0, 2.0]
    assert len(server.requests) == 4


def test_timeout_is_retried_and_reported(server, make, sleeps):
    server.steps = [{"sleep": 1.0, "rating": 10}]
    (res,) = make(timeout_s=0.2, max_retries=1).score([IMAGE], ["x"])
    assert res.status == "failed"
    assert "timeout" in res.error
    assert sleeps == [0.5]


def test_timeout_then_success(server, make):
    server.steps = [{"sleep": 1.0, "rating": 10}, {"rating": 64}]
    (res,) = make(timeout_s=0.3, max_retries=2).score([IMAGE], ["x"])
    assert res.status == "ok" and res.score == 64.0


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "not JSON"),
        (json.dumps({"model": MODEL_REPORTED, "choices": []}).encode(), "no choices"),
        (ok_body(None, content="The rating is 80."), "not strict JSON"),
        (ok_body(None, content='{"score": 80}'), "no 'rating'"),
        (ok_body(None, content='{"rating": "80"}'), "not an integer"),
        (ok_body(None, content='{"rating": 80.5}'), "not an integer"),
        (ok_body(None, content='{"rating": true}'), "not an integer"),
        (ok_body(101), "outside [0, 100]"),
        (ok_body(-1), "outside [0, 100]"),
        (ok_body(50, model=""), "no model id"),
    ],
)
def test_malformed_and_out_of_range_responses_fail_without_retry(server, make, body, reason):
    server.steps = [{"body": body}]
    (res,) = make().score([IMAGE], ["x"])
    assert res.status == "failed" and math.isnan(res.score)
    assert reason in res.error
    assert len(server.requests) == 1


def test_zero_is_a_valid_rating_not_a_failure(server, make):
    server.steps = [{"rating": 0}]
    (res,) = make().score([IMAGE], ["x"])
    assert res.status == "ok" and res.score == 0.0


def test_client_error_is_not_retried(server, make):
    server.steps = [{"status": 400, "body": b'{"error": "bad request"}'}]
    (res,) = make().score([IMAGE], ["x"])
    assert res.status == "failed" and "HTTP 400" in res.error
    assert len(server.requests) == 1


def test_key_echoed_by_server_never_reaches_the_record(server, make):
    server.steps = [{"status": 401, "body": f'{{"error": "invalid key {KEY}"}}'.encode()}]
    (res,) = make().score([IMAGE], ["x"])
    # the status code and its standard phrase, nothing of the body
    assert res.status == "failed" and res.error == "HTTP 401 Unauthorized"
    assert_no_key(res.error, res)


def test_connection_refused_is_a_failure_and_never_leaks(monkeypatch, sleeps):
    need("httpx")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", KEY)
    spec = builders.judge_spec(
        "dead", "gpt-4o-2024-11-20", base_url=f"http://127.0.0.1:{port}/v1",
        api_key_env="T3D_TEST_JUDGE_KEY", max_retries=1, backoff_base_s=0.01,
    )  # fmt: skip
    (res,) = judge.build(spec, sleep=sleeps.append).score([IMAGE], ["x"])
    assert res.status == "failed" and "request error" in res.error
    assert_no_key(res.error)


def test_missing_key_is_a_clear_error_without_value(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EvaluatorError, match=r"\$OPENAI_API_KEY"):
        registry.get("gpt4o-judge").build()


def test_secret_never_renders():
    secret = judge.Secret(KEY)
    rendered = [repr(secret), str(secret), f"{secret}", f"{secret!r}", f"{secret}"]
    assert_no_key(*rendered)
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(secret)
    try:
        raise RuntimeError(f"failed with {secret}")
    except RuntimeError as exc:
        assert_no_key(str(exc), repr(exc))


def test_concurrent_scoring_keeps_order(server, make):
    server.steps = [{"rating": 33}]
    ev = make(max_concurrency=4)
    results = ev.score([IMAGE] * 6, [f"c{i}" for i in range(6)])
    assert [r.score for r in results] == [33.0] * 6
    assert len(server.requests) == 6


def test_retry_after_http_date():
    now = 1_000_000.0
    date = "Mon, 12 Jan 1970 13:46:45 GMT"  # 1_000_005 s after the epoch
    assert judge.retry_after_seconds(date, now=now) == pytest.approx(5.0)
    assert judge.retry_after_seconds("2.5") == 2.5
    assert judge.retry_after_seconds("soon") is None
    assert judge.retry_after_seconds(None) is None


def test_pair_mismatch_is_an_error(server, make):
    with pytest.raises(EvaluatorError, match="1 images but 2 captions"):
        make().score([IMAGE], ["a", "b"])


def test_invalid_base_url_is_a_failed_record(monkeypatch):
    need("httpx")
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", KEY)
    spec = builders.judge_spec("badurl", "gpt-4o-2024-11-20", base_url="nota://url",
                               api_key_env="T3D_TEST_JUDGE_KEY", max_retries=0)  # fmt: skip
    (res,) = judge.build(spec).score([IMAGE], ["x"])
    assert res.status == "failed" and "request error" in res.error
    assert_no_key(res.error)


@given(st.one_of(st.integers(-1000, 1000), st.floats(allow_nan=False), st.text(max_size=5),
                 st.booleans(), st.none()))  # fmt: skip
def test_parse_accepts_exactly_integers_in_range(rating):
    body = ok_body(None, content=json.dumps({"rating": rating}))
    valid = isinstance(rating, int) and not isinstance(rating, bool) and 0 <= rating <= 100
    if valid:
        assert judge.parse_response(body) == (rating, MODEL_REPORTED)
    else:
        with pytest.raises(judge.ParseError):
            judge.parse_response(body)


@given(st.binary(max_size=200))
def test_parse_never_crashes_on_garbage(data):
    with contextlib.suppress(judge.ParseError):
        judge.parse_response(data)


# ----------------------------------------------------------------------------- hardening


def leaked_fragments(text: str, key: str = KEY) -> list[str]:
    """Every run of 8+ characters of ``key`` (case-insensitive) found in ``text``."""
    width = min(judge.MIN_FRAGMENT, len(key))
    low, k = text.lower(), key.lower()
    return [k[i : i + width] for i in range(len(k) - width + 1) if k[i : i + width] in low]


@pytest.mark.parametrize(
    ("prefix", "echo"),
    [
        ("x" * 185, KEY),  # the old 200-character cut kept the first 15 characters of the key
        ("invalid key ", KEY.upper()),  # an upper-cased echo passed the exact-match scrub
        ("key was ", KEY[3:20].swapcase()),  # a fragment in another case
    ],
    ids=["cut-at-200", "upper-case", "fragment"],
)
def test_key_fragments_in_error_bodies_never_reach_the_record(server, make, prefix, echo):
    server.steps = [{"status": 401, "body": f'{{"error": "{prefix}{echo} rejected"}}'.encode()}]
    (res,) = make().score([IMAGE], ["x"])
    assert res.status == "failed" and res.error == "HTTP 401 Unauthorized"
    assert leaked_fragments(res.error) == []


def test_exception_text_is_scrubbed_case_insensitively(server, make, monkeypatch):
    def explode(image):
        raise RuntimeError(f"cannot encode for {KEY.upper()}")

    monkeypatch.setattr(judge, "png_data_url", explode)
    (res,) = make().score([IMAGE], ["x"])
    assert res.status == "failed" and "request build failed" in res.error
    assert leaked_fragments(res.error) == [] and "***" in res.error


KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"


def client_state() -> dict:
    """The attributes of a plain client (built once; its construction needs httpx)."""
    if not _CLIENT:
        need("httpx")
        client = judge.JudgeClient(judge.JudgeSettings("m", "http://127.0.0.1:9", "{text}"), judge.Secret("k"))
        _CLIENT.update(client.__dict__)
    return _CLIENT


_CLIENT: dict = {}


@st.composite
def key_and_text(draw):
    key = draw(st.text(KEY_ALPHABET, min_size=8, max_size=80))  # API keys are longer still
    pieces = []
    for _ in range(draw(st.integers(0, 6))):
        pieces.append(draw(st.text(KEY_ALPHABET + " :{}\"'\n", max_size=60)))
        i = draw(st.integers(0, len(key) - 1))
        j = draw(st.integers(i + 1, len(key)))
        fragment = key[i:j]
        case = draw(st.sampled_from(["same", "upper", "lower", "swap", "mixed"]))
        if case == "mixed":
            flips = draw(st.lists(st.booleans(), min_size=len(fragment), max_size=len(fragment)))
            fragment = "".join(c.upper() if f else c.lower() for c, f in zip(fragment, flips, strict=True))
        else:
            fragment = {"same": fragment, "upper": fragment.upper(), "lower": fragment.lower(),
                        "swap": fragment.swapcase()}[case]  # fmt: skip
        pieces.append(fragment)
    pieces.append(draw(st.text(KEY_ALPHABET + " ", max_size=60)))
    return key, "".join(pieces)


@given(key_and_text())
def test_no_key_fragment_survives_scrub_and_truncation(case):
    key, text = case
    scrubbed = judge.Secret(key).scrub(text)
    assert leaked_fragments(scrubbed, key) == []
    client = judge.JudgeClient.__new__(judge.JudgeClient)
    client.__dict__.update(client_state(), _key=judge.Secret(key))
    for reason in (text, "x" * 190 + text, "HTTP 500: " + text * 3):
        stored = client.failed(reason, 1).error
        assert leaked_fragments(stored, key) == []
        assert len(stored) <= judge.REASON_LIMIT


def test_scrub_masks_exactly_the_key_runs():
    secret = judge.Secret("sk-ABCDEFGH-12345678")
    assert secret.scrub("a sk-abcdefgh-12345678 b") == "a *** b"
    assert secret.scrub("x ABCDEFGH y 1234567 z") == "x *** y 1234567 z"  # 7 characters stay
    assert secret.scrub("defgh-12 and gh-12345") == "*** and ***"
    assert judge.Secret("abc").scrub("xABCx abx") == "x***x abx"  # a short key: the whole key


def client_for(server, **settings) -> judge.JudgeClient:
    need("httpx")
    return judge.JudgeClient(
        judge.JudgeSettings("gpt-4o-2024-11-20", server.base_url, "{text}", **settings),
        judge.Secret(KEY),
        sleep=lambda s: None,
    )


@pytest.mark.parametrize("length", [True, False], ids=["content-length", "until-close"])
def test_oversized_body_is_not_read_past_the_cap(server, length):
    import re
    import tracemalloc

    cap, size = 1 << 20, 64 << 20
    server.steps = [{"big": size, "status": 500, "length": length}]
    client = client_for(server, max_response_bytes=cap, max_retries=3, timeout_s=20.0)
    tracemalloc.start()
    try:
        res = client.rate(IMAGE, "x")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        client.close()
    assert res.status == "failed" and f"response body exceeds {cap} bytes" in res.error
    read = int(re.search(r"read (\d+)", res.error).group(1))
    assert read <= cap + 65536  # at most one chunk past the cap
    assert res.metadata["attempts"] == "1"  # not retried
    assert peak < 8 << 20, f"peak traced memory {peak / 2**20:.1f} MiB"
    deadline = time.monotonic() + 5
    while not server.sent and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.sent and server.sent[0] < size  # the client hung up early


def test_body_at_the_cap_is_read(server):
    body = ok_body(77)
    server.steps = [{"body": body}]
    client = client_for(server, max_response_bytes=len(body))
    try:
        res = client.rate(IMAGE, "x")
    finally:
        client.close()
    assert res.status == "ok" and res.score == 77.0


@pytest.mark.parametrize("in_headers", [False, True], ids=["body", "status-line"])
def test_timeout_is_a_deadline_for_the_whole_request(server, make, sleeps, in_headers):
    server.steps = [{"trickle": (0.05, 6.0), "in_headers": in_headers}]
    start = time.monotonic()
    (res,) = make(timeout_s=1.0, max_retries=0).score([IMAGE], ["x"])
    elapsed = time.monotonic() - start
    assert res.status == "failed" and "timeout" in res.error
    assert elapsed < 1.0 + 0.5, f"took {elapsed:.2f} s"


def test_duplicate_keys_are_rejected(server, make):
    dup_content = ok_body(None, content='{"rating": 1000, "rating": 50}')
    dup_model = b'{"model": "a", "model": "b", "choices": [{"message": {"content": "{\\"rating\\": 5}"}}]}'
    for body, where in ((dup_content, "content JSON has the key 'rating' twice"),
                        (dup_model, "response JSON has the key 'model' twice")):  # fmt: skip
        server.steps = [{"body": body}]
        (res,) = make().score([IMAGE], ["x"])
        assert res.status == "failed" and where in res.error


@pytest.mark.parametrize("base_url", ["nota://url/v1", "ftp://127.0.0.1/v1", "http://[::1/v1"])
def test_errors_that_cannot_succeed_are_not_retried(monkeypatch, sleeps, base_url):
    need("httpx")
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", KEY)
    spec = builders.judge_spec("badurl", "gpt-4o-2024-11-20", base_url=base_url,
                               api_key_env="T3D_TEST_JUDGE_KEY", max_retries=3)  # fmt: skip
    (res,) = judge.build(spec, sleep=sleeps.append).score([IMAGE], ["x"])
    assert res.status == "failed" and "not retried" in res.error
    assert res.metadata["attempts"] == "1" and sleeps == []


def test_connection_errors_are_still_retried(monkeypatch, sleeps):
    need("httpx")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", KEY)
    spec = builders.judge_spec(
        "dead", "gpt-4o-2024-11-20", base_url=f"http://127.0.0.1:{port}/v1",
        api_key_env="T3D_TEST_JUDGE_KEY", max_retries=2, backoff_base_s=0.01,
    )  # fmt: skip
    (res,) = judge.build(spec, sleep=sleeps.append).score([IMAGE], ["x"])
    assert "gave up after 3 attempts" in res.error and len(sleeps) == 2


@pytest.mark.parametrize("status", [408, 409, 429, 500, 503, 599])
def test_retry_statuses_are_retried(server, make, sleeps, status):
    server.steps = [{"status": status, "body": b"{}"}, {"rating": 9}]
    (res,) = make().score([IMAGE], ["x"])
    assert res.status == "ok" and len(sleeps) == 1


def _documented_defaults() -> dict[str, str]:
    import re
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[1] / "docs" / "evaluators.md").read_text()
    section = docs.split("## Hosted judge contract")[1].split("\n## ")[0]
    defaults = " ".join(section.split("Defaults (")[1].split())
    return dict(re.findall(r"`(\w+)=([^`]+)`", defaults))


def test_judge_settings_are_the_one_source_of_the_judge_defaults():
    from dataclasses import fields

    defaults = {f.name: f.default for f in fields(judge_settings.JudgeSettings)}
    # the docs list every default except the model (required) and the instruction (long)
    documented = _documented_defaults()
    assert set(documented) == set(defaults) - {"model", "instruction"}
    for name, text in documented.items():
        assert type(defaults[name])(text) == defaults[name], name
    # judge_spec records them, and a spec without options reads them back
    spec = builders.judge_spec("d", "gpt-4o-2024-11-20")
    assert dict(spec.options) == {
        k: v for k, v in defaults.items() if k in judge_settings.IDENTITY_OPTIONS
    }
    bare = spec.with_changes(options=())
    expected = judge_settings.JudgeSettings("gpt-4o-2024-11-20", instruction=spec.instruction)
    assert judge_settings.JudgeSettings.from_spec(bare) == expected
    assert judge_settings.JudgeSettings.from_spec(spec) == expected
    assert spec.instruction == judge_settings.JUDGE_INSTRUCTION


def test_judge_spec_overrides_reach_the_client_settings():
    spec = builders.judge_spec(
        "o", "m-1", base_url="http://127.0.0.1:9/v1/", api_key_env="K", max_tokens=7,
        timeout_s=3.0, max_retries=1, backoff_base_s=0.5, backoff_max_s=2.0, max_concurrency=2,
    )  # fmt: skip
    got = judge_settings.JudgeSettings.from_spec(spec)
    assert (got.base_url, got.api_key_env, got.max_tokens, got.timeout_s, got.max_retries) == (
        "http://127.0.0.1:9/v1", "K", 7, 3.0, 1
    )
    assert (got.backoff_base_s, got.backoff_max_s, got.max_concurrency) == (0.5, 2.0, 2)
    assert spec.decoding.startswith("temperature=0; max_tokens=7; n=1;")


@pytest.mark.parametrize("status", [201, 301, 302, 400, 404, 451])
def test_other_statuses_fail_at_once(server, make, sleeps, status):
    # redirects are not followed and a 2xx other than 200 is not the contract: no retry
    server.steps = [
        {"status": status, "body": b"{}", "headers": {"Location": "http://127.0.0.1:9/x"}},
        {"rating": 9},
    ]
    (res,) = make().score([IMAGE], ["x"])
    assert res.status == "failed" and f"HTTP {status}" in res.error
    assert len(server.requests) == 1 and sleeps == []

def test_docs_state_the_retry_statuses_of_the_code():
    from pathlib import Path

    text = judge_settings.retry_status_text()
    assert text == "HTTP 408, 409, 429 and 5xx"
    assert text in " ".join(judge.__doc__.split())
    docs = (Path(__file__).resolve().parents[1] / "docs" / "evaluators.md").read_text()
    section = " ".join(docs.split("## Hosted judge contract")[1].split("\n## ")[0].split())
    assert text in section
    assert "any other HTTP status" in section and "fail at once" in section
    assert text in registry.get("gpt4o-judge").decoding  # the card's decoding field


@given(st.text(max_size=40))
def test_retry_after_never_raises(value):
    seconds = judge.retry_after_seconds(value)
    assert seconds is None or seconds >= 0


# ----------------------------------------------------------------------------- key echoes


@pytest.fixture
def make_live(server, sleeps, monkeypatch):
    """A judge whose key is :data:`tests._key_forms.KEY`."""
    need("httpx")  # the judge's client
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", key_forms.KEY)

    def factory():
        spec = builders.judge_spec(
            "echo-judge", "gpt-4o-2024-11-20", base_url=server.base_url,
            api_key_env="T3D_TEST_JUDGE_KEY", timeout_s=2.0, max_retries=1, backoff_base_s=0.01,
        )  # fmt: skip
        return judge.build(spec, sleep=sleeps.append)

    return factory


FORMS = key_forms.forms()


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_served_model_id_echoing_the_key_is_never_stored(server, make_live, form):
    server.steps = [{"body": ok_body(61, model=FORMS[form])}]
    (res,) = make_live().score([IMAGE], ["x"])
    assert res.status == "ok" and res.score == 61.0  # the rating still counts
    assert res.metadata["model"] == "unrecognised model id"
    assert key_forms.found(repr(res)) == []


@pytest.mark.parametrize("model", ["gpt-4o (sk-Live-1234)", "gpt 4o", "gpt-4o\n", "x" * 101,
                                   "<img src=x onerror=alert(1)>", "gpt-4o\u200b", "ｇｐｔ"])  # fmt: skip
def test_a_served_model_id_outside_the_pattern_is_not_stored(server, make_live, model):
    server.steps = [{"body": ok_body(5, model=model)}]
    (res,) = make_live().score([IMAGE], ["x"])
    assert res.status == "ok" and res.metadata["model"] == "unrecognised model id"


@pytest.mark.parametrize("model", ["gpt-4o-2024-11-20", "openai/gpt-4o:2024.11", "x" * 100])
def test_a_plain_served_model_id_is_stored(server, make_live, model):
    server.steps = [{"body": ok_body(5, model=model)}]
    (res,) = make_live().score([IMAGE], ["x"])
    assert res.metadata["model"] == model


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("where", ["body", "reason-phrase", "header"])
def test_a_key_echoed_in_an_error_response_is_never_stored(server, make_live, form, where):
    echo = FORMS[form]
    step = {"status": 401, "body": b'{"error": "bad key"}'}
    if where == "body":
        step["body"] = json.dumps({"error": {"message": f"invalid key {echo}", "key": echo}}).encode()
    elif where == "header":
        step["headers"] = {"X-Echo": echo, "WWW-Authenticate": f'Bearer error="{echo}"'}
    else:
        step["reason"] = f"Unauthorized {echo}"
    server.steps = [step]
    (res,) = make_live().score([IMAGE], ["x"])
    assert res.status == "failed" and res.error == "HTTP 401 Unauthorized"
    assert key_forms.found(repr(res)) == []


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_key_echoed_in_a_broken_200_is_never_stored(server, make_live, form):
    echo = FORMS[form]
    bodies = [
        ok_body(None, content=json.dumps({"rating": echo})),  # a rating that is the key
        ok_body(None, content=f"rating for {echo}: 80"),  # content that is not JSON
        ok_body(None, content=json.dumps({"note": echo})),  # no rating
        ok_body(None, content=f'{{"{echo}": 1, "{echo}": 2}}'),  # a key named by the key, twice
        f'{{"error": "{echo}"'.encode(),  # not JSON at all
        json.dumps({"model": "gpt-4o", "choices": echo}).encode(),
    ]
    for body in bodies:
        server.steps = [{"body": body}]
        (res,) = make_live().score([IMAGE], ["x"])
        assert res.status == "failed", body
        assert key_forms.found(repr(res)) == [], (body, res.error)


def test_failure_reasons_from_the_response_are_fixed_texts(server, make_live):
    cases = {
        ok_body(None, content='{"rating": "eighty"}'): "unparsable response: rating is not an integer (a JSON string)",
        ok_body(None, content="eighty"): "unparsable response: content is not strict JSON",
        ok_body(None, content='{"x": 1, "x": 2}'): "unparsable response: content JSON has a key twice",
        ok_body(None, content='{"rating": 5, "rating": 6}'): "unparsable response: content JSON has the key 'rating' twice",
        ok_body(None, content='{"rating": 12345678901234567890}'): "unparsable response: rating is outside [0, 100]",
    }  # fmt: skip
    for body, reason in cases.items():
        server.steps = [{"body": body}]
        (res,) = make_live().score([IMAGE], ["x"])
        assert res.error == reason


def test_a_non_standard_status_is_named_by_its_code_only(server, make_live):
    server.steps = [{"status": 499, "body": key_forms.KEY.encode(), "reason": key_forms.KEY}]
    (res,) = make_live().score([IMAGE], ["x"])
    assert res.error == "HTTP 499 (non-standard status)"


@pytest.mark.parametrize("form", sorted(FORMS))
def test_secret_leaks_sees_every_form(form):
    secret = judge.Secret(key_forms.KEY)
    assert secret.leaks(f"model {FORMS[form]} served")
    assert secret.leaks(json.dumps({"m": FORMS[form]}))  # and JSON-encoded once more
    assert not secret.leaks("gpt-4o-2024-11-20")


def test_a_reason_that_still_carries_the_key_is_withheld():
    client = judge.JudgeClient.__new__(judge.JudgeClient)
    client.__dict__.update(client_state(), _key=judge.Secret(key_forms.KEY))
    for form, echo in FORMS.items():
        stored = client.failed(f"request build failed: {echo}", 1).error
        assert key_forms.found(stored) == [], form
    assert client.failed("request build failed: disk full", 1).error == "request build failed: disk full"


@given(st.text(KEY_ALPHABET, min_size=20, max_size=60),
       st.sampled_from(sorted(key_forms.forms("k" * 20))), st.text(KEY_ALPHABET + " ", max_size=30))  # fmt: skip
def test_leaks_finds_each_form_of_any_key(key, form, around):
    echo = key_forms.forms(key)[form]
    assert judge.Secret(key).leaks(around + " " + echo + " " + around)


REAL_MODEL_IDS = ["gpt-4o-2024-11-20", "gpt-4o-mini-2024-07-18", "claude-3-5-sonnet-20241022",
                  "gemini-1.5-pro-002", "meta-llama/Llama-3.2-90B-Vision-Instruct",
                  "Qwen/Qwen2-VL-72B-Instruct", "accounts/fireworks/models/llama-v3p2-90b-vision"]  # fmt: skip


@given(st.text(KEY_ALPHABET, min_size=20, max_size=60).filter(lambda k: len(set(k)) > 8))
def test_real_model_ids_are_kept_whatever_the_key(key):
    secret = judge.Secret(key)
    for model in REAL_MODEL_IDS:
        assert judge.served_model_id(model, secret) == model
