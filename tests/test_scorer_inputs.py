"""A user Scorer gets safe inputs (read-only copies), runs on one persistent thread of its own,
and a call past the deadline is stopped, never scored (fast, in process)."""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import ClassVar

import numpy as np
import pytest

from harness.evaluators.registry import register, unregister
from harness.evaluators.scorer import Scorer, ScorerEvaluator, build
from harness.evaluators.scorer_thread import changed_inputs, frozen_inputs


def _image(value: int) -> np.ndarray:
    return np.full((4, 4, 3), value, np.uint8)


class InPlace(Scorer):
    """Normalises in place (a common preprocessing shortcut): the mean after ``-= 10``."""

    name = "in-place"
    batch_size = 1

    def score_batch(self, images, texts):
        out = []
        for image in images:
            image -= 10
            out.append(float(image.mean()))
        return out


def test_one_image_scored_for_several_captions_is_not_changed_by_an_in_place_scorer():
    """Before: the same writable array went to the scorer once per caption, so each caption's
    score saw the previous caption's edit (40, 30, 20) and the caller's image was changed."""
    image = _image(50)
    ev = ScorerEvaluator(InPlace.spec(), InPlace(), 1, deadline_s=5)
    results = ev.score([image] * 3, ["a", "b", "c"])
    assert (image == 50).all()  # the caller's array is untouched
    assert [r.status for r in results] == ["failed"] * 3  # the edit is refused, never scored
    assert all("read-only" in r.error for r in results)
    ev.close()


class Flips(Scorer):
    """Makes its input writable again and edits it: caught after the call."""

    name = "flips"
    batch_size = 2

    def score_batch(self, images, texts):
        images[0].flags.writeable = True
        images[0][0, 0, 0] = 255
        return [0.5] * len(images)


def test_a_scorer_that_mutates_its_inputs_anyway_fails_the_batch_and_the_caller_keeps_its_image():
    image = _image(7)
    ev = ScorerEvaluator(Flips.spec(), Flips(), 2, deadline_s=5)
    results = ev.score([image, image, _image(3)], ["a", "b", "c"])
    assert [r.status for r in results] == ["failed"] * 3
    assert "changed image 0 in place" in results[0].error
    assert (image == 7).all()


class PopsList(Scorer):
    name = "pops"
    batch_size = 2

    def score_batch(self, images, texts):
        texts[0] = "changed"
        return [0.5] * len(images)


def test_a_scorer_that_edits_the_lists_it_was_given_fails_the_batch():
    ev = ScorerEvaluator(PopsList.spec(), PopsList(), 2, deadline_s=5)
    results = ev.score([_image(1)] * 2, ["a", "b"])
    assert [r.status for r in results] == ["failed"] * 2
    assert "list of texts" in results[0].error


class Legit(Scorer):
    """Reads only: scores unchanged by the copies."""

    name = "legit"
    batch_size = 2

    def score_batch(self, images, texts):
        return [float(im.astype(np.float64).mean()) / 255 for im in images]


def test_a_scorer_that_only_reads_scores_as_before():
    ev = ScorerEvaluator(Legit.spec(), Legit(), 2, deadline_s=5)
    results = ev.score([_image(51), _image(102), _image(51)], ["a", "b", "c"])
    assert [r.score for r in results] == [0.2, 0.4, 0.2]
    ev.close()


def test_frozen_inputs_copy_each_distinct_array_once_and_read_only():
    a, b = _image(1), _image(2)
    out = frozen_inputs([a, b, a])
    assert out[0] is out[2] and out[0] is not a and not out[0].flags.writeable
    assert changed_inputs([a, b, a], out, list(out), ["x"] * 3, ["x"] * 3) is None


class SessionBound(Scorer):
    """Holds an sqlite3 connection: usable only on the thread that opened it."""

    name = "session-bound"
    batch_size = 1
    closed_on: ClassVar[list[int]] = []

    def __init__(self, device="auto"):
        super().__init__(device)
        self.db = sqlite3.connect(":memory:")  # check_same_thread=True: a thread-bound handle

    def score_batch(self, images, texts):
        return [float(self.db.execute("select 0.25").fetchone()[0]) for _ in images]

    def close(self):
        self.db.close()
        SessionBound.closed_on.append(threading.get_ident())


def test_a_thread_bound_handle_made_in_init_works_in_every_batch_and_in_close():
    """Before: each batch ran on a fresh thread, so sqlite3 raised ProgrammingError ("objects
    created in a thread can only be used in that same thread") and every row failed."""
    register(SessionBound)
    spec = SessionBound.spec()
    try:
        ev = build(spec, batch_size=1)
        results = ev.score([_image(1)] * 3, ["a", "b", "c"])
        assert [r.status for r in results] == ["ok"] * 3, results[0].error
        assert [r.score for r in results] == [0.25] * 3
        worker = ev.thread.thread.ident
        ev.close()
        assert SessionBound.closed_on == [worker]
        ev.thread.thread.join(5)
        assert not ev.thread.thread.is_alive()  # the thread ends after close
    finally:
        unregister(spec.id)


class BusyLoop(Scorer):
    name = "busy-loop"
    batch_size = 1
    iterations: ClassVar[list[int]] = [0]

    def score_batch(self, images, texts):
        while True:
            BusyLoop.iterations[0] += 1


def test_a_busy_loop_past_the_deadline_is_a_failure_and_its_thread_stops_burning_cpu():
    """Before: the thread that passed its deadline kept looping until the process exited."""
    ev = ScorerEvaluator(BusyLoop.spec(), BusyLoop(), 1, deadline_s=0.3)
    results = ev.score([_image(1)] * 2, ["a", "b"])
    assert [r.status for r in results] == ["failed", "failed"]
    assert "deadline of 0.3 s" in results[0].error and "told to stop" in results[1].error
    ev.thread.thread.join(5)
    assert not ev.thread.thread.is_alive()
    after = BusyLoop.iterations[0]
    time.sleep(0.2)
    assert BusyLoop.iterations[0] == after  # no iteration since


class Late(Scorer):
    name = "late"
    batch_size = 1

    def score_batch(self, images, texts):
        for _ in range(100):
            time.sleep(0.01)
        return [0.5] * len(images)


def test_a_result_returned_after_the_deadline_is_never_a_score():
    ev = ScorerEvaluator(Late.spec(), Late(), 1, deadline_s=0.2)
    results = ev.score([_image(1)] * 2, ["a", "b"])
    assert [r.status for r in results] == ["failed", "failed"]
    time.sleep(1.2)  # past when the late call would have returned
    assert all(np.isnan(r.score) for r in results)


@pytest.mark.parametrize(("returned", "reason"), [
    (lambda n: (0.5 for _ in range(n)), "returned a generator"),
    (lambda n: [0.5] * (n + 1), "3 scores for 2 rows"),
    (lambda n: [0.5] * (n - 1), "1 scores for 2 rows"),
])  # fmt: skip
def test_a_generator_or_the_wrong_count_of_values_fails_every_row(returned, reason):
    cls = type("Gives", (Scorer,), {"name": "gives", "batch_size": 2,
                                    "score_batch": lambda self, images, texts: returned(len(images))})
    ev = ScorerEvaluator(cls.spec(), cls(), 2, deadline_s=5)
    results = ev.score([_image(1)] * 2, ["a", "b"])
    assert [r.status for r in results] == ["failed", "failed"]
    assert all(reason in r.error for r in results)


def test_a_second_close_returns_at_once():
    ev = ScorerEvaluator(Legit.spec(), Legit(), 2, deadline_s=30)
    ev.score([_image(1)], ["a"])
    ev.close()
    ev.thread.thread.join(5)
    started = time.monotonic()
    ev.close()  # the thread has ended: not a wait for the deadline
    assert time.monotonic() - started < 5
