"""Reporting: statistics tables, figures, the terminal summary and the report directory writer."""
