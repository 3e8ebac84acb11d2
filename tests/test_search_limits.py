"""Every number of a search has a documented range (docs/search.md "Limits"), refused in one
line at its edges on the command line, in a profile file's search block and through the API;
the flip region's Wilson bounds are exact at 0 and at every flip."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.errors import ProtocolError
from harness.evaluators.reference.specs import search_planted_specs
from harness.protocol.profiles import _parse_search
from harness.protocol.search_limits import INT_RANGES, MAX_SEED, MAX_WALL_TIME_S
from harness.search.optimiser import BatchOptimiser, legacy_seed
from harness.search.pipeline import SearchError, SearchRequest, Split, run_search
from harness.stats.intervals import share_interval


def _refused(capsys, *args: str) -> str:
    code = main(["search", "--evaluator", "planted-offgrid", "--no-progress", *args])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("option", "value", "words"), [
    ("--budget", str(2**64), "[1, 100000]"), ("--budget", "0", "[1, 100000]"),
    ("--budget", "100001", "[1, 100000]"), ("--budget", "1e3", "[1, 100000]"),
    ("--budget", "١٠", "[1, 100000]"), ("--seed", str(2**63), f"[0, {MAX_SEED}]"),
    ("--seed", "-1", f"[0, {MAX_SEED}]"), ("--batch", str(2**64), "[1, 4096]"),
    ("--batch", "0", "[1, 4096]"), ("--flip-region", str(10**9), "[0, 65536]"),
    ("--flip-region", "-1", "[0, 65536]"), ("--wall-time", "inf", "seconds in (0,"),
    ("--wall-time", "nan", "seconds in (0,"), ("--wall-time", "0", "seconds in (0,"),
    ("--wall-time", "1e300", "seconds in (0,"), ("--split", "2+1", "[2, 100000]"),
    ("--split", "0+4", "[1, 100000]"), ("--split", f"2+{10**25}", "[2, 100000]"),
    ("--split", "2+4+5", "DISCOVERY+HELD_OUT"), ("--split", "٢+٤", "DISCOVERY+HELD_OUT"),
    ("--split", "+4", "DISCOVERY+HELD_OUT"), ("--axes", "pitch,,yaw", "an empty axis name"),
    ("--axes", "", "an empty axis name"), ("--axes", "pitch, pitch", "'pitch' is named twice"),
    ("--axes", "x" * 100_000, "unknown search axis 'xxx"),
    ("--axes", "nope", "unknown search axis 'nope'"), ("--objective", "pair:a,a", "malformed pair"),
    ("--objective", "pair:faithful", "malformed pair"), ("--objective", "pair:<b>x</b>,faithful", "not in the scene set"),
])  # fmt: skip
def test_every_search_option_is_refused_in_one_line_outside_its_range(capsys, tmp_path, option, value, words):
    err = _refused(capsys, option, value, "--cache-dir", str(tmp_path))
    assert words in err and len(err) < 1000


def test_a_seed_above_32_bits_searches_and_each_seed_has_its_own_stream():
    """The documented range [0, 2**63 - 1] is true: a seed above 2**32 used to be a traceback
    from numpy's legacy seeding."""
    from harness.protocol.profiles import get_profile
    from harness.search.space import space_for

    space = space_for(get_profile("smoke"))
    first = {seed: [p for _, p in BatchOptimiser(space, 16, 8, seed).ask(8)]
             for seed in (0, 2**32 - 1, 2**32, 2**32 + 1, MAX_SEED)}  # fmt: skip
    assert len({tuple(v) for v in first.values()}) == len(first)
    assert [p for _, p in BatchOptimiser(space, 16, 8, MAX_SEED).ask(8)] == first[MAX_SEED]
    assert legacy_seed(7) == 7 and legacy_seed(2**32) == [0, 1]


def test_a_search_with_the_largest_seed_runs_end_to_end(tmp_path):
    spec = next(s for s in search_planted_specs() if s.id == "planted-offgrid")
    found = run_search(SearchRequest("planted-offgrid", "smoke", budget=8, seed=MAX_SEED, flip_points=4),
                       cache_dir=tmp_path, spec=spec, log_path=tmp_path / "log.jsonl")  # fmt: skip
    assert len(found.trials) == 8 and found.to_dict()["seed"] == MAX_SEED


BAD_NUMBERS = [(field, value) for field in ("budget", "batch", "seed", "flip_points", "bootstrap")
               for value in (-1, 2**64, math.inf, math.nan, True, 1.5)]  # fmt: skip
BAD_NUMBERS += [("wall_time", value) for value in (-1.0, 0, math.inf, math.nan, True, 1e300)]


@pytest.mark.parametrize(("field", "value"), BAD_NUMBERS)
def test_the_api_refuses_out_of_range_numbers_before_any_work(tmp_path, field, value):
    request = SearchRequest("planted-offgrid", "smoke", **{field: value})
    with pytest.raises(SearchError, match=field):
        run_search(request, cache_dir=tmp_path / "never", spec=object())
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize(("block", "words"), [
    ({"budget": 2**64}, "[1, 100000]"), ({"budget": -3}, "[1, 100000]"), ({"budget": 1e3}, "[1, 100000]"),
    ({"seed": 2**63}, f"[0, {MAX_SEED}]"), ({"seed": True}, f"[0, {MAX_SEED}]"),
    ({"flip_points": 10**9}, "[0, 65536]"), ({"flip_points": math.inf}, "[0, 65536]"),
    ({"budget": math.nan}, "[1, 100000]"), ({"split": [2, 10**9]}, "[2, 100000]"),
    ({"split": [0, 4]}, "[1, 100000]"), ({"split": [2, 4, 6]}, "[discovery, held-out]"),
    ({"split": "2+4"}, "[discovery, held-out]"),
])  # fmt: skip
def test_a_search_block_is_refused_outside_the_same_ranges(block, words):
    with pytest.raises(ProtocolError) as caught:
        _parse_search(block, "file#/smoke/search")
    assert words in caught.value.what and caught.value.where.startswith("file#/smoke/search")


def test_the_ranges_at_their_edges_are_accepted():
    top = {k: INT_RANGES[k][1] for k in ("budget", "seed", "flip_points")}
    block = _parse_search({**top, "split": [INT_RANGES["discovery"][1], INT_RANGES["held_out"][1]]}, "w")
    assert (block.budget, block.seed, block.flip_points) == tuple(top.values())
    assert Split(1, 2).held_out == 2
    with pytest.raises(SearchError):
        Split(1, 1)
    assert MAX_WALL_TIME_S == 365 * 24 * 3600


# ------------------------------------------------------------------- Wilson bounds


def test_no_flips_give_a_lower_bound_of_exactly_zero_and_all_flips_an_upper_bound_of_one():
    """0 of 3 used to give 5.55e-17, so an invariant evaluator failed ``max_flip_share`` 0."""
    for n in range(1, 3000):
        assert share_interval(0, n)[0] == 0.0
        assert share_interval(n, n)[1] == 1.0
    assert share_interval(0, 3)[0] == 0.0


@given(n=st.integers(1, 10**6), data=st.data())
@settings(max_examples=300, deadline=None)
def test_the_wilson_interval_holds_the_share_inside_zero_one(n, data):
    k = data.draw(st.integers(0, n))
    lo, hi = share_interval(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    assert (lo == 0.0) == (k == 0) and (hi == 1.0) == (k == n)


def test_the_bootstrap_bound_is_the_statistics_bound():
    from harness.protocol import search_limits
    from harness.stats.bootstrap import MAX_BOOTSTRAP

    assert search_limits.MAX_BOOTSTRAP == MAX_BOOTSTRAP


@pytest.mark.parametrize(("field", "value", "words"), [
    ("split", (1, 2, 3), "split must be (discovery, held_out)"),
    ("split", "2+4", "split must be (discovery, held_out)"),
    ("axes", "pitch", "axes must be a list of axis names"),
    ("axes", ["pitch", ""], "axes must be a list of axis names"),
    ("axes", ["pitch", 3], "axes must be a list of axis names"),
    ("axes", ["pitch", "pitch"], "named twice"),
])
def test_the_api_refuses_a_malformed_split_or_axes_in_one_error(field, value, words):
    # regression: harness.api.search passed split and axes through, so (1, 2, 3) was a TypeError
    from harness import api
    from harness.core.errors import AuditError

    with pytest.raises(AuditError) as caught:
        api.search("no-such-evaluator-is-looked-up-first", **{field: value})
    assert words in str(caught.value) and "\n" not in caught.value.what


def test_the_audits_search_lock_as_a_symlink_is_one_error_not_followed(tmp_path):
    # regression: the audit's per-evaluator search lock was taken with a bare FileLock, so a
    # symlink in its place ended the audit's search test in an OSError traceback
    from types import SimpleNamespace

    from harness.protocol.profiles import get_profile
    from harness.run.searches import RunSearches

    profile = get_profile("smoke")
    block = SimpleNamespace(objective="shift", budget=4, seed=0, split=None, flip_points=0)
    inputs = SimpleNamespace(named_profile=SimpleNamespace(name=profile.name, search=block),
                             options=SimpleNamespace(cache_dir=tmp_path, scenes=None))
    (tmp_path / "search").mkdir()
    outside = tmp_path / "outside.txt"
    (tmp_path / "search" / "audit-ev.lock").symlink_to(outside)
    with pytest.raises(SearchError) as caught:
        RunSearches(inputs, thresholds=lambda ev: {})._run("ev")  # type: ignore[arg-type]
    assert "symlink" in str(caught.value) and not outside.exists()
