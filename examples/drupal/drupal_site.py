"""A Drupal-style site served over MCP: one plugin factory, per-URI access, stdio and HTTP.

    mcp-core run examples/drupal/drupal_site.py                   # stdio, as SITE_USER (drush)
    python examples/drupal/drupal_site.py --port 8000             # HTTP, bearer tokens

The drupal/mcp_server case (``docs/examples/drupal.md``):

- one factory registers every plugin (``LazySource(manager.register_all)``): each plugin is
  built alone, so a misconfigured one (a tool name with a space) costs only itself;
- a plugin is its own handler, with its own access check ``check_access(target, session)``,
  asked by ``handler_access`` with the tool's name or the concrete URI read, subscribed to or
  completed (``node://2``, never ``node://{nid}``);
- the account: over HTTP the bearer token's subject (``SITE_TOKENS="token=user,..."``), over
  stdio ``SITE_USER`` (the account drush runs as).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Final, final

from drupal_plugins import PluginManager
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from mcp_core import App
from mcp_core.elements import ElementKind
from mcp_core.sources import LazySource, ValidatedSource
from mcp_core.visibility import SessionInfo, handler_access

manager: Final = PluginManager()


def as_site_account(session: SessionInfo) -> SessionInfo:
    """The account a session acts as: the token's subject, else SITE_USER (stdio), else anonymous."""
    principal = session.principal or os.environ.get("SITE_USER") or "anonymous"
    return dataclasses.replace(session, principal=principal)


app = App(
    "drupal-site",
    version="1.0.0",
    instructions="Content tools of a Drupal-style site.",
    session_hook=as_site_account,
    preload=False,  # a call builds only its plugin; a list builds them all, once
)
app.add_source(
    ValidatedSource(
        LazySource(
            manager.register_all,
            kinds=ElementKind.TOOL | ElementKind.RESOURCE_TEMPLATE,
            lookup=manager.lookup,
        )
    )
)
app.visibility = handler_access(app.registry)


@app.tool
def plugin_status() -> list[str]:
    """What the site skipped and why, and which plugins were instantiated."""
    return [str(d) for d in app.registry.diagnostics()] + [f"created: {manager.created}"]


@final
class SiteTokens:
    """Bearer tokens the site issued (``SITE_TOKENS="token=user,..."``)."""

    def __init__(self, spec: str) -> None:
        pairs = (item.split("=", 1) for item in spec.split(",") if "=" in item)
        self._accounts = dict(pairs)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The account a token belongs to, or None."""
        user = self._accounts.get(token)
        if user is None:
            return None
        return AccessToken(token=token, client_id="site-client", scopes=[], subject=user)


def main() -> None:
    """``--port N`` serves streamable HTTP with the site's bearer tokens."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    base = f"http://{args.host}:{args.port}"
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(base),
        resource_server_url=AnyHttpUrl(f"{base}/mcp"),
        validate_token_resource=False,
    )
    verifier = SiteTokens(os.environ.get("SITE_TOKENS", ""))
    app.run("http", host=args.host, port=args.port, token_verifier=verifier, auth=auth)


if __name__ == "__main__":
    main()
