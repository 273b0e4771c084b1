"""HostAuthentication: the host application's user becomes the MCP principal; visitors get 401."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.authentication import AuthCredentials, SimpleUser, UnauthenticatedUser
from starlette.types import Message, Receive, Scope, Send

from mcp_core.server import HostAuthentication


class Seen:
    """An inner ASGI app recording what it was called with (and the request's access token)."""

    def __init__(self) -> None:
        self.scopes: list[Scope] = []
        self.tokens: list[Any] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scopes.append(scope)
        self.tokens.append(get_access_token())


async def run(app: HostAuthentication, scope: Scope) -> list[Message]:
    """Call ``app`` once; return what it sent."""
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def http(user: object, scopes: list[str] | None = None) -> Scope:
    """An HTTP scope as the host's AuthenticationMiddleware leaves it."""
    scope: Scope = {"type": "http", "path": "/mcp", "headers": [], "user": user}
    if scopes is not None:
        scope["auth"] = AuthCredentials(scopes)
    return scope


async def test_a_signed_in_user_is_the_principal_with_their_scopes() -> None:
    """The inner app sees an AuthenticatedUser naming the user; the access token is set."""
    inner = Seen()
    app = HostAuthentication(inner, client_id="shop-web")
    await run(app, http(SimpleUser("alice"), ["authenticated", "admin"]))
    (scope,) = inner.scopes
    user = scope["user"]
    assert isinstance(user, AuthenticatedUser)
    token = user.access_token
    assert (token.subject, token.client_id, token.scopes) == (
        "alice",
        "shop-web",
        ["authenticated", "admin"],
    )
    assert token.claims == {"name": "alice"}
    assert inner.tokens == [token]


async def test_a_principal_function_names_the_user() -> None:
    """``principal`` picks the identity (an id rather than a display name)."""
    inner = Seen()
    app = HostAuthentication(inner, principal=lambda user: f"user:{user.display_name}")
    await run(app, http(SimpleUser("bob")))
    assert inner.scopes[0]["user"].access_token.subject == "user:bob"
    assert inner.scopes[0]["user"].access_token.scopes == []


@pytest.mark.parametrize("user", [UnauthenticatedUser(), None, "alice"])
async def test_a_visitor_is_refused_or_anonymous(user: object) -> None:
    """401 by default; with require_user=False, through with no user at all."""
    inner = Seen()
    refused = await run(HostAuthentication(inner), http(user))
    assert refused[0]["status"] == 401
    assert inner.scopes == []
    await run(HostAuthentication(inner, require_user=False), http(user))
    assert inner.scopes[0]["user"] is None
    assert inner.tokens == [None]


async def test_other_scope_types_pass_through() -> None:
    """Lifespan messages reach the inner app untouched."""
    inner = Seen()
    await run(HostAuthentication(inner), {"type": "lifespan"})
    assert inner.scopes == [{"type": "lifespan"}]
