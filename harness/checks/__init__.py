"""Audit checks: threshold assertions, their wording, and the configured thresholds."""
