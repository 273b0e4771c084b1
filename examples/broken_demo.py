"""A server with a broken element and a failing source that still serves everything else.

    mcp-core inspect examples/broken_demo.py

shows the two working tools and the resource, and diagnoses the rest: the source whose backend
is down (it contributes nothing until it answers; a server retries it in the background), the
prompt paired with a tool handler
(skipped at registration), and the tool whose handler reference names a module that does not
exist (found ahead of time by the invoker's check; calling it would be an internal error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_core.app import App
from mcp_core.elements import Element, ElementCollection, ElementKind, HandlerRef, Prompt, Tool
from mcp_core.errors import SourceUnavailableError
from mcp_core.handlers import ClientGateway
from mcp_core.sources import StaticSource

app = App("broken-demo")


@app.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@app.tool
def echo(text: str) -> str:
    """Repeat the text."""
    return text


@app.resource("demo://status", mime_type="text/plain")
def status() -> str:
    """What still works."""
    return "degraded: one source is down, two elements are broken"


class InventoryDatabase:
    """A source over a database that is down."""

    def __repr__(self) -> str:
        return "InventoryDatabase('postgres://inventory')"

    def kinds(self) -> ElementKind:
        """Tools, when the database is up."""
        return ElementKind.TOOL

    async def provide(self) -> ElementCollection:
        """Always fails: the database is down."""
        raise SourceUnavailableError("connection refused (postgres://inventory:5432)", source=self)


class _ToolShaped:
    """A tool handler object, wrongly paired with a prompt below."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:  # noqa: ARG002 -- the protocol's signature
        """Never called: the registry skips the element."""
        return "never"


broken = ElementCollection(
    [
        Element(
            definition=Prompt(name="summary", description="Summarise the inventory."),
            handler=_ToolShaped(),
        ),
        Element(
            definition=Tool(
                name="restock", description="Restock an item.", input_schema={"type": "object"}
            ),
            handler=HandlerRef("inventory_plugin.tools:restock"),
        ),
    ]
)

app.add_source(InventoryDatabase())
app.add_source(StaticSource(broken))
