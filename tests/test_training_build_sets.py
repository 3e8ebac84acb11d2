"""Building training sets side by side (harness.training.build_sets) and the set-size checks."""

from __future__ import annotations

import numpy as np
import pytest

from harness.core.errors import EvaluatorError
from harness.training.build_sets import build_missing, missing
from harness.training.data import DataRecipe, build_dataset, load_dataset
from harness.training.negatives import NegativesRecipe, build_negatives


def test_only_sets_without_data_are_missing(tmp_path):
    done, todo = tmp_path / "done", tmp_path / "todo"
    done.mkdir()
    (done / "data.npz").write_bytes(b"")
    jobs = [(DataRecipe(), done), (DataRecipe(seed=1), todo)]
    assert missing(jobs) == [(DataRecipe(seed=1), todo)]
    assert build_missing([(DataRecipe(), done)], workers=2) == []  # nothing to do, no process


@pytest.mark.parametrize("n", [0, 1, 9])
def test_a_set_too_small_for_its_held_out_scenes_is_a_typed_error_before_rendering(n, tmp_path):
    # regression: fewer than 10 scenes crashed with random.sample's ValueError after sampling
    with pytest.raises(EvaluatorError, match="at least 10 scenes"):
        build_dataset(DataRecipe(n_scenes=n), tmp_path / "plain", render=_no_render)
    with pytest.raises(EvaluatorError, match="at least 10 groups"):
        build_negatives(NegativesRecipe(n_groups=n), tmp_path / "groups", render=_no_render)
    assert not (tmp_path / "plain" / "data.npz").exists()


def _no_render(scene, cfg):
    raise AssertionError("nothing should be rendered")


def test_every_failed_set_is_named_after_the_others_finish(tmp_path):
    jobs = [(DataRecipe(n_scenes=3), tmp_path / "a"), (NegativesRecipe(n_groups=2), tmp_path / "b")]
    lines: list[str] = []
    with pytest.raises(EvaluatorError) as err:
        build_missing(jobs, workers=2, log=lines.append)
    message = str(err.value)
    assert "2 of 2 training sets failed to build" in message
    assert str(tmp_path / "a") in message and str(tmp_path / "b") in message
    assert "at least 10" in message  # the worker's own error survives the process boundary
    assert any(line.startswith("[a] failed") for line in lines)
    assert any(line.startswith("[b] failed") for line in lines)


@pytest.mark.slow
def test_two_sets_built_in_parallel_equal_the_same_sets_built_one_by_one(tmp_path):
    plain = DataRecipe(n_scenes=12, views=1, resolutions=(64,), samples=2, captions_per_image=1)
    groups = NegativesRecipe(n_groups=10, resolutions=(64,), samples=2)
    jobs = [(plain, tmp_path / "par" / "plain"), (groups, tmp_path / "par" / "groups")]
    built = build_missing(jobs, workers=2)
    assert built == [d for _, d in jobs]
    # the same recipes again, one at a time, through the same (warm) render caches
    for recipe, d in jobs:
        serial = tmp_path / "ser" / d.name
        serial.mkdir(parents=True)
        (d / "renders").rename(serial / "renders")
        build_missing([(recipe, serial)], workers=1)
        a, b = load_dataset(d), load_dataset(serial)
        assert np.array_equal(a.images, b.images) and a.captions == b.captions
    assert build_missing(jobs, workers=2) == []  # built sets are skipped


def test_build_jobs_must_be_positive(capsys):
    from harness.cli import main

    assert main(["train-reference", "--data-only", "--build-jobs", "0", "--scenes", "12"]) == 2
    assert "--build-jobs must be at least 1" in capsys.readouterr().err

