"""Slurm backend through submitit: settings (`options`), job arrays with retries (`jobs`), render and
score shards (`render`, `score`) and the flags the commands share (`cli`)."""
