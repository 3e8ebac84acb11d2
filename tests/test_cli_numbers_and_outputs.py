"""The CLI's numbers, preset lists, JSON output and output folders under odd input:
non-finite and overflowing scores, NaN in payloads, empty, repeated and unknown preset names,
huge scales, links and folders in the way of ``concordance --out``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.core.jsonout import print_json, strict

FAST = ["--bootstrap", "50"]


def _one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    out = capsys.readouterr()
    assert out.out == "" and "Traceback" not in out.err and len(out.err.strip().splitlines()) == 1, out.err
    return out.err


@pytest.mark.parametrize("score", ["1e400", "nan", "NaN", "inf", "-inf", "Infinity", "1e9999", "abc", "1_0", "٣", ""])
def test_reproduce_refuses_a_score_that_is_not_a_finite_number(capsys, score):
    # regression: 1e400 overflowed (OverflowError traceback) and nan was taken as a score
    err = _one_line_error(capsys, ["reproduce", "--evaluator", "preset-tiling", "--score", score,
                                   "--presets", "mate3d", *FAST])  # fmt: skip
    assert "--score" in err


@pytest.mark.parametrize("presets", ["mate3d,,3dcodebench", "mate3d,", ",", "no-such-preset", "mate3d,MATE3D"])
def test_reproduce_refuses_odd_preset_lists_in_one_line(capsys, presets):
    err = _one_line_error(capsys, ["reproduce", "--evaluator", "preset-tiling", "--score", "0.5",
                                   "--presets", presets, *FAST])  # fmt: skip
    assert "--presets" in err


@pytest.mark.parametrize("presets", ["mate3d", "mate3d,mate3d", "mate3d,,3dcodebench", "mate3d,nope", " , "])
def test_concordance_refuses_odd_preset_lists_in_one_line(capsys, presets):
    err = _one_line_error(capsys, ["concordance", "--evaluator", "preset-tiling", "--presets", presets, *FAST])
    assert "--presets" in err


@pytest.mark.parametrize(
    ("option", "value"),
    [("--max-views", "99999999999999999999"), ("--samples", "99999999999999999999"), ("--max-views", "nan"),
     ("--resolution", "1e9"), ("--seed", "-1"), ("--bootstrap", "inf")],
)  # fmt: skip
def test_huge_and_non_finite_scales_are_refused_in_one_line(capsys, option, value):
    err = _one_line_error(capsys, ["concordance", "--evaluator", "preset-tiling", "--presets", "mate3d,3dcodebench",
                                   option, value, *FAST])  # fmt: skip
    assert option in err


def test_concordance_out_replaces_links_without_writing_through_them(tmp_path, capsys):
    # regression: scores.csv and concordance.png were opened by name, so a link left at those
    # names wrote the scores over the link's target outside the folder
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    for name in ("concordance.json", "scores.csv", "concordance.png"):
        (outside / name).write_text("keep me")
        (out / name).symlink_to(outside / name)
    assert main(["concordance", "--evaluator", "preset-tiling", "--presets", "mate3d,3dcodebench",
                 "--out", str(out), *FAST]) == 0  # fmt: skip
    capsys.readouterr()
    for name in ("concordance.json", "scores.csv", "concordance.png"):
        assert (outside / name).read_text() == "keep me"
        assert not (out / name).is_symlink() and (out / name).stat().st_size > 0
    json.loads((out / "concordance.json").read_text())


def test_concordance_out_with_a_name_taken_by_a_folder_is_one_line_before_any_work(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "scores.csv").mkdir(parents=True)
    err = _one_line_error(capsys, ["concordance", "--evaluator", "preset-tiling", "--presets", "mate3d,3dcodebench",
                                   "--out", str(out), *FAST])  # fmt: skip
    assert "scores.csv" in err and "folder" in err


def test_a_generator_name_with_mathtext_is_drawn_as_text(tmp_path):
    from harness.peers.rank_concordance import concordance, figure

    scores = np.array([[[1.0, 2.0], [2.0, 1.5]], [[2.0, 1.0], [1.0, 1.2]]])  # (presets, generators, prompts)
    result = concordance(scores, ("a", "b"), ("$\\frac{", "plain"), n_draws=20, seed=0)
    figure(result, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0


# ---- strict JSON ---------------------------------------------------------------------------


def test_strict_turns_every_non_finite_number_into_null():
    value = {"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": (np.float64("nan"), np.float32(2.0)),
             "d": np.array([1.0, np.nan]), "e": "NaN", "f": 3}  # fmt: skip
    assert strict(value) == {"a": None, "b": [None, None, 1.5], "c": [None, 2.0], "d": [1.0, None], "e": "NaN", "f": 3}


@given(st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
                    max_leaves=20))  # fmt: skip
def test_print_json_always_prints_strict_json(value):
    import io

    stream = io.StringIO()
    print_json(value, stream=stream)

    def refuse(token: str) -> None:
        raise AssertionError(f"non-JSON token {token}")

    json.loads(stream.getvalue(), parse_constant=refuse)


def test_every_json_option_of_the_cli_prints_through_the_strict_printer():
    """No command prints JSON with ``json.dump``/``json.dumps`` to stdout directly (they would
    write NaN and Infinity tokens)."""
    import ast
    from pathlib import Path

    import harness.commands

    def strict_call(call: ast.Call) -> bool:
        return any(k.arg == "allow_nan" and getattr(k.value, "value", True) is False for k in call.keywords)

    offenders = []
    for path in Path(harness.commands.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            dumps = [node] if getattr(node.func, "attr", "") == "dump" else []
            if isinstance(node.func, ast.Name) and node.func.id == "print":
                dumps = [a for a in node.args if isinstance(a, ast.Call) and getattr(a.func, "attr", "") == "dumps"]
            offenders += [f"{path.name}:{node.lineno}" for call in dumps if not strict_call(call)]
    assert offenders == []


@pytest.mark.parametrize("generator", ["", " ", "nobody"])
def test_reproduce_refuses_an_unknown_or_empty_generator_in_one_line(capsys, generator):
    # regression: --generator "" skipped the check and ended in a ValueError traceback
    err = _one_line_error(capsys, ["reproduce", "--evaluator", "preset-tiling", "--score", "0.5",
                                   "--generator", generator, "--presets", "mate3d", *FAST])  # fmt: skip
    assert "is not in the scored scenes" in err


def test_concordance_refuses_a_probe_named_twice(capsys):
    err = _one_line_error(capsys, ["concordance", "--evaluator", "preset-tiling", "--presets", "mate3d,3dcodebench",
                                   "--probes", "tiled,tiled", *FAST])  # fmt: skip
    assert "--probes" in err and "twice" in err
