"""Repository-root conftest: only registers the t3d-audit plugin.

The plugin is also exposed as the ``harness.plugin`` pytest11 entry point; naming the
entry point after the module lets pytest see it is the same plugin and load it once.
"""

pytest_plugins = ["harness.plugin"]
