"""HostAuthentication: an MCP endpoint mounted in a web application uses the application's login."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final, final

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials, BaseUser
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["HostAuthentication"]

_NOT_SIGNED_IN: Final = json.dumps(
    {
        "error": "unauthorized",
        "error_description": "sign in to the application first: this endpoint uses its session",
    }
).encode()


@final
class HostAuthentication:
    """ASGI middleware around an MCP app mounted in a Starlette or FastAPI application.

    The application authenticates its users its own way (a session cookie, a login form, an SSO
    middleware) with Starlette's ``AuthenticationMiddleware``, which leaves the user in
    ``scope["user"]`` and their permissions in ``scope["auth"].scopes``. This middleware, placed
    between that and the MCP app, hands that user to the MCP server as its authenticated
    principal, exactly as a verified bearer token would be:

    - visibility rules see it in :class:`~mcp_core.visibility.SessionInfo`: ``principal`` is
      ``principal(user)`` (default: ``user.identity``, else ``user.display_name``), ``scopes``
      the credentials' scopes, ``client_id`` the ``client_id`` given here, ``claims`` the user's
      ``display_name`` as ``name``;
    - an MCP session belongs to the user who opened it: a request carrying another user's
      ``mcp-session-id`` is answered 404, as if that session did not exist (the SDK's session
      ownership check), so a session id that leaks does not lend its user's rights;
    - the ``requestState`` of 2026-07-28 rounds is bound to the user, so state issued to one user
      is refused to another.

    A request from a visitor who is not signed in is answered 401 before it reaches the MCP app
    (``require_user=False`` lets it through as anonymous, without a principal).

    Cookie-authenticated endpoints are what cross-site requests and DNS rebinding aim at: build
    the mounted app with the host names and origins the application is served at
    (``transport_security=TransportSecuritySettings(allowed_hosts=..., allowed_origins=...)``, or
    a loopback ``host=``), so a request naming another host or origin is refused even when the
    browser attached a valid session cookie (``docs/examples/mounted.md``).
    """

    __slots__ = ("_app", "_client_id", "_principal", "_require_user")

    def __init__(
        self,
        app: ASGIApp,
        *,
        client_id: str = "host-session",
        principal: Callable[[BaseUser], str] | None = None,
        require_user: bool = True,
    ) -> None:
        if not callable(app):
            raise TypeError(f"HostAuthentication wraps an ASGI app, got {type(app).__name__}")
        self._app = AuthContextMiddleware(app)
        self._client_id = client_id
        self._principal = principal or _identity
        self._require_user = require_user

    def __repr__(self) -> str:
        return f"HostAuthentication(client_id={self._client_id!r})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        user = scope.get("user")
        if isinstance(user, BaseUser) and user.is_authenticated:
            credentials = scope.get("auth")
            scopes = list(credentials.scopes) if isinstance(credentials, AuthCredentials) else []
            token = AccessToken(
                token=f"{self._client_id}:{self._principal(user)}",
                client_id=self._client_id,
                scopes=scopes,
                subject=self._principal(user),
                claims={"name": user.display_name},
            )
            scope = {**scope, "user": AuthenticatedUser(token)}
        elif self._require_user:
            await _refuse(send)
            return
        else:
            # Never let an upstream AuthenticatedUser-looking value pass for the application's.
            scope = {**scope, "user": None}
        await self._app(scope, receive, send)


def _identity(user: BaseUser) -> str:
    try:
        return user.identity
    except NotImplementedError:
        return user.display_name


async def _refuse(send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(_NOT_SIGNED_IN)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": _NOT_SIGNED_IN})
