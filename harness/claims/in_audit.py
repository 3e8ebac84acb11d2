"""Claims inside an audit run: what the ``audit_claim`` fixture runs (docs/claims.md "In an
audit").

A test asks ``audit_claim(a, b, ...)`` for its evaluator; the claim is
:func:`harness.claims.pipeline.run_claim` on the run's scene set, profile, renderer, cache,
seed, bootstrap and gate thresholds, so its grid reads the renders and scores the audit already
made. A claim is computed once per process, under a file lock per evaluator and request:
xdist workers asking the same claim wait for the first and then read its renders, scores and
search trial log back (a warm claim, no render made twice), so ``-n 0`` and ``-n 2`` give the
same document.

Each claim a test made is also shown in the run's ``report.html``: the fixture records the
request on the test's report (:func:`request_property`), the controller collects them and asks
:meth:`AuditClaims.report_files` for every claim's ``--out`` files (warm: the claim's renders,
scores and trial log are in the cache), which the report writes under ``claims/<name>/``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness.core.errors import AuditError
from harness.core.locks import held_lock
from harness.run.session import CLAIM_PROPERTY, SESSION_KEY

if TYPE_CHECKING:
    from harness.checks.thresholds import Thresholds
    from harness.claims.inputs import ClaimRequest
    from harness.claims.pipeline import ClaimResult
    from harness.run.inputs import RunInputs

__all__ = ["CLAIM_PROPERTY", "AuditClaims", "audit_claims", "folder_name", "request_of_property", "request_property"]


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
        self._results: dict[str, ClaimResult] = {}
        self._docs: dict[str, dict[str, object]] = {}

    def request(self, evaluator_id: str, a: str, b: str, *, presets: str = "all", search_budget: int = 16,
                flip_points: int = 32, max_views: int = 4, seed: int | None = None) -> ClaimRequest:  # fmt: skip
        """The claim "``a`` beats ``b`` under ``evaluator_id``" on the run's profile, scenes,
        seed and bootstrap (module doc). ``presets``: ``"all"``, ``"none"`` or names joined by
        commas; ``search_budget``, ``flip_points``, ``max_views`` as ``t3d-audit claim``'s
        options; ``seed``: default the run's ``--audit-seed``. An :class:`AuditError` under
        ``--audit-profile-file``."""
        from harness.claims.inputs import ClaimRequest

        options = self.inputs.options
        if options.profile_file is not None:
            raise AuditError("a claim runs on a named profile; this run reads --audit-profile-file",
                             where="audit_claim", hint="run the claim with t3d-audit claim --profile NAME")  # fmt: skip
        request = ClaimRequest(evaluator_id, a, b, profile=options.profile, scenes=options.scenes, presets=presets,
                               search_budget=search_budget, flip_points=flip_points,
                               seed=self.inputs.seed if seed is None else seed, bootstrap=self.inputs.bootstrap,
                               max_views=max_views)  # fmt: skip
        return request

    def answer(self, request: ClaimRequest) -> dict[str, object]:
        """The claim document of ``request`` (:meth:`request`), computed once per process; bad
        input is an :class:`AuditError`."""
        return self._docs[self._claimed(request)]

    def _claimed(self, request: ClaimRequest) -> str:
        """``request``'s key, its claim computed first when this process has not yet."""
        key = _request_key(request)
        if key not in self._results:
            result = self._run(request, key)
            self._results[key], self._docs[key] = result, result.to_dict()
        return key

    def report_files(self, properties: Iterable[str]) -> dict[str, dict[str, bytes]]:
        """The report's ``claims/`` folder: for each distinct request among ``properties``
        (:func:`request_property` strings, in any order, repeats ignored) its folder name
        (:func:`folder_name`) → the ``t3d-audit claim --out`` files as bytes."""
        from harness.claims.pipeline import output_files

        requests = {_request_key(r): r for r in map(request_of_property, properties)}
        files = {}
        for key in sorted(requests):
            self._claimed(requests[key])
            files[folder_name(requests[key], key)] = output_files(self._results[key], self.inputs.renderer)
        return files

    def _run(self, request: ClaimRequest, key: str) -> ClaimResult:
        from harness.claims.inputs import ProjectConfig
        from harness.claims.pipeline import run_claim

        cache = Path(self.inputs.options.cache_dir)
        config = ProjectConfig(Path.cwd(), None, None, (), self._thresholds())
        spec = self.inputs.specs.get(request.evaluator)
        with held_lock(cache / "claims" / f"audit-{key}.lock", "the audit's claim"):
            result = run_claim(request, cache_dir=cache, renderer=self.inputs.renderer, config=config,  # type: ignore[arg-type]
                               offered=[spec] if spec is not None else None)  # fmt: skip
        self._announce(f"t3d-audit: claim {result.inputs.spec.id}: {result.verdict.line}")
        return result


_CLAIMS_KEY: pytest.StashKey[AuditClaims] = pytest.StashKey()


def audit_claims(config: pytest.Config) -> AuditClaims:
    """This process's :class:`AuditClaims` of the run, kept on the pytest ``config`` (made on
    first ask): the ``audit_claim`` fixture asks it for claims and, in the controller, the
    report for its files, so a lone process reuses the claims its tests made."""
    found = config.stash.get(_CLAIMS_KEY, None)
    if found is None:
        session = config.stash[SESSION_KEY]
        found = AuditClaims(session.inputs, lambda: session.gate_thresholds,
                            lambda line: session.record_cache.announce(line))  # fmt: skip
        config.stash[_CLAIMS_KEY] = found
    return found


def request_property(request: ClaimRequest) -> str:
    """``request`` as the JSON string a test report carries (:data:`CLAIM_PROPERTY`)."""
    from dataclasses import asdict

    return json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in asdict(request).items()}, sort_keys=True)


def request_of_property(text: str) -> ClaimRequest:
    """The :class:`ClaimRequest` of a :func:`request_property` string."""
    from harness.claims.inputs import ClaimRequest

    fields = json.loads(text)
    if fields.get("scenes") is not None:
        fields["scenes"] = Path(fields["scenes"])
    if fields.get("generators") is not None:
        fields["generators"] = tuple(fields["generators"])
    return ClaimRequest(**fields)


def folder_name(request: ClaimRequest, key: str) -> str:
    """The claim's folder in the report: ``<evaluator>--<a>-vs-<b>--<key[:8]>``, each name's
    characters outside ``[A-Za-z0-9._-]`` replaced by ``_`` (the key tells apart two requests
    of the same pair with other options)."""

    def safe(text: object) -> str:
        return re.sub(r"[^A-Za-z0-9._-]", "_", str(text))[:60]

    return f"{safe(request.evaluator)}--{safe(request.a)}-vs-{safe(request.b)}--{key[:8]}"


def _request_key(request: ClaimRequest) -> str:
    """A short stable key of ``request`` (its fields; the lock file's name)."""
    return hashlib.sha256(request_property(request).encode("utf-8")).hexdigest()[:16]
