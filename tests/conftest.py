"""Test-suite configuration shared by every test module."""

from __future__ import annotations

import os

from hypothesis import settings

# Two noisy cores run the whole suite in parallel: a per-example deadline would turn machine load
# into flaky failures without telling us anything about the code.
# Under CI keep hypothesis's own "ci" profile (derandomized, no database) as the base.
_parent = settings.get_profile("ci") if os.environ.get("CI") else settings.get_profile("default")
settings.register_profile("mcp-core", parent=_parent, deadline=None)
settings.load_profile("mcp-core")
