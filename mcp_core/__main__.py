"""``python -m mcp_core``: the ``mcp-core`` command, for an interpreter whose scripts are not on PATH."""

from __future__ import annotations

import sys

from mcp_core.cli import main

if __name__ == "__main__":
    sys.exit(main())
