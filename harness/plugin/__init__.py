"""pytest plugin of t3d-audit (registered by the root conftest and the pytest11 entry point).

One module per feature, each holding its own hooks, options and fixtures; this package only
registers them (``pytest_plugins``), the way pytest builds itself from plugin modules:

- :mod:`harness.plugin.options`: the ``--audit-*`` options, the ``pytest_audit_*`` hook
  specifications and the rootdir that ``--audit-cache-dir`` implies;
- :mod:`harness.plugin.configure`: the run's one :class:`~harness.run.session.AuditSession`
  (stored under a StashKey) and the xdist worker/controller branch, taken once;
- :mod:`harness.plugin.warm`: ``t3d-audit audit``'s choice to start no xdist workers on a warm
  cache (an object the command registers, not listed here);
- :mod:`harness.plugin.parametrize`: evaluator x factor x probe x block parametrization;
- :mod:`harness.plugin.collection`: the ``audit`` marker, the panel tests last, checks a run
  does not have removed before it records its scope;
- :mod:`harness.plugin.reporting`: each audit test's result as a user property and the
  per-run hooks that hand results to the run's sink;
- :mod:`harness.plugin.fixtures`: the ``audit_*`` fixtures;
- :mod:`harness.release.gate`: ``--audit-baseline``, the release comparison as tests.

Nothing heavy is imported at collection time.
"""

# Imported modules first: a module is registered (and its asserts rewritten) before another imports it.
pytest_plugins = [
    "harness.plugin.options",
    "harness.plugin.parametrize",
    "harness.plugin.collection",
    "harness.plugin.reporting",
    "harness.plugin.configure",
    "harness.plugin.fixtures",
    "harness.release.gate",
]
