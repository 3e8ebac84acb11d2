"""``t3d-audit claim``: does generator A beat generator B under evaluator E, and under which
protocols? (docs/claims.md)

One module per job: ``inputs`` (the question, checked: evaluator, pair, scene set, profile,
the project's ``[tool.t3d-audit]``), ``measuring`` (the grid and the presets measured through
the audit's pipeline), ``evidence`` (the pair's margins: envelope, simultaneous band,
presets), ``searching`` (the search beyond the grid with objective ``pair:A,B``), ``verdict``
(the one-line answer and its evidence level), ``paper`` (the Markdown and LaTeX block),
``card`` (the evaluator configuration's card id), ``all_pairs`` (the partial order of N
generators), ``figures``, ``page`` (``claim.html``), ``outputs`` (``--out``, all or nothing),
``pipeline`` (one claim end to end) and ``in_audit`` (the ``audit_claim`` fixture's claims and
the report's ``claims/``).
"""
