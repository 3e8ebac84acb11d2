"""The release gate: is a new release of an evaluator no worse than the last one?

* :mod:`harness.release.comparison`: the paired comparison of two record tables (pure
  statistics, no I/O): metrics, the prompt-block bootstrap, verdicts against margins;
* :mod:`harness.release.margins`: ``[tool.t3d-audit.compare]`` margins and their overrides;
* :mod:`harness.release.baselines`: reading a release (report, saved baseline or score file),
  its trust checks, saving a baseline, the comparison's Markdown and JSON outputs;
* :mod:`harness.release.gate`: ``pytest --audit-baseline``, the comparison as parametrized tests.

Used by ``t3d-audit compare``, ``t3d-audit audit --save-baseline``, the pytest plugin and
:mod:`harness.api` (docs/release-gate.md). Nothing is imported here, so loading the gate's
pytest plugin loads only what it uses.
"""
