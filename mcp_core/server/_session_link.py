"""One session's own channel: tell it, and no other, that its tool list changed.

Progressive disclosure (:mod:`mcp_core.search`) changes what one session lists when that
session finds tools; the server's own ``list_changed`` goes to every session, so this module
reaches the connection the current request arrived on instead. Only handshake-era sessions
persist between requests; a 2026-07-28 request is its own session, and there is nothing to tell.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, final

from mcp.server.connection import Connection
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_core.handlers import ClientGateway
from mcp_core.server._gateway import ServerGateway, connection_of

__all__ = ["SessionLink"]

_TOOLS_CHANGED: Final = "notifications/tools/list_changed"


def _connection(gateway: ClientGateway) -> Connection | None:
    if not isinstance(gateway, ServerGateway):
        return None
    connection = connection_of(gateway.request_context)
    if connection is None or connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    return connection


@final
class SessionLink:
    """The server's :class:`~mcp_core.search.SessionChannel`: reaches the requesting session."""

    __slots__ = ()

    async def tools_changed(self, gateway: ClientGateway) -> bool:
        """Send ``notifications/tools/list_changed`` to the session of ``gateway``'s request."""
        connection = _connection(gateway)
        if connection is None or not connection.initialized.is_set():
            return False
        await connection.notify(_TOOLS_CHANGED, None)
        return True

    def on_end(self, gateway: ClientGateway, callback: Callable[[], object]) -> bool:
        """Call ``callback`` when the session of ``gateway``'s request ends."""
        connection = _connection(gateway)
        if connection is None:
            return False
        connection.exit_stack.callback(callback)
        return True
