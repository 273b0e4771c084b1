"""The SDK server of ``everything_sdk.py``, unchanged, served through mcp-core.

Run it like any mcp-core app (the conformance suite drives it over streamable HTTP)::

    mcp-core run examples/adopt/everything_adopted.py --transport http --port 3001
    mcp-core inspect examples/adopt/everything_adopted.py
"""

from __future__ import annotations

from everything_sdk import mcp as sdk_server

from mcp_core.app import App
from mcp_core.bridges import MCPServerSource

app = App("mcp-core-adopted", version="1.0.0")
app.add_source(MCPServerSource(sdk_server))

if __name__ == "__main__":
    app.run()
