"""A Scorer's identity (and so its score-cache key) includes its code: an edit to the file that
defines it gives a new identity without a ``version`` bump, a declared ``fingerprint`` replaces
the file hash, and the listing and card show which (``checkpoint``)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from harness.core.errors import EvaluatorError
from harness.evaluators.scorer import CODE_OPTION, Scorer, code_identity, scorer_spec

SOURCE = '''
from harness.evaluators.scorer import Scorer


class Bright(Scorer):
    name = "bright-test"
    needs_text = False

    def score_batch(self, images, texts):
        return [float(im.mean()) / {divisor} for im in images]
'''


def _load(path, divisor: int) -> type[Scorer]:
    path.write_text(SOURCE.format(divisor=divisor))
    name = f"t3d_code_identity_{path.parent.name}_{divisor}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module.Bright


def test_an_edit_of_the_scoring_code_is_a_new_identity(tmp_path):
    first = scorer_spec(_load(tmp_path / "scoring.py", 255))
    edited = scorer_spec(_load(tmp_path / "scoring.py", 128))  # same name, same version
    assert first.checkpoint.startswith("version 1, code sha256:")
    assert dict(first.options)[CODE_OPTION] != dict(edited.options)[CODE_OPTION]
    assert first.identity_hash != edited.identity_hash
    again = scorer_spec(_load(tmp_path / "scoring.py", 255))
    assert again.identity_hash == first.identity_hash  # the same code: the same cache


def test_a_declared_fingerprint_replaces_the_file_hash():
    class Pinned(Scorer):
        name = "pinned-test"
        fingerprint = "mypkg 2.3.1"

        def score_batch(self, images, texts):
            return [0.0] * len(images)

    assert code_identity(Pinned) == "declared:mypkg 2.3.1"
    assert scorer_spec(Pinned).checkpoint == "version 1, code declared:mypkg 2.3.1"

    class Blank(Pinned):
        fingerprint = "  "

    with pytest.raises(EvaluatorError, match="fingerprint must be a non-empty string"):
        scorer_spec(Blank)
