"""The judge key carried through a whole audit: a hosted judge whose endpoint (a server on
127.0.0.1) echoes the API key in every way it can -- as the served model id in eleven forms, in
error bodies, in the status line's reason phrase, in headers, in a ``Retry-After``, in the
rating content -- is run through the tiny audit project (real audit suite, box renders), and
no form of the key appears in the records, cards, manifest, summary, report.html, any other
report or cache file, or the terminal output."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pandas as pd
import pytest

from tests import _key_forms as key_forms
from tests._audit_project import LENIENT, PYPROJECT, make_project, report_dir, run_audit

pytest.importorskip("httpx", reason="the hosted judge needs httpx (pip install -e '.[judge]')")

pytest_plugins = ["pytester"]

KEY = key_forms.KEY
FORMS = key_forms.forms()
MODEL = "gpt-4o-2024-11-20"

CONFTEST = """
import os

from harness.evaluators import builders
from harness.testing import BoxRasterizer


def pytest_audit_renderer(config, cache_dir):
    return BoxRasterizer()


def pytest_audit_evaluators(config):
    return [builders.judge_spec(
        "echo-judge", "gpt-4o-2024-11-20", base_url=os.environ["T3D_ECHO_URL"],
        api_key_env="T3D_ECHO_KEY", timeout_s=10.0, max_retries=1, backoff_base_s=0.01,
        backoff_max_s=0.01, max_concurrency=4,
    )]
"""


class Echo(BaseHTTPRequestHandler):
    """A chat-completions endpoint that answers in a fixed cycle of 16 behaviours, each echoing
    the bearer token it was sent, and counts what it served."""

    counter: ClassVar[itertools.count] = itertools.count()
    served: ClassVar[dict[str, int]] = {}
    lock: ClassVar[threading.Lock] = threading.Lock()

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        token = self.headers.get("Authorization", "").removeprefix("Bearer ")
        n = next(self.counter)
        kind = n % 16
        form = sorted(FORMS)[(n // 16) % len(FORMS)]
        echo = key_forms.forms(token)[form]
        rating = int(hashlib.sha256(body).hexdigest(), 16) % 101

        def ok(model, content=None):
            text = content if content is not None else json.dumps({"rating": rating})
            return 200, None, json.dumps({"model": model, "choices": [{"message": {"content": text}}],
                                          "note": echo}).encode()  # fmt: skip

        if kind < 5:
            status, reason, payload, what = *ok(MODEL), "ok"
        elif kind < 11:
            status, reason, payload, what = *ok(echo), "model echo"
        elif kind == 11:
            status, reason, payload, what = 401, f"Unauthorized {echo}", json.dumps(
                {"error": {"message": f"Incorrect API key provided: {echo}", "key": token}}).encode(), "401"
        elif kind == 12:
            status, reason, payload, what = 500, None, f"internal error for {token} / {echo}".encode(), "500"
        elif kind == 13:
            status, reason, payload, what = 429, echo, json.dumps({"error": echo}).encode(), "429"
        elif kind == 14:
            status, reason, payload, what = *ok(MODEL, content=f"I rate {echo} 80"), "content echo"
        else:
            status, reason, payload, what = *ok(MODEL, content=json.dumps({"rating": echo})), "rating echo"
        with self.lock:
            self.served[what] = self.served.get(what, 0) + 1
        self.send_response(status, reason)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("X-Echo-Key", token)
        self.send_header("X-Echo-Form", echo)
        self.send_header("Set-Cookie", f"session={token}")
        if status == 429:
            self.send_header("Retry-After", token)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(payload)


@pytest.fixture
def echo_server(monkeypatch):
    handler = type("H", (Echo,), {"counter": itertools.count(), "served": {}, "lock": threading.Lock()})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("T3D_ECHO_URL", f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    monkeypatch.setenv("T3D_ECHO_KEY", KEY)
    yield handler
    httpd.shutdown()
    httpd.server_close()


def _binary_forms() -> list[bytes]:
    """Byte forms of the key to look for in files that are not text (renders, caches)."""
    out = []
    for form in FORMS.values():
        for shape in (form, form.lower(), form.upper()):
            out.append(shape.encode())
    return out


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_judge_key_never_leaves_the_process_through_an_audit(pytester, echo_server, workers):
    root = make_project(pytester)
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pyproject.toml").write_text(
        PYPROJECT.format(thresholds=LENIENT).replace('evaluators = ["tiny-*"]', 'evaluators = ["echo-judge"]'))
    result = run_audit(pytester, "echo", "-n", workers, *(["--dist", "loadgroup"] if workers != "0" else []))
    terminal = result.stdout.str() + "\n" + result.stderr.str()
    report = report_dir(root, "echo")
    # the server was reached and echoed the key in every way, many times
    served = echo_server.served
    assert {"ok", "model echo", "401", "500", "429", "content echo", "rating echo"} <= set(served), served
    assert sum(served.values()) > 50
    # the audit recorded the echoes as what they are: an unrecognised model id, failures
    records = pd.read_csv(report / "scores" / "echo-judge.csv", keep_default_na=False)
    assert set(records["served_model"]) - {""} == {MODEL, "unrecognised model id"}
    errors = set(records.loc[records["status"] == "failed", "error"])
    assert "score failed: HTTP 401 Unauthorized" in errors, errors
    card = json.loads((report / "cards" / "echo-judge.json").read_text())
    assert card["evaluator_identity"]["served_models"] == [MODEL, "unrecognised model id"]
    for name in ("manifest.json", "summary.json", "report.html", "results.json"):
        assert (report / name).is_file(), name

    # no form of the key anywhere: report files as text, every other file as bytes
    checked = 0
    for folder in (root / "reports-echo", root / "cache-echo"):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                hits = [f for f in _binary_forms() if f in data]
            else:
                hits = key_forms.found(text)
            assert hits == [], f"{path.relative_to(root)}: {hits[:5]}"
            checked += 1
    assert checked > 20
    assert key_forms.found(terminal) == [], key_forms.found(terminal)[:5]
