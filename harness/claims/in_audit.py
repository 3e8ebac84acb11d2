"""Claims inside an audit run: what the ``audit_claim`` fixture runs (docs/claims.md "In an
audit").

A test asks ``audit_claim(a, b, ...)`` for its evaluator; the claim is
:func:`harness.claims.pipeline.run_claim` on the run's scene set, profile, renderer, cache,
seed, bootstrap and gate thresholds, so its grid reads the renders and scores the audit already
made. A claim is computed once per process, under a file lock per evaluator and request:
xdist workers asking the same claim wait for the first and then read its renders, scores and
search trial log back (a warm claim, no render made twice), so ``-n 0`` and ``-n 2`` give the
same document.
"""

from __future__ import annotations

import errno
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.errors import AuditError

if TYPE_CHECKING:
    from harness.checks.thresholds import Thresholds
    from harness.claims.inputs import ClaimRequest
    from harness.run.inputs import RunInputs


class AuditClaims:
    """The run's claims (``t3d-audit claim --json``'s documents), each computed once per process.

    ``inputs``: the run's inputs; ``thresholds``: the run's gate thresholds (the search's
    objective threshold reads them); ``announce``: where the verdict line goes (past pytest's
    capture)."""

    def __init__(self, inputs: RunInputs, thresholds: Callable[[], Thresholds],
                 announce: Callable[[str], None] = lambda line: None) -> None:  # fmt: skip
        self.inputs = inputs
        self._thresholds = thresholds
        self._announce = announce
        self._done: dict[str, dict[str, object]] = {}

    def claim(self, evaluator_id: str, a: str, b: str, *, presets: str = "all", search_budget: int = 16,
              flip_points: int = 32, max_views: int = 4, seed: int | None = None) -> dict[str, object]:  # fmt: skip
        """The claim "``a`` beats ``b`` under ``evaluator_id``" on the run's inputs (module doc).
        ``presets``: ``"all"``, ``"none"`` or names joined by commas; ``search_budget``,
        ``flip_points``, ``max_views`` as ``t3d-audit claim``'s options; ``seed``: default the
        run's ``--audit-seed``. Bad input is an :class:`AuditError`."""
        from harness.claims.inputs import ClaimRequest

        options = self.inputs.options
        if options.profile_file is not None:
            raise AuditError("a claim runs on a named profile; this run reads --audit-profile-file",
                             where="audit_claim", hint="run the claim with t3d-audit claim --profile NAME")  # fmt: skip
        request = ClaimRequest(evaluator_id, a, b, profile=options.profile, scenes=options.scenes, presets=presets,
                               search_budget=search_budget, flip_points=flip_points,
                               seed=self.inputs.seed if seed is None else seed, bootstrap=self.inputs.bootstrap,
                               max_views=max_views)  # fmt: skip
        key = _request_key(request)
        if key not in self._done:
            self._done[key] = self._run(request, key)
        return self._done[key]

    def _run(self, request: ClaimRequest, key: str) -> dict[str, object]:
        from filelock import FileLock

        from harness.claims.inputs import ProjectConfig
        from harness.claims.pipeline import run_claim

        cache = Path(self.inputs.options.cache_dir)
        locks = cache / "claims"
        locks.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(locks / f"audit-{key}.lock"))
        try:
            lock.acquire()
        except OSError as exc:  # a symlink (never followed), a folder or a device in its place
            what = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
            raise AuditError(f"cannot lock the audit's claim: {what}", where=lock.lock_file,
                             hint="remove it; the audit creates its own") from None  # fmt: skip
        config = ProjectConfig(Path.cwd(), None, None, (), self._thresholds())
        spec = self.inputs.specs.get(request.evaluator)
        try:
            result = run_claim(request, cache_dir=cache, renderer=self.inputs.renderer, config=config,  # type: ignore[arg-type]
                               offered=[spec] if spec is not None else None)  # fmt: skip
        finally:
            lock.release()
        self._announce(f"t3d-audit: claim {result.inputs.spec.id}: {result.verdict.line}")
        return result.to_dict()


def _request_key(request: ClaimRequest) -> str:
    """A short stable key of ``request`` (its fields; the lock file's name)."""
    from dataclasses import asdict

    from harness.core.hashing import canonical_json

    fields = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(request).items()}
    return hashlib.sha256(canonical_json(fields)).hexdigest()[:16]
