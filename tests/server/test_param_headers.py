"""Mcp-Param-* headers (2026-07-28 HTTP) checked after per-name resolution, hidden ≡ missing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import HEADER_MISMATCH

from mcp_core import App
from mcp_core.elements import Element, ElementKind, ElementRef, Tool
from mcp_core.sources import LazySource
from mcp_core.visibility import predicate
from tests.e2e._http import serve

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

ROUTED = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    "required": ["region"],
}
BUILT: list[str] = []


def where(region: str) -> str:
    """Say which region the body named."""
    return f"served {region}"


def routed(name: str) -> Element:
    """One routed tool."""
    return Element(definition=Tool(name=name, input_schema=ROUTED), handler=where)


def catalogue() -> list[Element]:
    """Two routed tools, one of them hidden from everyone; counted when built."""
    BUILT.append("all")
    return [routed("route"), routed("secret_route")]


def one(ref: ElementRef) -> Element | None:
    """A tool by name, without building the catalogue."""
    return routed(ref.key) if ref.key in {"route", "secret_route"} else None


@pytest.fixture
def url() -> Iterator[str]:
    """An app whose routed tools come from a source that counts full builds."""
    BUILT.clear()
    app = App("routing")
    app.add_source(LazySource(catalogue, lookup=one, kinds=ElementKind.TOOL))
    app.visibility = predicate(lambda ref, session: ref.key != "secret_route")
    with serve(app.asgi()) as served:
        yield served


def tamper(region: str | None) -> Any:
    """An httpx request hook rewriting the Mcp-Param-Region header of tools/call requests."""

    async def hook(request: httpx2.Request) -> None:
        if region is not None and b'"tools/call"' in request.content:
            request.headers["Mcp-Param-Region"] = region

    return hook


async def test_a_header_that_disagrees_with_the_body_is_refused(url: str) -> None:
    """The client mirrors region into a header; a forged header is HEADER_MISMATCH, not served."""
    forged: list[str | None] = [None]

    async def hook(request: httpx2.Request) -> None:
        await tamper(forged[0])(request)

    async with (
        httpx2.AsyncClient(event_hooks={"request": [hook]}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        await client.list_tools()  # the client learns which arguments to mirror
        honest = await client.session.call_tool("route", {"region": "eu"})
        forged[0] = "us"
        with pytest.raises(MCPError) as refused:
            await client.session.call_tool("route", {"region": "eu"})
        with pytest.raises(MCPError) as hidden:
            await client.session.call_tool("secret_route", {"region": "eu"})
    assert honest.content[0].text == "served eu"  # type: ignore[union-attr]  # text content
    assert refused.value.code == HEADER_MISMATCH
    assert "Mcp-Param-Region" in refused.value.message
    # A hidden tool answers like a missing one, whatever its headers say.
    assert (hidden.value.code, hidden.value.message) == (-32602, "Unknown tool: secret_route")


async def test_a_call_does_not_list_every_tool_to_find_its_schema(url: str) -> None:
    """Calling with arguments resolves the tool by name: the catalogue is not built for it."""
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(name="route", arguments={"region": "eu"})
    )
    async with Client(url) as client:
        # Sent as is: client.call_tool would list the tools afterwards (output schemas).
        result = await client.session.send_request(request, types.CallToolResult)
        built_by_the_call = list(BUILT)
    assert result.content[0].text == "served eu"  # type: ignore[union-attr]  # text content
    assert built_by_the_call == []
