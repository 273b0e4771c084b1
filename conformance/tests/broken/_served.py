"""McpServer over the reference registry, as the kit certifies it; broken servers change a part."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.server import McpServer, ServableRegistry
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

from ._delegate import reference

LIST_ITEMS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}
"""Each list method and the key of its items in the result."""


def served(
    registry: ServableRegistry, *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """``McpServer`` with the kit's visibility and page size."""
    return McpServer(registry, name="broken", visibility=visibility, page_size=page_size)


def registry_of(sources: Sequence[tuple[ElementSource, int]]) -> ServableRegistry:
    """The reference registry over the kit's sources."""
    return reference(sources)
