"""A middleware denies one tool wherever it comes from, over every transport and in both eras.

``tests/e2e/servers/operated_server.py`` serves a local, two adopted (SDK ``MCPServer``,
fastmcp) and a proxied (``RemoteSource`` over HTTP) tool of each kind, the ``*secret`` ones denied by its
middleware; the official client reaches it over stdio and streamable HTTP, in the 2026-07-28 era
(the client's default) and the 2025-11-25 one (``mode="legacy"``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.clients import ROOT, ok_text, stdio, tool_names
from tests.e2e.conftest import run_http, serving_http, stop

OPERATED = ROOT / "tests" / "e2e" / "servers" / "operated_server.py"
BACKEND = ROOT / "tests" / "e2e" / "servers" / "operated_backend.py"

ORIGINS = ("local", "adopted", "fast", "remote")
"""Where the tools come from: declared, adopted (SDK, fastmcp), proxied."""

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture(scope="module")
def backend() -> Iterator[str]:
    """The backend the operated server proxies, served over HTTP: its MCP URL."""
    url, process = run_http(BACKEND)
    try:
        yield f"{url}/mcp"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def operated_http(backend: str) -> Iterator[str]:
    """The operated server over streamable HTTP."""
    with serving_http(OPERATED, env={"OPERATED_BACKEND": backend}) as url:
        yield url


def target(transport: str, backend: str, request: pytest.FixtureRequest) -> Any:
    """Where the client reaches the operated server over ``transport``."""
    if transport == "stdio":
        return stdio(OPERATED, env={"OPERATED_BACKEND": backend})
    return request.getfixturevalue("operated_http")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_one_tool_denied_wherever_it_comes_from(
    transport: str, mode: str, backend: str, request: pytest.FixtureRequest
) -> None:
    """Each ``*secret`` tool is refused with the middleware's error; its neighbours answer."""
    async with Client(target(transport, backend, request), mode=mode) as client:
        names = await tool_names(client)
        echoes = {
            origin: ok_text(await client.call_tool(f"{origin}_echo", {"text": "hi"}))
            for origin in ORIGINS
        }
        refusals = {}
        for origin in ORIGINS:
            with pytest.raises(MCPError) as refused:
                await client.call_tool(f"{origin}_secret", {})
            refusals[origin] = refused.value.error
        seen = json.loads(ok_text(await client.call_tool("middleware_seen", {})))
        era = client.protocol_version
    # The middleware denies calls, not listings: every tool is listed.
    assert {f"{origin}_secret" for origin in ORIGINS} <= names
    assert echoes == {origin: f"{origin}: hi" for origin in ORIGINS}
    for origin, error in refusals.items():
        assert error.code == -32600
        assert error.message == f"the operator denies {origin}_secret"
        assert error.data == {"denied": True}
    # What the middleware had in hand: the era, and the element for each call.
    calls = [entry for entry in seen if entry["method"] == "tools/call"]
    assert {entry["target"] for entry in calls} >= {
        f"{origin}_{what}" for origin in ORIGINS for what in ("echo", "secret")
    }
    assert all(entry["element"] for entry in calls)
    assert {entry["era"] for entry in seen if entry["era"] is not None} >= {era}
    assert any(entry["method"] == "tools/list" and not entry["element"] for entry in seen)
    if mode == "legacy":
        assert era == "2025-11-25"
    else:
        assert era == "2026-07-28"


async def test_unknown_tool_reaches_middleware_without_an_element(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """A call to no tool reaches the middleware with no element, and answers as unknown."""
    async with Client(target("http", backend, request)) as client:
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("nothing_here", {})
        seen = json.loads(ok_text(await client.call_tool("middleware_seen", {})))
    assert unknown.value.error.message == "Unknown tool: nothing_here"
    assert {
        "method": "tools/call",
        "target": "nothing_here",
        "era": "2026-07-28",
        "element": False,
    } in seen
