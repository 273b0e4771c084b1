"""Breaks server.visibility-agrees through its registry: it offers a server no runners-up.

The registry forwards every role of the reference Registry but the optional
``resource_candidates``: a hidden resource at a URI a visible template also matches hides the URI,
where a server without the resource reads it through the template. The report hints at the cause.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_core.server import McpServer
from mcp_core.sources import ElementSource
from mcp_core.visibility import ElementVisibility

from ._delegate import Forwarding, reference
from ._served import served


def make_server(
    sources: Sequence[tuple[ElementSource, int]], *, visibility: ElementVisibility, page_size: int
) -> McpServer:
    """McpServer over the reference registry without ResourceCandidates."""
    return served(Forwarding(reference(sources)), visibility=visibility, page_size=page_size)
