"""``t3d-audit evaluators`` and ``t3d-audit score`` (the judge over loopback: no torch needed)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from PIL import Image

from harness.cli import main
from harness.evaluators import builders, catalogue, registry
from harness.protocol.records import read_records
from tests._extras import need

KEY = "sk-cli-SECRET-abcdef"


def test_listing_is_offline_fast_and_complete(tmp_path):
    env = {"HF_HUB_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "harness", "evaluators", "--json"],
        capture_output=True, text=True, check=True, env=env, cwd=str(tmp_path.parent),
    )  # fmt: skip
    rows = json.loads(out.stdout)
    ids = [r["id"] for r in rows]
    assert ids[:20] == [s.id for s in catalogue.builtin_specs()]
    assert all(r["weights_available"] is False for r in rows[:20])
    for row in rows:
        assert {"family", "model_name", "checkpoint", "preprocessing", "score_scale",
                "instruction", "decoding", "needs_text", "identity_hash"} <= set(row)  # fmt: skip
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines()}
    assert not imported & {"torch", "open_clip", "transformers", "httpx"}


def test_text_listing_and_patterns(capsys):
    assert main(["evaluators", "clip-vit-*"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == [
        "clip-vit-b32", "clip-vit-b16", "clip-vit-l14", "clip-vit-l14-336"
    ]  # fmt: skip
    assert main(["evaluators", "nope-*"]) == 2
    assert "no evaluator matches" in capsys.readouterr().err


class Rater(BaseHTTPRequestHandler):
    """Rates by caption: 'fail' -> HTTP 500, otherwise len(caption) as the rating."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][0]["content"][0]["text"]
        caption = text.split('Description: "', 1)[1].split('"\n', 1)[0]
        if caption == "fail":
            payload, status = b"{}", 500
        else:
            content = json.dumps({"rating": min(len(caption), 100)})
            payload = json.dumps({"model": "gpt-4o-2024-11-20", "choices": [
                {"message": {"content": content}}]}).encode()  # fmt: skip
            status = 200
        self.send_response(status)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def judge_id(monkeypatch):
    """A hosted-judge evaluator against a local fake server (its client needs httpx)."""
    need("httpx")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Rater)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    monkeypatch.setenv("T3D_CLI_KEY", KEY)
    spec = builders.judge_spec(
        "cli-judge", "gpt-4o-2024-11-20", base_url=f"http://127.0.0.1:{httpd.server_address[1]}",
        api_key_env="T3D_CLI_KEY", max_retries=0, timeout_s=5.0,
    )  # fmt: skip
    registry.register(spec, replace=True)
    yield spec.id
    registry.unregister(spec.id)
    httpd.shutdown()
    httpd.server_close()


def write_images(folder, n=3):
    folder.mkdir()
    for i in range(n):
        Image.fromarray(np.full((6, 6, 3), 40 * i, np.uint8)).save(folder / f"im{i}.png")


def test_score_writes_records_with_failures_and_uses_cache(tmp_path, judge_id, capsys):
    write_images(tmp_path / "imgs")
    captions = tmp_path / "captions.json"
    captions.write_text(json.dumps({"im0.png": ["a bed", "fail"], "im1.png": "a kitchen table"}))
    out = tmp_path / "out.csv"
    args = ["score", "--evaluator", judge_id, "--images", str(tmp_path / "imgs"),
            "--captions", str(captions), "--out", str(out), "--cache-dir", str(tmp_path / "c")]
    assert main(args) == 0
    df = read_records(out)
    assert list(df["caption"]) == ["a bed", "fail", "a kitchen table"]
    assert list(df["status"]) == ["ok", "failed", "ok"]
    assert list(df["score"][[0, 2]]) == [5.0, 15.0]
    assert math.isnan(df["score"][1]) and "HTTP 500" in df["error"][1]
    assert set(df["factor"]) == {"baseline"} and set(df["level"]) == {"c0"}
    assert list(df["prompt_id"]) == ["im0", "im0", "im1"]
    assert KEY not in out.read_text() and KEY not in capsys.readouterr().out
    assert any((tmp_path / "c" / "scores").rglob("*.json"))
    assert list(df["served_model"]) == ["gpt-4o-2024-11-20", "", "gpt-4o-2024-11-20"]
    assert main(args) == 0  # the ok pairs now come from the cache, with their served model
    assert list(read_records(out)["served_model"]) == list(df["served_model"])


def test_score_prints_progress_on_stderr(tmp_path, judge_id, capsys, monkeypatch):
    # regression: scoring many records printed nothing until the summary line
    monkeypatch.setenv("T3D_AUDIT_PROGRESS_INTERVAL", "0.001")
    write_images(tmp_path / "imgs")
    captions = tmp_path / "captions.json"
    captions.write_text(json.dumps({"im0.png": ["a bed", "a lamp"], "im1.png": "a kitchen table"}))
    assert main(["score", "--evaluator", judge_id, "--images", str(tmp_path / "imgs"), "--captions",
                 str(captions), "--out", str(tmp_path / "out.csv"), "--no-cache"]) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert captured.err.splitlines()[-1].startswith(f"{judge_id}: scored 3/3 records (100%), ")
    assert "scored" not in captured.out  # stdout keeps the summary alone


def test_score_csv_captions_with_record_columns(tmp_path, judge_id):
    write_images(tmp_path / "imgs", 1)
    captions = tmp_path / "caps.csv"
    captions.write_text("image,caption,generator,prompt_id,factor,level\n"
                        "im0.png,a lamp,holodeck,p07,background,red\n")  # fmt: skip
    out = tmp_path / "r.csv"
    assert main(["score", "--evaluator", judge_id, "--images", str(tmp_path / "imgs"),
                 "--captions", str(captions), "--out", str(out), "--no-cache"]) == 0  # fmt: skip
    row = read_records(out).iloc[0]
    assert (row.generator, row.prompt_id, row.factor, row.level) == (
        "holodeck", "p07", "background", "red"
    )  # fmt: skip


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "'image' file name"),
        ('{"im0.png": [3]}', "'caption' string"),
        ("{not json", "not JSON"),
        ('{"missing.png": "x"}', "image not found"),
        ("[]", "no images"),
    ],
)
def test_bad_captions_file_is_a_clear_error(tmp_path, judge_id, capsys, content, message):
    write_images(tmp_path / "imgs", 1)
    captions = tmp_path / "caps.json"
    captions.write_text(content)
    code = main(["score", "--evaluator", judge_id, "--images", str(tmp_path / "imgs"),
                 "--captions", str(captions), "--out", str(tmp_path / "o.csv")])  # fmt: skip
    assert code == 2
    assert message in capsys.readouterr().err
