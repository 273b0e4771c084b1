"""The change-event bus of 2026-07-28 listen streams, which tells each stream only what it may see.

The SDK's ``ListenHandler`` fans every published event out to every open
``subscriptions/listen`` stream that asked for its kind, resource URIs included: a stream that
listens for a URI hidden from its session would learn when that resource changes, which no
session learns about a resource that does not exist. This bus remembers which session each
stream belongs to and delivers a resource update only to streams whose session can read the URI.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Final, final

import anyio.lowlevel
from mcp.server.subscriptions import ResourceUpdated, ServerEvent

from mcp_core.visibility import SessionInfo

__all__ = ["LISTENING_SESSION", "VisibleBus"]

_log = logging.getLogger("mcp_core.server")

LISTENING_SESSION: Final[ContextVar[SessionInfo | None]] = ContextVar(
    "mcp_core.listening_session", default=None
)
"""Who is opening a listen stream: set around the listen handler, read when it subscribes."""

Listener = Callable[[ServerEvent], None]


@final
class VisibleBus:
    """An in-process ``SubscriptionBus`` whose resource updates respect per-session visibility.

    ``readable(uri, session)`` says whether ``session`` can read ``uri`` now (the server's own
    resolution, visibility applied); list-changed events go to every stream, as lists are
    filtered when they are fetched.
    """

    __slots__ = ("_listeners", "_readable")

    def __init__(self, readable: Callable[[str, SessionInfo], Awaitable[bool]]) -> None:
        self._readable = readable
        self._listeners: dict[object, tuple[Listener, SessionInfo | None]] = {}

    async def publish(self, event: ServerEvent) -> None:
        """Deliver ``event`` to every stream allowed to see it."""
        verdicts: dict[SessionInfo, bool] = {}
        for listener, session in list(self._listeners.values()):
            if isinstance(event, ResourceUpdated):
                if session is None:  # a stream not opened through the server: tell it nothing
                    continue
                verdict = verdicts.get(session)
                if verdict is None:
                    verdict = verdicts[session] = await self._readable(event.uri, session)
                if not verdict:
                    continue
            try:
                listener(event)
            except Exception:  # noqa: BLE001 -- one listener's failure must not starve the others
                _log.exception("listen stream listener raised; continuing")
        await anyio.lowlevel.checkpoint()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Register the listener of the stream being opened, with the session opening it."""
        token = object()
        self._listeners[token] = (listener, LISTENING_SESSION.get())

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe
