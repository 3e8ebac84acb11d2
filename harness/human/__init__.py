"""Human judgments: ratings and pairwise votes (validation, importers of public formats), the
join with evaluator scores, and agreement inside a run. The statistics of
agreement (pure functions on arrays) sit beside them: ``item_agreement``, ``rater_reliability``,
``generator_agreement``, ``agreement_draws``, ``degenerate``, ``protocol_dependence`` and
``agreement_table``."""
