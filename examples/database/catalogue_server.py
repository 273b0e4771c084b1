"""A catalogue in PostgreSQL: elements as rows, handlers by id, outages survived.

    export CATALOGUE_DATABASE_URL=postgresql://user:password@127.0.0.1:5432/shop
    mcp-core run examples/database/catalogue_server.py --transport http --port 8000

The Shopware case (``docs/examples/database.md``): the shop's database holds the elements
(``mcp_elements``, created with three rows on first start), each naming a handler by id among the
server's code (``catalogue_handlers.py``). The server follows the table: a change is announced by
``NOTIFY`` and clients get ``list_changed``. When the database goes away the last good catalogue
is still served, ``catalogue_status`` says why, and the registry retries the database in the
background; when it is back, the catalogue is provided again and clients are told what changed.
Started while the database is down, the server starts all the same: it serves
``catalogue_status`` (which says why the rest is missing) and picks the elements up when the
database returns.

Configuration: ``CATALOGUE_DATABASE_URL`` (required), ``CATALOGUE_TIMEOUT`` (seconds a database
round trip may take, default 5), ``CATALOGUE_MAX_BACKOFF`` (the longest wait between the
registry's retries of an unreachable database, default 30).
"""

from __future__ import annotations

import os
import sys

from catalogue_handlers import Handlers, OrderLookup, TemplatePrompt, TemplateTool
from catalogue_source import PostgresCatalogue
from psycopg import sql

from mcp_core import App
from mcp_core.registry import Backoff

DSN = os.environ.get("CATALOGUE_DATABASE_URL") or sys.exit(
    "catalogue_server: set CATALOGUE_DATABASE_URL=postgresql://user:password@host:port/database"
)

handlers = Handlers(
    {
        "text.template": TemplateTool(),
        "prompt.template": TemplatePrompt(),
        "orders.lookup": OrderLookup(DSN),
    }
)
# What a new database starts with: the shop's orders, and three elements that name handlers.
SEED = sql.SQL("""
CREATE TABLE IF NOT EXISTS orders (id integer PRIMARY KEY, status text NOT NULL);
INSERT INTO orders VALUES (1, 'shipped'), (2, 'packing') ON CONFLICT DO NOTHING;
INSERT INTO mcp_elements (kind, key, definition, handler) VALUES
  ('tool', 'greet', '{"name": "greet", "description": "Greet a customer.",
    "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                    "required": ["name"]},
    "_meta": {"template": "Hello {name}, welcome back!"}}', 'text.template'),
  ('tool', 'order_status', '{"name": "order_status", "description": "The status of an order.",
    "inputSchema": {"type": "object", "properties": {"order": {"type": "integer"}},
                    "required": ["order"]}}', 'orders.lookup'),
  ('prompt', 'apology', '{"name": "apology", "description": "Apologise for a late order.",
    "arguments": [{"name": "order", "required": true}],
    "_meta": {"template": "Write a short apology for the delay of order {order}."}}',
   'prompt.template');
""")

catalogue = PostgresCatalogue(
    DSN, handlers=handlers, seed=SEED, timeout=float(os.environ.get("CATALOGUE_TIMEOUT", "5"))
)
MAX_BACKOFF = float(os.environ.get("CATALOGUE_MAX_BACKOFF", "30"))

# The registry retries an unavailable source on its own while the server runs.
app = App(
    "catalogue",
    version="1.0.0",
    container=handlers,
    retry=Backoff(initial=min(1.0, MAX_BACKOFF), maximum=MAX_BACKOFF),
)
app.add_source(catalogue)


@app.tool
def catalogue_status() -> str:
    """Whether the catalogue database is reachable, and which rows were skipped."""
    found = app.registry.diagnostics()
    return "\n".join(str(d) for d in found) if found else "catalogue up to date"
