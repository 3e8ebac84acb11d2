"""Leaf utilities every stage shares: errors, atomic files, hashing, sealed cache entries,
ids, bundled paths, bounded readers of user files, environment variables, progress lines and
the option value checks. Imports no other harness package."""
