"""The harness's own tests (a package so shared helpers import as ``tests._x``)."""
