"""Per-session visibility from bearer tokens, over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager

import httpx2
import pytest
from mcp import Client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.shared.exceptions import MCPError
from pydantic import AnyHttpUrl

from mcp_core.elements import ElementCollection
from mcp_core.handlers import tool_from_function
from mcp_core.registry import Registry
from mcp_core.server import McpServer
from mcp_core.sources import StaticSource
from mcp_core.visibility import SessionInfo, scoped_by_tag
from tests.clients import bearer
from tests.e2e._http import serve
from tests.e2e.conftest import free_port

TOKENS = {
    name: AccessToken(token=name, client_id=f"{who}-app", scopes=scopes, subject=who)
    for name, who, scopes in (("alice-token", "alice", ["admin"]), ("bob-token", "bob", []))
}


class StaticTokens:
    """A token verifier that knows two tokens."""

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's access info, or None for an unknown token."""
        return TOKENS.get(token)


def whoami() -> str:
    """Say who is calling."""
    return "someone"


def shutdown() -> str:
    """An admin-only tool."""
    return "shutting down"


seen: list[SessionInfo] = []


def remember(info: SessionInfo) -> SessionInfo:
    """Record the SessionInfo the transport built."""
    seen.append(info)
    return info


@pytest.fixture
def url() -> Iterator[str]:
    """An authenticated McpServer under uvicorn (in a thread) on a free loopback port."""
    registry = Registry(
        [
            (
                StaticSource(
                    ElementCollection(
                        [
                            tool_from_function(whoami),
                            tool_from_function(shutdown, tags=("scope:admin",)),
                        ]
                    )
                ),
                0,
            )
        ]
    )
    server = McpServer(registry, visibility=scoped_by_tag(registry), session_hook=remember)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    resource = AnyHttpUrl(f"{base}/mcp")
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(base), resource_server_url=resource, validate_token_resource=False
    )
    with serve(server.streamable_http_app(token_verifier=StaticTokens(), auth=auth), port) as url:
        yield url


def authed(url: str, token: str) -> AbstractAsyncContextManager[Client]:
    """A connected client sending ``token`` as its bearer token."""
    return bearer(url, token, mode="legacy")


class TestBearerVisibility:
    """Scopes from the bearer token decide what each session sees."""

    async def test_two_tokens(self, url: str) -> None:
        """The admin-scoped session lists and calls the admin tool; the other cannot tell it exists."""
        seen.clear()
        async with authed(url, "alice-token") as alice, authed(url, "bob-token") as bob:
            alice_tools = {t.name for t in (await alice.list_tools()).tools}
            bob_tools = {t.name for t in (await bob.list_tools()).tools}
            called = await alice.call_tool("shutdown")
            with pytest.raises(MCPError) as hidden:
                await bob.call_tool("shutdown")
        assert alice_tools == {"whoami", "shutdown"}
        assert bob_tools == {"whoami"}
        assert called.is_error is not True
        assert (hidden.value.code, hidden.value.message) == (-32602, "Unknown tool: shutdown")
        principals = {(info.principal, info.client_id, info.scopes) for info in seen}
        assert principals == {
            ("alice", "alice-app", frozenset({"admin"})),
            ("bob", "bob-app", frozenset()),
        }
        assert all(info.session_id for info in seen)

    async def test_no_token_is_refused(self, url: str) -> None:
        """Without a bearer token the transport answers 401 before any MCP request."""
        async with httpx2.AsyncClient() as http:
            response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert response.status_code == 401
