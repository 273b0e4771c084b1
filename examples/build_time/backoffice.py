"""The back-office server: the whole built catalogue, under the ``shop`` prefix.

    mcp-core run examples/build_time/backoffice.py --transport http --port 8001

The same ``catalog.json`` as the storefront serves, through a prefixed view: every element, its
tools and prompts named ``shop_...`` and its URIs under the ``shop+shop://`` scheme, so it can
sit beside other catalogues in one staff server (``docs/examples/build-time.md``).
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp_core import App
from mcp_core.sources import CollectionFileSource, PrefixedSource

# Where the build put the catalogue (SHOP_CATALOG), by default beside this file.
CATALOG = Path(os.environ.get("SHOP_CATALOG") or Path(__file__).resolve().with_name("catalog.json"))

app = App("backoffice", version="1.0.0")
app.add_source(PrefixedSource(CollectionFileSource(CATALOG), "shop"))
