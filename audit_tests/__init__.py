"""The study's audit suite, shipped with t3d-audit: ``pytest --pyargs audit_tests`` runs it in
any project (see README.md here and docs/writing-an-audit.md)."""
