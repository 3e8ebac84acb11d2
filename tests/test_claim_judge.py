"""A claim under a hosted judge: the real judge client against an OpenAI-compatible server on
127.0.0.1 that rates each image by how saturated it is. Every grid and search image is rated
by the server once; a warm claim asks it nothing and gives the same document; a judge that
fails every request is a claim that refuses with one line, never a score."""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from harness.claims.inputs import ClaimRequest
from harness.claims.pipeline import run_claim
from harness.core.errors import AuditError
from harness.evaluators import builders
from harness.testing import BoxRasterizer, write_tiny_scene_set
from tests._extras import need
from tests._net_helpers import loopback_only  # noqa: F401  (autouse: loopback only)

MODEL = "gpt-4o-2024-11-20"


class SaturationJudge(BaseHTTPRequestHandler):
    """Rates the request's image 0–100 by its mean saturation (max − min channel); with
    ``failing`` set, answers every request with HTTP 500."""

    requests: list[int]
    failing = False

    def log_message(self, *args):
        pass

    def do_POST(self):
        from PIL import Image

        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.requests.append(1)
        if self.failing:
            self.send_response(500)
            self.end_headers()
            return
        parts = body["messages"][-1]["content"]
        url = next(p["image_url"]["url"] for p in parts if p.get("type") == "image_url")
        image = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"), float)
        rating = round(100 * float((image.max(axis=2) - image.min(axis=2)).mean()) / 255)
        answer = {"id": "x", "model": MODEL, "choices": [{"index": 0, "finish_reason": "stop",
                  "message": {"role": "assistant", "content": json.dumps({"rating": rating})}}]}  # fmt: skip
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def judge_server():
    handler = type("Judge", (SaturationJudge,), {"requests": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def _claim(tmp_path, base_url: str):
    spec = builders.judge_spec("local-judge", MODEL, base_url=base_url, api_key_env="T3D_TEST_JUDGE_KEY",
                               timeout_s=5.0, max_retries=0, max_concurrency=2)  # fmt: skip
    scenes = write_tiny_scene_set(tmp_path / "set", ("mine", "theirs"), ("p01", "p02"))
    request = ClaimRequest("local-judge", "mine", "theirs", profile="smoke", scenes=scenes, presets="none",
                           search_budget=2, flip_points=0)  # fmt: skip
    return run_claim(request, cache_dir=tmp_path / "cache", renderer=BoxRasterizer(), offered=[spec])


def test_a_claim_under_a_hosted_judge_rates_once_and_reads_back_warm(tmp_path, judge_server, monkeypatch):
    need("httpx")  # the judge's client
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", "sk-test-0123456789")
    handler, base_url = judge_server
    result = _claim(tmp_path, base_url)
    doc = result.to_dict()
    assert doc["evaluator"] == "local-judge" and doc["generators"] == ["mine", "theirs"]
    assert doc["failed"] == {"grid": 0, "presets": 0}
    assert doc["verdict"]["line"].startswith("mine beats theirs under local-judge: ")
    assert doc["verdict"]["line"].endswith("[not confirmable: 2 prompts (needs 6)]")
    assert all(0.0 <= s["mean"] <= 100.0 for s in doc["scores"])
    asked = len(handler.requests)
    assert asked > 0
    again = _claim(tmp_path, base_url).to_dict()
    assert len(handler.requests) == asked  # every rating read back from the score cache
    assert again["verdict"] == doc["verdict"] and again["scores"] == doc["scores"]


def test_a_judge_that_fails_every_request_is_one_line_not_a_score(tmp_path, judge_server, monkeypatch):
    need("httpx")
    monkeypatch.setenv("T3D_TEST_JUDGE_KEY", "sk-test-0123456789")
    handler, base_url = judge_server
    handler.failing = True
    with pytest.raises(AuditError) as caught:
        _claim(tmp_path, base_url)
    assert "\n" not in caught.value.what and "sk-test" not in str(caught.value)
    assert len(handler.requests) > 0
    assert re.search(r"c0 could not be measured for every scene: (\d+) of \1 grid records failed \(first: .*HTTP 500",
                     str(caught.value)), caught.value  # fmt: skip
    assert str(caught.value).startswith("local-judge at c0: ")
