"""Every T3D_AUDIT_* value is checked in one place, at the start of a command or a pytest run
(item 6): a bad value is one line naming the variable, before any work."""

from __future__ import annotations

import pytest

from harness.cli import main
from harness.core.envvars import render_threads, scorer_deadline
from harness.core.errors import AuditError
from harness.run.environment import READERS, check_environment

BAD = [
    ("T3D_AUDIT_RENDER_THREADS", "-3"), ("T3D_AUDIT_RENDER_THREADS", "two"), ("T3D_AUDIT_RENDER_THREADS", "1.5"),
    ("T3D_AUDIT_RENDER_DEADLINE", "nan"), ("T3D_AUDIT_RENDER_DEADLINE", "-1"), ("T3D_AUDIT_RENDER_DEADLINE", "inf"),
    ("T3D_AUDIT_SCORER_DEADLINE", "nan"), ("T3D_AUDIT_SCORER_DEADLINE", "0"),
    ("T3D_AUDIT_IMPORT_TIMEOUT", "nan"), ("T3D_AUDIT_MEMORY_LIMIT", "lots"),
    ("T3D_AUDIT_OFFLINE", "maybe"), ("T3D_AUDIT_RENDER_DEVICE", "quantum"),
    ("T3D_AUDIT_STORE_OPTIONS", "[1]"), ("T3D_AUDIT_GLTF_LIMITS", "{not json"),
]  # fmt: skip


@pytest.mark.parametrize("name, value", BAD)
def test_a_bad_value_is_an_error_naming_the_variable(name, value):
    with pytest.raises(AuditError) as info:
        check_environment({name: value})
    assert name in str(info.value)


@pytest.mark.parametrize("name, value", BAD[:4])
def test_a_command_stops_with_one_line_before_any_work(monkeypatch, capsys, tmp_path, name, value):
    monkeypatch.setenv(name, value)
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert name in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "pyproject.toml").exists()  # nothing was done


def test_good_and_unset_values_pass():
    check_environment({})
    check_environment({"T3D_AUDIT_RENDER_THREADS": "4", "T3D_AUDIT_RENDER_DEADLINE": "90",
                       "T3D_AUDIT_OFFLINE": "1", "T3D_AUDIT_RENDER_DEVICE": "gpu",
                       "T3D_AUDIT_SOMETHING_NEW": "anything"})  # fmt: skip
    assert render_threads({"T3D_AUDIT_RENDER_THREADS": " 3 "}) == 3 and render_threads({}) == 0
    assert scorer_deadline({}) == 600.0 and scorer_deadline({"T3D_AUDIT_SCORER_DEADLINE": "2.5"}) == 2.5


def test_the_render_threads_reader_of_the_renderer_refuses_negatives(monkeypatch):
    from harness.core.errors import RenderError
    from harness.render.settings import render_threads as renderer_threads

    monkeypatch.setenv("T3D_AUDIT_RENDER_THREADS", "-3")
    with pytest.raises(RenderError, match="T3D_AUDIT_RENDER_THREADS"):
        renderer_threads()


def test_every_variable_the_code_reads_with_a_value_is_checked():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "harness"
    names = set()
    for path in root.rglob("*.py"):
        names |= set(re.findall(r'"(T3D_AUDIT_[A-Z_]+)"', path.read_text()))
    unchecked = names - set(READERS) - {"T3D_AUDIT_CACHE_DIR", "T3D_AUDIT_WEIGHTS_DIR", "T3D_AUDIT_CACHE_KEY",
                                        "T3D_AUDIT_CACHE_KEY_FILE", "T3D_AUDIT_"}  # fmt: skip
    assert not unchecked, f"add a reader to harness.run.environment.READERS for {sorted(unchecked)}"


# Regression: int()/float() read "٣" (Arabic-Indic 3) and "1_0" as numbers, and
# int("²") raises ValueError although "²".isdigit() is True (a traceback at every command's start)
NUMERIC = ["T3D_AUDIT_RENDER_THREADS", "T3D_AUDIT_SCORER_DEADLINE", "T3D_AUDIT_IMPORT_TIMEOUT",
           "T3D_AUDIT_RENDER_DEADLINE", "T3D_AUDIT_MEMORY_LIMIT", "T3D_AUDIT_MAX_INPUT_BYTES",
           "T3D_AUDIT_MAX_JSON_DEPTH"]  # fmt: skip


@pytest.mark.parametrize("value", ["²", "٣", "1_0", "١٠G", "0x10"])
@pytest.mark.parametrize("name", NUMERIC)
def test_only_ascii_decimal_numbers_are_read(name, value):
    with pytest.raises(AuditError, match=name):
        check_environment({name: value})


@pytest.mark.parametrize("value", ["nodes=1.9", "node_depth=٣", "node_depth=1_0"])
def test_gltf_limits_are_ascii_whole_numbers(value):
    with pytest.raises(AuditError, match="T3D_AUDIT_GLTF_LIMITS"):
        check_environment({"T3D_AUDIT_GLTF_LIMITS": value})


def test_ascii_spellings_still_read():
    check_environment({"T3D_AUDIT_RENDER_THREADS": " 8 ", "T3D_AUDIT_SCORER_DEADLINE": "1e3",
                       "T3D_AUDIT_IMPORT_TIMEOUT": ".5", "T3D_AUDIT_MEMORY_LIMIT": "1.5G",
                       "T3D_AUDIT_MAX_INPUT_BYTES": "64MiB", "T3D_AUDIT_MAX_JSON_DEPTH": "50",
                       "T3D_AUDIT_GLTF_LIMITS": "node_depth=1e3"})  # fmt: skip


@pytest.mark.parametrize("raw", ["[" * 50_000, '{"a": ' * 50_000])
def test_store_options_nested_too_deeply_is_one_error_not_a_recursion_error(monkeypatch, raw):
    """Regression: T3D_AUDIT_STORE_OPTIONS went through a bare json.loads (a variable
    holds up to 128 KiB): a RecursionError traceback at every command's start."""
    from harness.store.stores import StoreError, _options_from_env

    with pytest.raises(AuditError, match="T3D_AUDIT_STORE_OPTIONS"):
        check_environment({"T3D_AUDIT_STORE_OPTIONS": raw})
    monkeypatch.setenv("T3D_AUDIT_STORE_OPTIONS", raw)
    with pytest.raises(StoreError, match="nested too deeply"):
        _options_from_env()


@pytest.mark.parametrize("value", ["0.5", "0.4B"])
def test_a_memory_limit_rounding_to_zero_bytes_is_refused(value):
    """Regression: "0" turns the limit off, but "0.5" was read as a limit of 0 bytes
    (every Blender child would die at its first allocation)."""
    with pytest.raises(AuditError, match="T3D_AUDIT_MEMORY_LIMIT"):
        check_environment({"T3D_AUDIT_MEMORY_LIMIT": value})


@pytest.mark.parametrize("name", ["T3D_AUDIT_SCORER_DEADLINE", "T3D_AUDIT_IMPORT_TIMEOUT", "T3D_AUDIT_RENDER_DEADLINE"])
def test_a_deadline_too_long_to_wait_on_is_refused(name):
    """Regression: 1e300 s is finite, so it passed; then every scorer batch failed with
    OverflowError (lock wait) and a warm worker's setitimer raised."""
    with pytest.raises(AuditError, match=name):
        check_environment({name: "1e300"})
    check_environment({name: "86400"})


HOSTILE = ["9" * 5000, "1" * 400 + ".5", "-1", "nan", "NaN", "-0", "inf", "1e400", "\u00e9", "\x00", "9" * 30]


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("name", sorted(READERS))
def test_hostile_values_are_one_audit_error_or_a_value(name, value):
    # regression: 5,000-digit values of the count and size variables ended in a ValueError or
    # OverflowError traceback at every command's start
    try:
        check_environment({name: value})
    except AuditError as exc:
        assert name in str(exc) and "\n" not in str(exc)


@pytest.mark.parametrize(
    ("name", "value"),
    [("T3D_AUDIT_RENDER_THREADS", "9" * 5000), ("T3D_AUDIT_RENDER_THREADS", "1025"),
     ("T3D_AUDIT_MAX_INPUT_BYTES", "9" * 5000), ("T3D_AUDIT_MAX_INPUT_BYTES", "2T"),
     ("T3D_AUDIT_MAX_JSON_DEPTH", "9" * 5000), ("T3D_AUDIT_MEMORY_LIMIT", "9" * 5000),
     ("T3D_AUDIT_MEMORY_LIMIT", "1" * 400 + ".5"), ("T3D_AUDIT_MEMORY_LIMIT", "2000T")],
)  # fmt: skip
def test_huge_values_are_refused_in_one_line_by_every_command(monkeypatch, capsys, tmp_path, name, value):
    monkeypatch.setenv(name, value)
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert name in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert len(err) < 400  # the value is quoted cut short, not in full


def test_the_largest_accepted_values_are_read():
    from harness.core import bounded_input
    from harness.render import resource_limits

    assert render_threads({"T3D_AUDIT_RENDER_THREADS": "1024"}) == 1024
    assert bounded_input.max_bytes({"T3D_AUDIT_MAX_INPUT_BYTES": "1024G"}) == 1 << 40
    assert resource_limits.memory_limit({"T3D_AUDIT_MEMORY_LIMIT": "1024T"}) == 1 << 50


def test_a_store_options_value_of_escaped_quotes_is_refused_at_once():
    # regression: the JSON depth pre-scan was quadratic on escaped quotes; a 200 KB value of
    # T3D_AUDIT_STORE_OPTIONS stalled every command's start for minutes
    import time

    started = time.perf_counter()
    with pytest.raises(AuditError, match="T3D_AUDIT_STORE_OPTIONS"):
        check_environment({"T3D_AUDIT_STORE_OPTIONS": '{"a": "' + '\\"' * 100_000})
    assert time.perf_counter() - started < 5.0
