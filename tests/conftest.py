"""Test-suite configuration shared by every test module."""

from __future__ import annotations

from hypothesis import settings

# Two noisy cores run the whole suite in parallel: a per-example deadline would turn machine load
# into flaky failures without telling us anything about the code.
settings.register_profile("mcp-core", deadline=None)
settings.load_profile("mcp-core")
