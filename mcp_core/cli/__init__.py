"""The ``mcp-core`` command line: ``run``, ``inspect`` and ``dump`` a server built with mcp-core."""

from mcp_core.cli._main import main

__all__ = ["main"]
