"""bench/probe.py reports the versions of what it measured, under the names the table shows."""

from __future__ import annotations

import argparse

import pytest

from bench import probe


@pytest.mark.parametrize("mode", ["stdio", "http"])
def test_the_probe_finds_mcp_core_under_its_distribution(mode: str) -> None:
    """``mcp-core`` is installed as ``mcp-core-server``; the probe finds it, never "absent"."""
    found = probe._versions(argparse.Namespace(lib="mcp-core", mode=mode))
    assert "absent" not in found.values(), found
    assert set(found) >= {"mcp-core", "mcp", "pydantic"}
