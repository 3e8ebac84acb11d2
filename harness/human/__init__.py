"""Human judgments: ratings and pairwise votes (validation, importers of public formats), the
join with evaluator scores, and agreement inside a run. The statistics live in ``stats/human_*``."""
