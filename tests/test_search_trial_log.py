"""The search's trial log is a sealed cache entry (docs/search.md "Trial log and resuming",
docs/cache.md): a tampered log is discarded and measured afresh, never trusted; a path that is
no trial log is refused in one line and left alone; two searches on one log take turns."""

from __future__ import annotations

import json
import math
import os
import threading
import time
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core import cacheseal
from harness.core.cacheseal import CacheCorruptionWarning
from harness.core.hashing import canonical_json, sha256_bytes
from harness.evaluators.reference.specs import search_planted_specs
from harness.search.pipeline import SearchRequest, run_search
from harness.search.trial_log import Trial, TrialLog, TrialLogError, read_log

KEY = "k" * 64
TRIALS = [Trial(0, 0, "pitch=1", 0.5, seconds=0.1), Trial(1, 0, "pitch=2", math.nan, "failed", "boom"),
          Trial(2, 1, "pitch=3", 0.25, seconds=0.2)]  # fmt: skip


@pytest.fixture(autouse=True)
def _no_cache_secret(monkeypatch):
    monkeypatch.delenv(cacheseal.KEY_ENV, raising=False)
    monkeypatch.delenv(cacheseal.KEY_FILE_ENV, raising=False)


def _write(path, trials=TRIALS, key=KEY):
    with TrialLog(path, key, {"x": 1}) as log:
        for t in trials:
            log.append(t)
    return path


def _same(a: list[Trial], b: list[Trial]) -> bool:
    return [t.to_dict() for t in a] == [t.to_dict() for t in b]


def _opened(path, key=KEY) -> tuple[list[Trial], list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with TrialLog(path, key, {"x": 1}) as log:
            trials = list(log.trials)
    return trials, [w for w in caught if issubclass(w.category, CacheCorruptionWarning)]


def test_a_sealed_log_reads_back_and_every_line_carries_a_seal(tmp_path):
    path = _write(tmp_path / "t.jsonl")
    assert _same(read_log(path, KEY), TRIALS)
    lines = path.read_bytes().split(b"\n")[:-1]
    assert len(lines) == 4 and all(json.loads(line)["seal"]["format"] == cacheseal.FORMAT for line in lines)
    trials, warned = _opened(path)
    assert _same(trials, TRIALS) and not warned


def _forged_trial(path, n: int, value: float) -> bytes:
    """A trial line as a writer who does not know the seal would append it."""
    return json.dumps({"kind": "trial", "n": n, "batch": 9, "point": "pitch=0", "value": value,
                       "status": "ok", "error": "", "seconds": 0.0}).encode() + b"\n"  # fmt: skip


@pytest.mark.parametrize("attack", ["append", "forge value", "duplicate", "swap", "drop middle", "old format"])
def test_a_tampered_log_is_discarded_warned_about_and_kept_aside(tmp_path, attack):
    path = _write(tmp_path / "t.jsonl")
    lines = path.read_bytes().split(b"\n")[:-1]
    if attack == "append":
        path.write_bytes(path.read_bytes() + _forged_trial(path, 3, 99.0))
    elif attack == "forge value":
        path.write_bytes(path.read_bytes().replace(b'"value":0.5', b'"value":0.0'))
    elif attack == "duplicate":
        path.write_bytes(b"\n".join([*lines, lines[-1]]) + b"\n")
    elif attack == "swap":
        path.write_bytes(b"\n".join([lines[0], lines[2], lines[1], lines[3]]) + b"\n")
    elif attack == "drop middle":
        path.write_bytes(b"\n".join([lines[0], lines[1], lines[3]]) + b"\n")
    else:  # a log without seals, as the first version wrote it
        head = {"kind": "header", "key": KEY, "version": 1, "search": {"x": 1}}
        path.write_bytes(b"\n".join([json.dumps(head).encode(), _forged_trial(path, 0, 9.0)]))
    tampered = path.read_bytes()
    with pytest.raises(TrialLogError, match="fails verification"):
        read_log(path, KEY)
    trials, warned = _opened(path)
    assert trials == [] and len(warned) == 1 and "t.jsonl" in str(warned[0].message)
    assert (tmp_path / "t.jsonl.discarded").read_bytes() == tampered  # nothing lost
    assert read_log(path, KEY) == []  # a fresh, sealed header


def test_a_keyed_log_refuses_a_forger_who_recomputes_the_plain_seals(tmp_path, monkeypatch):
    """Without the secret a writer who knows the scheme can recompute plain seals (docs/cache.md
    threat model); with ``T3D_AUDIT_CACHE_KEY`` the forged chain fails."""
    from harness.search import trial_log

    monkeypatch.setenv(cacheseal.KEY_ENV, "s" * 32)
    path = _write(tmp_path / "t.jsonl")
    lines = path.read_bytes().split(b"\n")[:-1]
    monkeypatch.delenv(cacheseal.KEY_ENV)  # the forger has no secret
    forged = trial_log._sealed_line(Trial(3, 9, "pitch=0", 99.0).to_dict(), KEY, 4, lines[-1])
    path.write_bytes(path.read_bytes() + forged + b"\n")
    monkeypatch.setenv(cacheseal.KEY_ENV, "s" * 32)
    with pytest.raises(TrialLogError, match="keyed seal"):
        read_log(path, KEY)


def test_a_torn_last_line_is_dropped_and_the_log_resumes_sealed(tmp_path):
    path = _write(tmp_path / "t.jsonl")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 25])  # kill -9 in the middle of the last trial's line
    assert _same(read_log(path, KEY), TRIALS[:2])
    with TrialLog(path, KEY, {"x": 1}) as log:
        assert _same(log.trials, TRIALS[:2])
        log.append(TRIALS[2])
    assert _same(read_log(path, KEY), TRIALS) and path.read_bytes() == data


def test_a_header_torn_mid_write_starts_afresh(tmp_path):
    path = _write(tmp_path / "t.jsonl", trials=[])
    path.write_bytes(path.read_bytes()[:30])
    trials, warned = _opened(path)
    assert trials == [] and not warned and read_log(path, KEY) == []


@given(position=st.integers(min_value=0), byte=st.integers(min_value=0, max_value=255))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_changed_byte_is_refused_or_reads_an_unchanged_prefix(tmp_path, position, byte):
    """Changing one byte never yields a different trial: the log is refused, or (the change made
    the last line torn) a prefix of the trials is read."""
    path = tmp_path / "prop.jsonl"
    path.unlink(missing_ok=True)
    data = bytearray(_write(path).read_bytes())
    position %= len(data)
    if data[position] == byte:
        return
    data[position] = byte
    path.write_bytes(bytes(data))
    try:
        trials = read_log(path, KEY)
    except TrialLogError:
        return
    assert _same(trials, TRIALS[: len(trials)]) and len(trials) < len(TRIALS)


@pytest.mark.parametrize("line", [b"\xff\xfe not utf-8", b"[" * 100_000 + b"]" * 100_000,
                                  b'{"kind": "trial", "n": 0, "value": Infinity}', b"NaN"])  # fmt: skip
def test_a_hostile_trial_line_is_a_tampered_log_not_a_traceback(tmp_path, line):
    path = _write(tmp_path / "t.jsonl")
    path.write_bytes(path.read_bytes() + line + b"\n")
    with pytest.raises(TrialLogError, match="fails verification"):
        read_log(path, KEY)
    trials, warned = _opened(path)
    assert trials == [] and len(warned) == 1


@pytest.mark.parametrize("first", [b"\xff\xfe not utf-8\n", b"[" * 100_000 + b"]" * 100_000 + b"\n",
                                   b'{"name": "my notes"}\n', b'{"kind": "header", "v": Infinity}\n',
                                   b"my notes, no newline"])  # fmt: skip
def test_a_file_that_is_no_trial_log_is_refused_and_left_as_it_is(tmp_path, first):
    path = tmp_path / "notes.txt"
    path.write_bytes(first)
    for attempt in (lambda: read_log(path, KEY), lambda: TrialLog(path, KEY, {})):
        with pytest.raises(TrialLogError, match="not a t3d-audit trial log"):
            attempt()
    assert path.read_bytes() == first


def test_another_searchs_log_is_refused(tmp_path):
    path = _write(tmp_path / "t.jsonl")
    with pytest.raises(TrialLogError, match="another search"):
        TrialLog(path, "other", {})
    assert _same(read_log(path, KEY), TRIALS)


@pytest.mark.parametrize("kind", ["fifo", "dev null", "dangling symlink", "symlink", "folder"])
def test_a_log_path_that_is_no_plain_file_is_refused_at_once(tmp_path, kind):
    path = tmp_path / "t.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev null":
        path = tmp_path / "null"
        path.symlink_to(os.devnull)
        path = type(path)(os.devnull)
    elif kind == "dangling symlink":
        path.symlink_to(tmp_path / "nowhere" / "log.jsonl")
    elif kind == "symlink":
        path.symlink_to(_write(tmp_path / "real.jsonl"))
    else:
        path.mkdir()
    started = time.monotonic()
    for attempt in (lambda: read_log(path, KEY), lambda: TrialLog(path, KEY, {})):
        with pytest.raises(TrialLogError, match=r"symlink|folder|not a regular file"):
            attempt()
    assert time.monotonic() - started < 5  # a FIFO is never opened for reading
    assert not (tmp_path / "nowhere").exists()


def test_two_searches_on_one_log_take_turns_and_the_second_replays_the_first(tmp_path):
    path = tmp_path / "t.jsonl"
    seen: list[list[Trial]] = []
    first = TrialLog(path, KEY, {"x": 1})
    first.append(TRIALS[0])

    def second() -> None:
        with TrialLog(path, KEY, {"x": 1}) as log:
            seen.append(list(log.trials))
            log.append(TRIALS[len(log.trials)])

    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(0.3)
    assert not seen  # waiting for the lock
    first.append(TRIALS[1])
    first.close()
    thread.join(10)
    assert _same(seen[0], TRIALS[:2])
    assert _same(read_log(path, KEY), TRIALS)


SMOKE = {"profile": "smoke", "seed": 0, "batch": 8, "budget": 16}


def test_a_trial_line_appended_to_a_finished_searchs_log_changes_nothing(tmp_path):
    """The gate bypass: a line claiming c0 is the worst configuration made the held-out
    measurement of c0 (effect 0: not confirmed). The tampered log is discarded and measured
    afresh to the same answer."""
    spec = next(s for s in search_planted_specs() if s.id == "planted-offgrid")
    request = SearchRequest("planted-offgrid", **SMOKE, objective="pair:faithful,gridded")
    log = tmp_path / "log.jsonl"
    before = run_search(request, cache_dir=tmp_path, spec=spec, log_path=log)
    assert before.confirmed
    c0_text = before.space.text(before.space.c0)
    forged = {"kind": "trial", "n": len(before.trials), "batch": 99, "point": c0_text, "value": 1e9,
              "status": "ok", "error": "", "seconds": 0.0}  # fmt: skip
    with open(log, "ab") as fh:
        fh.write(canonical_json(forged) + b"\n")
    with pytest.warns(CacheCorruptionWarning, match="log.jsonl"):
        after = run_search(request, cache_dir=tmp_path, spec=spec, log_path=log)
    assert after.confirmed and after.worst == before.worst
    assert [t.point for t in after.trials] == [t.point for t in before.trials]
    assert sha256_bytes(log.read_bytes()) != sha256_bytes((tmp_path / "log.jsonl.discarded").read_bytes())


@pytest.mark.parametrize("kind", ["fifo", "folder", "notes"])
def test_a_log_no_search_may_write_is_refused_before_any_work(tmp_path, kind):
    log = tmp_path / "log.jsonl"
    if kind == "fifo":
        os.mkfifo(log)
    elif kind == "folder":
        log.mkdir()
    else:
        log.write_text("my notes\nmore notes\n")
    spec = next(s for s in search_planted_specs() if s.id == "planted-offgrid")
    cache = tmp_path / "cache"
    with pytest.raises(TrialLogError):
        run_search(SearchRequest("planted-offgrid", **SMOKE), cache_dir=cache, spec=spec, log_path=log)
    assert not cache.exists()  # no scene set loaded, no c0 measured


trial_values = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.just(math.nan))


@given(values=st.lists(trial_values, max_size=12), points=st.text(min_size=1, max_size=40))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_written_trial_reads_back_exactly(tmp_path, values, points):
    path = tmp_path / "round.jsonl"
    path.unlink(missing_ok=True)
    trials = [Trial(i, i // 4, f"{points}{i}", v, "ok" if math.isfinite(v) else "failed",
                    "" if math.isfinite(v) else "failed here", 0.5) for i, v in enumerate(values)]  # fmt: skip
    _write(path, trials)
    assert _same(read_log(path, KEY), trials)


@pytest.mark.parametrize("kind", ["symlink", "folder"])
def test_a_lock_file_that_is_a_symlink_or_folder_is_refused_and_nothing_written_through(tmp_path, kind):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    lock = tmp_path / "t.jsonl.lock"
    if kind == "symlink":
        lock.symlink_to(outside)
    else:
        lock.mkdir()
    with pytest.raises(TrialLogError, match="cannot lock the trial log"):
        TrialLog(tmp_path / "t.jsonl", KEY, {})
    assert outside.read_text() == "keep me" and not (tmp_path / "t.jsonl").exists()
