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

from harness.errors import EvaluatorError
from harness.evaluators import judge, registry
from tests._net_helpers import loopback_only  # noqa: F401  (autouse: loopback only)

KEY = "sk-test-SECRET-0123456789abcdef"
MODEL_REPORTED = "gpt-4o-2024-11-20"


class Script:
    """A queue of canned behaviours; each request pops the next (the last one repeats)."""

    def __init__(self):
        self.steps: list[dict] = []
        self.requests: list[dict] = []
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
        status = step.get("status", 200)
        payload = step.get("body", ok_body(step.get("rating", 50)))
        self.send_response(status)
        for k, v in step.get("headers", {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(payload)


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
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", KEY)

    def factory(**overrides):
        spec = registry.judge_spec(
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


def test_key_echoed_by_server_is_scrubbed(server, make):
    server.steps = [{"status": 401, "body": f'{{"error": "invalid key {KEY}"}}'.encode()}]
    (res,) = make().score([IMAGE], ["x"])
    assert res.status == "failed" and "***" in res.error
    assert_no_key(res.error, res)


def test_connection_refused_is_a_failure_and_never_leaks(monkeypatch, sleeps):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", KEY)
    spec = registry.judge_spec(
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
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", KEY)
    spec = registry.judge_spec("badurl", "gpt-4o-2024-11-20", base_url="nota://url",
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
