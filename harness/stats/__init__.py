"""Statistics of the audit: pure functions on score arrays and the tidy record table.

Nothing in this package reads or writes files. Arrays follow one convention:

- ``G`` generators, ``P`` prompts (the bootstrap blocks), ``L`` levels of one factor;
  a *scene* is one (generator, prompt) cell, so ``S = G * P``.
- Scores are float64 in the evaluator's own unit; ``NaN`` marks a missing or failed
  measurement and is excluded, never counted as a score.
- Every random quantity takes an explicit ``numpy.random.Generator`` or integer seed.

Entry points: :func:`harness.stats.audit_stats.compute_audit` (every statistic of a run) and
:mod:`harness.stats.engine` (every metric row's value and prompt-bootstrap draws, shared by the
audit's intervals and the release comparison).
"""
