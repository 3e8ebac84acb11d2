"""``harness.core.locks.held_lock``: the cache lock a search or a claim of an audit holds."""

from __future__ import annotations

import pytest

from harness.core.errors import AuditError
from harness.core.locks import held_lock
from harness.search.pipeline import SearchError


def test_the_lock_is_held_in_the_block_and_released_after_it(tmp_path):
    from filelock import FileLock, Timeout

    path = tmp_path / "made" / "audit-x.lock"
    with held_lock(path, "the audit's claim"):
        assert path.parent.is_dir()
        with pytest.raises(Timeout):
            FileLock(str(path), timeout=0.05).acquire()
    with FileLock(str(path), timeout=0.05):
        pass


def test_a_symlink_in_the_locks_place_is_one_clear_error_of_the_callers_class(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("keep me")
    path = tmp_path / "audit-x.lock"
    path.symlink_to(target)
    with pytest.raises(SearchError) as caught, held_lock(path, "the audit's search of 'x'", SearchError):
        pytest.fail("the block ran without the lock")
    assert str(caught.value).startswith(f"{path}: cannot lock the audit's search of 'x': it is a symlink")
    assert "remove it" in str(caught.value) and caught.value.__cause__ is None
    assert target.read_text() == "keep me"


def test_a_folder_in_the_locks_place_is_an_audit_error(tmp_path):
    (tmp_path / "audit-x.lock").mkdir()
    with pytest.raises(AuditError, match="cannot lock the audit's claim"), held_lock(tmp_path / "audit-x.lock", "the audit's claim"):
        pass
