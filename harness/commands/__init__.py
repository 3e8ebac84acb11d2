"""Subcommands of ``t3d-audit``; see ``harness.cli``."""
