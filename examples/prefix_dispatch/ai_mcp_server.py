"""Prefix dispatch: a call resolves its plugin from the tool name's prefix, nothing else is built.

    SITE_USER=editor mcp-core run examples/prefix_dispatch/ai_mcp_server.py        # stdio
    SITE_TOKENS="t1=admin,t2=editor" python examples/prefix_dispatch/ai_mcp_server.py --port 8000

The Drupal AI case (``docs/examples/prefix-dispatch.md``): each plugin provides several tools
under its own prefix (``content_search``, ``users_list``); ``tools/call`` finds the plugin from
the prefix and instantiates only that one (``PrefixedSource`` never asks another plugin's source,
``LazySource(lookup=...)`` builds one tool); the tool list is filtered per account by role
(``scoped_by_tag``: the users plugin's tools need the ``administrator`` role).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
from collections.abc import Mapping
from typing import Final, final

from ai_plugins import PLUGIN_CLASSES, Plugin, PluginManager
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from mcp_core import App
from mcp_core.elements import Element, ElementKind, ElementRef
from mcp_core.sources import LazySource, PrefixedSource
from mcp_core.visibility import SessionInfo, scoped_by_tag

ROLES: Final[Mapping[str, frozenset[str]]] = {
    "admin": frozenset({"administrator"}),
    "editor": frozenset(),
}

manager: Final = PluginManager()


def with_roles(session: SessionInfo) -> SessionInfo:
    """The account (token subject, else SITE_USER) and its roles, as the session's scopes."""
    account = session.principal or os.environ.get("SITE_USER") or "anonymous"
    return dataclasses.replace(session, principal=account, scopes=ROLES.get(account, frozenset()))


app = App("ai-mcp", version="1.0.0", session_hook=with_roles, preload=False)


def all_tools(plugin_class: type[Plugin]) -> list[Element]:
    """Every tool of one plugin (a list builds them)."""
    return manager.instance(plugin_class).tools()


def one_tool(plugin_class: type[Plugin], ref: ElementRef) -> Element | None:
    """One tool of one plugin (a call builds only it)."""
    return manager.instance(plugin_class).tool(ref)


for plugin_class in PLUGIN_CLASSES:
    source = LazySource(
        functools.partial(all_tools, plugin_class),
        kinds=ElementKind.TOOL,
        lookup=functools.partial(one_tool, plugin_class),
    )
    app.add_source(PrefixedSource(source, plugin_class.id))

app.visibility = scoped_by_tag(app.registry)


@app.tool
def plugins_instantiated() -> list[str]:
    """The plugins instantiated so far, in order."""
    return list(manager.instantiated)


@final
class SiteTokens:
    """Bearer tokens the site issued (``SITE_TOKENS="token=user,..."``)."""

    def __init__(self, spec: str) -> None:
        self._accounts = dict(item.split("=", 1) for item in spec.split(",") if "=" in item)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The account a token belongs to, or None."""
        user = self._accounts.get(token)
        if user is None:
            return None
        return AccessToken(token=token, client_id="ai-client", scopes=[], subject=user)


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
