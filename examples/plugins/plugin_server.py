"""A plugin host: tools from installed distributions' entry points, per-user access, bearer tokens.

    python examples/plugins/plugin_server.py --port 8000            # serve (prints demo tokens)
    python examples/plugins/plugin_server.py token alice --scope admin  # mint a token

The Drupal case (``docs/examples/plugins.md``):

- every plugin comes from the ``toolbox.plugins`` entry-point group of the installed
  distributions (``EntryPointSource``); ``pip install -e examples/plugins/toolbox`` installs four;
- each plugin is its own handler: a ``ToolHandler`` that filters its own arguments
  (``ArgumentFilter``) and talks to the client through the gateway (logging, progress, sampling,
  elicitation);
- who may see and call a plugin is the plugin's own rule (``allows(session)``), applied as the
  server's ``ElementVisibility`` to lists and calls alike, from the scopes of the caller's bearer
  token (a JWT signed with ``TOOLBOX_JWT_SECRET``);
- a plugin that fails to load (``translate`` needs a library that is not installed) costs only
  itself: the others are served, and ``plugin_status`` (administrators) says what was skipped.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from typing import Final, final

import jwt
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from mcp_core import App
from mcp_core.elements import ElementKind, ElementRef
from mcp_core.registry import ElementResolver
from mcp_core.sources import EntryPointSource
from mcp_core.visibility import SessionInfo, all_of, scoped_by_tag

GROUP: Final = "toolbox.plugins"
ISSUER: Final = "toolbox"
AUDIENCE: Final = "toolbox-mcp"
TOKEN_LIFETIME: Final = 3600

app = App("toolbox", version="1.0.0", instructions="Office tools, as installed plugins.")
app.add_source(EntryPointSource(GROUP, kinds=ElementKind.TOOL))


@final
class PluginAccess:
    """Each plugin decides who sees it: its handler's ``allows(session)``, asked per request."""

    __slots__ = ("_resolver",)

    def __init__(self, resolver: ElementResolver) -> None:
        self._resolver = resolver

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:
        """What the plugin serving ``ref`` says; elements that are not plugins are not its concern."""
        if ref.kind != ElementKind.TOOL:
            return True
        element = await self._resolver.get_tool(ref.key)
        allows = getattr(element.handler, "allows", None) if element is not None else None
        return bool(allows(session)) if callable(allows) else True


# The plugins' own rules, and the app's tools tagged scope:<name> for their scope.
app.visibility = all_of(PluginAccess(app.registry), scoped_by_tag(app.registry))


@app.tool(tags={"scope:admin"})
def plugin_status() -> str:
    """Which plugins were skipped, and why (administrators)."""
    found = app.registry.diagnostics()
    return "\n".join(str(d) for d in found) if found else "every plugin loaded"


@final
class JwtVerifier:
    """Verifies HS256 JWTs this toolbox issued: signature, issuer, audience, expiry, subject."""

    __slots__ = ("_secret",)

    def __init__(self, secret: str) -> None:
        self._secret = secret

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's subject and scopes, or None when it is not valid now."""
        try:
            claims = jwt.decode(
                token,
                self._secret,
                algorithms=["HS256"],
                audience=AUDIENCE,
                issuer=ISSUER,
                options={"require": ["exp", "sub", "iss", "aud"]},
            )
        except jwt.InvalidTokenError:
            return None
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id", "toolbox-client")),
            scopes=str(claims.get("scope", "")).split(),
            subject=str(claims["sub"]),
            expires_at=int(claims["exp"]),
            claims={"iss": ISSUER},
        )


def mint(secret: str, user: str, scopes: list[str], lifetime: int = TOKEN_LIFETIME) -> str:
    """A token for ``user`` with ``scopes``, valid for ``lifetime`` seconds."""
    now = int(time.time())
    claims = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": user,
        "scope": " ".join(scopes),
        "iat": now,
        "exp": now + lifetime,
    }
    return jwt.encode(claims, secret, algorithm="HS256")


def serve(host: str, port: int) -> None:
    """Serve over streamable HTTP; every request needs a bearer token."""
    secret = os.environ.get("TOOLBOX_JWT_SECRET")
    if not secret:
        secret = secrets.token_urlsafe(32)
        print(
            "toolbox: TOOLBOX_JWT_SECRET is not set; tokens signed for this run only:",
            file=sys.stderr,
        )
        print(f"  alice (admin): {mint(secret, 'alice', ['admin'])}", file=sys.stderr)
        print(f"  bob:           {mint(secret, 'bob', [])}", file=sys.stderr)
    base = f"http://{host}:{port}"
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(base),
        resource_server_url=AnyHttpUrl(f"{base}/mcp"),
        validate_token_resource=False,
    )
    app.run("http", host=host, port=port, token_verifier=JwtVerifier(secret), auth=auth)


def main() -> None:
    """``--port N`` serves; ``token USER [--scope S ...]`` mints a token with TOOLBOX_JWT_SECRET."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    commands = parser.add_subparsers(dest="command")
    token = commands.add_parser("token", help="print a bearer token for a user")
    token.add_argument("user")
    token.add_argument("--scope", action="append", default=[])
    args = parser.parse_args()
    if args.command == "token":
        secret = os.environ.get("TOOLBOX_JWT_SECRET")
        if not secret:
            parser.error("set TOOLBOX_JWT_SECRET (the secret the server verifies tokens with)")
        print(mint(secret, args.user, args.scope))
        return
    serve(args.host, args.port)


if __name__ == "__main__":
    main()
