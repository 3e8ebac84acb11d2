"""report.html under hostile input: a report directory whose every field the page shows holds
script-injection strings (generators, prompt ids, captions, errors, results, cards, manifest,
tables, comparison, thumbnail index and file names) gives a page where each shows as text, and
Debian's chromium runs no script from them; the CSP alone stops an injected handler or script.

Evaluator ids are the one field that cannot carry such strings: a records file whose evaluator
is not an id of the documented charset is refused (the html command names the id)."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.cli import main
from harness.protocol.records import read_records, write_records
from harness.report.html import page as html_page
from harness.report.html.page import build_html
from tests._html_report import CHROMIUM, playwright_or_skip

# each payload would set window.__xss (and call alert) if it ever ran
PAYLOADS = (
    "<script>window.__xss=1;alert(1)</script>",
    '"><img src=x onerror="window.__xss=2;alert(2)">',
    "'><svg onload=window.__xss=3;alert(3)>",
    "</script><script>window.__xss=4;alert(4)</script>",
    "<!--<script>window.__xss=5;alert(5)</script>-->",
    "javascript:window.__xss=6;alert(6)",
    '<a href="javascript:window.__xss=7">x</a>',
    "<iframe srcdoc=\"<script>parent.__xss=8</script>\"></iframe>",
    "&lt;b&gt;pre-escaped&lt;/b&gt; & < > \" '",
    "<img src=x onerror=alert(document.domain)>",
)
# a payload that can be a file name (no "/")
FILE_PAYLOAD = '<!--<img src=x onerror="window.__xss=9">'


class Hostile:
    """Unique hostile strings: ``next(tag)`` gives ``H<n>:<tag>:<payload>``, cycling payloads."""

    def __init__(self):
        self.made: list[str] = []

    def __call__(self, tag: str) -> str:
        text = f"H{len(self.made)}:{tag}:{PAYLOADS[len(self.made) % len(PAYLOADS)]}"
        self.made.append(text)
        return text


def _json(path: Path) -> object:
    return json.loads(path.read_text())


def _dump(path: Path, doc: object) -> None:
    path.write_text(json.dumps(doc))


def poison(report: Path) -> list[str]:
    """Write hostile strings into every field of ``report`` that the page shows; returns them."""
    h = Hostile()
    gens: dict[str, str] = {}
    prompts: dict[str, str] = {}
    for path in sorted((report / "scores").glob("*.csv")):
        frame = read_records(path)
        for g in sorted(set(frame["generator"]) - set(gens)):
            gens[g] = h(f"generator {g}")
        for p in sorted(set(frame["prompt_id"]) - set(prompts)):
            prompts[p] = h(f"prompt {p}")
        frame["generator"] = frame["generator"].map(gens)
        frame["prompt_id"] = frame["prompt_id"].map(prompts)
        frame["caption"] = [h("caption") if i % 50 == 0 else c for i, c in enumerate(frame["caption"])]
        failed = frame["status"] == "failed"
        frame.loc[failed, "error"] = [h("error") for _ in range(int(failed.sum()))]
        write_records(frame, path)
    index = _json(report / "thumbs" / "index.json")
    index["prompts"] = [prompts.get(p, p) for p in index["prompts"]]
    for entry in index["images"]:
        entry["generator"] = gens.get(entry["generator"], entry["generator"])
        entry["prompt_id"] = prompts.get(entry["prompt_id"], entry["prompt_id"])
    with_file = [i for i in index["images"] if i.get("file")]
    # a thumbnail whose file name is hostile, and an image that failed with a hostile reason
    src = report / "thumbs" / with_file[0]["file"]
    shutil.copy(src, report / "thumbs" / f"{FILE_PAYLOAD}.jpg")
    with_file[0]["file"] = f"{FILE_PAYLOAD}.jpg"
    with_file[1]["file"] = None
    with_file[1]["error"] = h("thumbnail error")
    _dump(report / "thumbs" / "index.json", index)

    summary = _json(report / "summary.json")
    summary["evaluators"][h("summary evaluator")] = {"peak_rho": h("peak_rho"), "max_top1": h("top1")}
    # a records file named by a hostile string (its rows' evaluator ids are valid)
    first = sorted((report / "scores").glob("*.csv"))[0]
    shutil.copy(first, report / "scores" / f"{FILE_PAYLOAD}.csv")
    summary["evaluators"][FILE_PAYLOAD] = summary["evaluators"][first.stem]
    _dump(report / "summary.json", summary)

    results = _json(report / "results.json")
    results.update(run_id=h("run id"), complete=False, missing=[h("missing")])
    for r in results["results"][:3]:
        r["test"] = h("test name")
    results["results"].append({
        "test": h("test"), "evaluator": h("result evaluator"), "outcome": "failed", "message": h("message"),
        "checks": [{"metric": h("metric"), "estimate": h("estimate"), "interval": [h("lo"), h("hi")],
                    "compare": h("compare"), "tested": h("tested"), "op": h("op"), "threshold": h("threshold"),
                    "threshold_name": h("threshold name"), "card_id": h("card id"), "passed": False}],
    })  # fmt: skip
    results["results"].append({"test": h("bare test"), "evaluator": h("ev2"), "outcome": "failed",
                               "message": h("bare message"), "checks": []})  # fmt: skip
    _dump(report / "results.json", results)

    for path in sorted((report / "cards").glob("*.json")):
        card = _json(path)
        card["card_id"] = h("card_id")
        card["evaluator_identity"]["name"] = h("card name")
        card[h("card key")] = {h("nested key"): [h("list item"), {h("deep"): h("deep value")}], "n": [1.5, h("x")]}
        card["companion_check"] = {"kind": h("kind"), "details": h("details"), "agreement": {
            "pair_agreement": 0.8, "n_pairs": 10, "ranking_tau": 0.5, "winner": h("winner"),
            "companion_winner": h("companion winner"), "probes": {}}}  # fmt: skip
        _dump(path, card)
    _dump(report / "cards" / f"{FILE_PAYLOAD}.json", {"card_id": h("stray card"), "x": h("stray value")})

    manifest = _json(report / "manifest.json")
    manifest["run_id"] = h("manifest run id")
    manifest["source"] = {"revision": h("revision"), "commit": h("commit")}
    manifest["schema"] = h("schema")
    manifest["inputs"] = [{"path": h("input path"), "role": h("role"), "sha256": h("sha")}]
    manifest["packages"] = {h("package"): h("version")}
    manifest["options"][h("option")] = [h("option value"), {h("k"): h("v")}]
    _dump(report / "manifest.json", manifest)

    (report / "tables" / "hostile.csv").write_text(
        ",".join(json.dumps(h("header")) for _ in range(3)) + "\n"
        + ",".join(json.dumps(h("cell")) for _ in range(3)) + "\n"
    )
    (report / "tables" / "hostile.md").write_text(f"**{h('table title')}**\n")
    _dump(report / "comparison.json", {
        "baseline": h("baseline"), "candidate": h("candidate"), "exit_code": h("exit code"),
        "pairs": [{"baseline_evaluator": h("b ev"), "candidate_evaluator": h("c ev"), "metrics": [
            {"kind": h("kind"), "subject": h("subject"), "baseline": h("b"), "candidate": h("c"),
             "difference": h("d"), "ci": [h("ci lo"), h("ci hi")], "harmful": "increase",
             "margin": h("margin"), "verdict": h("verdict")}]}],
    })  # fmt: skip
    return h.made


# fields the page does not display (captions, a passing test's name, a failed result's message
# when its checks are listed, summary values outside the competence table, the manifest's run
# id when results.json has one, a check's `compare`: the page words it as "the bootstrap
# lower/upper bound" and never prints the raw field)
NOT_SHOWN = {"caption", "compare", "manifest run id", "message", "peak_rho", "test name", "top1"}


class Page(HTMLParser):
    """Tags, attributes, scripts and the text of a page, as a browser's tokenizer sees them."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: set[tuple[str, str]] = set()
        self.values: list[str] = []
        self.text: list[str] = []
        self.scripts = 0
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.scripts += tag == "script"
        for name, value in attrs:
            self.attrs.add((tag, name))
            self.values.append(value or "")

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.tags.add("<!-- comment -->")


@pytest.fixture
def hostile_report(tiny_report, tmp_path) -> tuple[Path, list[str], str]:
    """(a poisoned copy of the tiny report, its hostile strings, the clean page)."""
    copy = tmp_path / "hostile"
    shutil.copytree(tiny_report, copy)
    clean = build_html(copy)
    return copy, poison(copy), clean


def test_every_hostile_string_is_escaped_and_shown_as_text(hostile_report):
    report, hostile, clean = hostile_report
    page = build_html(report)
    for payload in (*PAYLOADS, FILE_PAYLOAD):
        if re.search(r"[<>\"&']", payload):  # markup: never written raw
            assert payload not in page, payload
    got, base = Page(page), Page(clean)
    # the same elements and attributes as a clean page: nothing new came from the input
    assert got.tags <= base.tags, got.tags - base.tags
    no_thumb = {("div", "role"), ("div", "aria-label")}  # the placeholder of a missing image
    assert got.attrs <= base.attrs | no_thumb, got.attrs - base.attrs
    assert got.scripts == base.scripts == 2
    assert not [a for a in got.attrs if a[1].startswith("on")]
    assert not [v for v in got.values if re.match(r"\s*javascript:", v, re.I)]
    # ... and each hostile string reaches the page as text or an attribute value
    shown = "\n".join(got.text + got.values)
    missing = {s.split(":", 2)[1] for s in hostile if ":".join(s.split(":", 2)[:2]) + ":" not in shown}
    assert missing <= NOT_SHOWN, missing - NOT_SHOWN


def test_the_thumbnail_json_cannot_close_its_script_element(hostile_report):
    report, _, _ = hostile_report
    page = build_html(report)
    data = page.split('<script type="application/json" id="thumb-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and ">" not in data and "&" not in data
    assert any(k.startswith(FILE_PAYLOAD) for k in json.loads(data))


def test_the_csp_allows_only_the_pages_own_script_and_style(tiny_report):
    page = build_html(tiny_report)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    policy = policy.replace("&#x27;", "'")
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    script = page.rsplit("<script>", 1)[1].split("</script>", 1)[0]
    style = page.split("<style>", 1)[1].split("</style>", 1)[0]
    assert f"script-src {html_page.csp_hash(script)};" in policy
    assert f"style-src {html_page.csp_hash(style)};" in policy
    assert not re.search(r"<[^>]+\son[a-z]+=", page)  # no inline event handler at all


def test_a_records_file_with_a_hostile_evaluator_id_is_refused(tiny_report, tmp_path, capsys):
    report = tmp_path / "bad-id"
    shutil.copytree(tiny_report, report)
    path = next((report / "scores").glob("*.csv"))
    frame = read_records(path)
    frame["evaluator"] = PAYLOADS[-1]
    write_records(frame, path, validate=False)
    # a hostile report arrives with a manifest that agrees with its files
    from harness.cards.provenance import load_manifest, output_entries, write_manifest

    manifest = load_manifest(report)
    manifest["outputs"] = output_entries(report)
    write_manifest(manifest, report)
    assert main(["html", str(report)]) == 2
    err = capsys.readouterr().err
    assert f"column 'evaluator': id {PAYLOADS[-1]!r} is not 1 to 100 characters from A-Z a-z 0-9" in err
    assert "Traceback" not in err


_ROOM_IDS = ("p01", "p02", "p03")


def _hostile_scene_set(scenes: Path) -> list[str]:
    """Hostile prompt texts and object labels in the tiny scene set (manifest rebuilt)."""
    from harness.scenes.set_manifest import build_manifest, write_manifest

    made = []
    paths = sorted((scenes / "scenes").glob("*.json"))
    for i, path in enumerate(paths):
        doc = _json(path)
        doc["prompt"] = f"{doc['prompt']} {PAYLOADS[sorted(_ROOM_IDS).index(doc['prompt_id'])]}"
        for k, obj in enumerate(doc["objects"]):
            obj["label"] = f"{obj['label']}{PAYLOADS[(i + k) % len(PAYLOADS)]}"
        made.append(doc["prompt"])  # one text per prompt id, as the scene set requires
        path.write_text(json.dumps(doc, indent=1))
    write_manifest(scenes, build_manifest(scenes, paths))
    return made


@pytest.mark.slow
def test_an_audit_of_scenes_with_hostile_prompts_and_labels_gives_a_safe_page(tmp_path, tiny_report):
    import os
    import subprocess
    import sys

    from harness.core.paths import REPO_ROOT
    from harness.testing import write_tiny_scene_set
    from tests._audit_project import CONFTEST, LENIENT, PYPROJECT

    root = tmp_path / "project"
    shutil.copytree(REPO_ROOT / "audit_tests", root / "audit_tests")
    write_tiny_scene_set(root / "scenes")
    prompts = _hostile_scene_set(root / "scenes")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pyproject.toml").write_text(PYPROJECT.format(thresholds=LENIENT))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    reports = [p for p in (root / "reports").iterdir() if not p.name.startswith(".")]
    assert len(reports) == 1, done.stdout[-2000:] + done.stderr[-2000:]
    report = reports[0]
    captions = set(read_records(report / "scores" / "tiny-grid.csv")["caption"])
    assert any(p in c for p in prompts for c in captions)  # the hostile prompts were scored
    page = (report / "report.html").read_text()
    for payload in PAYLOADS:
        if re.search(r"[<>\"&']", payload):
            assert payload not in page, payload
    got, base = Page(page), Page((tiny_report / "report.html").read_text())
    assert got.tags <= base.tags and got.attrs <= base.attrs and got.scripts == 2
    state, dialogs, errors = _load(report / "report.html")
    assert state["xss"] is None and state["hooked"] == [] and dialogs == [] and errors == []


# ----------------------------------------------------------------------------- chromium

HOOKS = """
window.__dialogs = [];
window.alert = window.confirm = window.prompt = function (m) { window.__dialogs.push(String(m)); };
"""


def _load(path: Path):
    """Load ``path`` in chromium; returns (flags, dialogs, console errors and warnings, page
    checks) after the page's own script has run and every thumbnail was scrolled into view."""
    sync_playwright = playwright_or_skip()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            dialogs: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.add_init_script(HOOKS)
            page.goto(path.as_uri(), wait_until="load")
            for d in page.locator("details").all():  # open everything so every image is live
                d.evaluate("el => { el.open = true; }")
            page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            page.wait_for_timeout(300)
            page.evaluate("document.querySelectorAll('img').forEach(i => i.scrollIntoView())")
            page.wait_for_timeout(300)
            state = page.evaluate(
                "({xss: window.__xss === undefined ? null : window.__xss, hooked: window.__dialogs,"
                " thumbs: document.querySelectorAll('img[src^=\"data:image/jpeg\"]').length,"
                " text: document.body.innerText})"
            )
            # the page's own script works: the evaluator filter hides other evaluators' rows
            options = page.locator("#f-ev option").all()
            if len(options) > 1:
                page.select_option("#f-ev", index=1)
                chosen = page.eval_on_selector("#f-ev", "s => s.value")
                rows = page.locator("table.verdict tbody tr").all()
                state["filtered"] = all(
                    (r.get_attribute("data-ev") == chosen) == r.is_visible() for r in rows)  # fmt: skip
            return state, dialogs, errors
        finally:
            browser.close()


def test_no_hostile_string_runs_in_chromium(hostile_report):
    report, hostile, _ = hostile_report
    (report / "report.html").write_text(build_html(report))
    state, dialogs, errors = _load(report / "report.html")
    assert state["xss"] is None and state["hooked"] == [] and dialogs == []
    assert errors == []  # not even a blocked attempt: nothing was parsed as script or handler
    assert state["thumbs"] > 0 and state.get("filtered") is True  # the page's own script ran
    assert sum(s in state["text"] for s in hostile) >= len(hostile) // 2  # shown as text


def test_the_csp_alone_stops_an_injected_handler_and_script(tiny_report, tmp_path):
    # as if an escaping bug let markup through: the policy must still refuse to run it
    page = build_html(tiny_report)
    injected = ('<img src="x" onerror="window.__xss=1;alert(1)">'
                "<script>window.__xss=2;alert(2)</script>"
                '<a id="jl" href="javascript:window.__xss=3">x</a>')  # fmt: skip
    page = page.replace('<main id="main">', '<main id="main">' + injected, 1)
    shutil.copytree(tiny_report, tmp_path / "r")
    path = tmp_path / "r" / "report.html"
    path.write_text(page)
    state, dialogs, errors = _load(path)
    assert state["xss"] is None and state["hooked"] == [] and dialogs == []
    assert any("Content Security Policy" in m for m in errors), errors  # refused, and said so
    assert state["thumbs"] > 0  # while the page's own script still runs
