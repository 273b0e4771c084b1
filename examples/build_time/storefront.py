"""The storefront server: the public part of the built catalogue, as it is.

    mcp-core run examples/build_time/storefront.py --transport http --port 8000

It serves ``catalog.json`` (written at build time by ``mcp-core dump``) through a filtered view:
only the elements tagged ``public``. Starting it imports no handler module and derives no schema;
a handler's module is imported when it is first called (``docs/examples/build-time.md``).
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp_core import App
from mcp_core.elements import Element
from mcp_core.sources import CollectionFileSource, FilteredSource

# Where the build put the catalogue (SHOP_CATALOG), by default beside this file.
CATALOG = Path(os.environ.get("SHOP_CATALOG") or Path(__file__).resolve().with_name("catalog.json"))


def public(element: Element) -> bool:
    """Whether the storefront serves ``element``."""
    return "public" in element.tags


app = App("storefront", version="1.0.0")
app.add_source(FilteredSource(CollectionFileSource(CATALOG), public))
