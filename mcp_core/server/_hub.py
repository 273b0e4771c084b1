"""The connections served under one server run, and the change notifications sent to them.

One :class:`Hub` per SDK lifespan (a streamable HTTP app, a stdio run, an in-memory client):
it tracks each handshake-era session's state, coalesces the registry's changes into
``notifications/*/list_changed`` (and the 2026-07-28 listen streams' events), and tells the
subscribers of a resource that it changed, if they may still read it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, Protocol, final

import anyio
import anyio.abc
import anyio.lowlevel
from mcp.server.connection import Connection
from mcp.server.subscriptions import (
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from mcp_core.elements import ElementKind
from mcp_core.server._announce import LIST_CHANGED, Announcer
from mcp_core.server._gateway import SessionState
from mcp_core.server._lifecycle import Lifecycle
from mcp_core.server._listen import VisibleBus
from mcp_core.server._requests import RequestHandlers
from mcp_core.visibility import SessionInfo

__all__ = ["Hub", "Served"]

# What each list-changed notification (see _announce.LIST_CHANGED) is on a 2026 listen stream.
_EVENTS: Final[dict[str, ServerEvent]] = {
    "notifications/tools/list_changed": ToolsListChanged(),
    "notifications/resources/list_changed": ResourcesListChanged(),
    "notifications/prompts/list_changed": PromptsListChanged(),
}


class Served(Protocol):
    """What the handlers of a run reach of the server it serves (``McpServer`` is one)."""

    @property
    def handlers(self) -> RequestHandlers:
        """The sans-IO request handlers (a handler reads a resource through them)."""
        ...

    @property
    def lifecycle(self) -> Lifecycle:
        """Whether the server is draining."""
        ...


@final
class Hub:
    """The connections served under one SDK lifespan, and the tasks that notify them.

    One lifespan covers a whole streamable HTTP app, one stdio run, or one in-memory client.
    """

    __slots__ = (
        "_announcer",
        "_readable",
        "_tasks",
        "bus",
        "by_session",
        "listen",
        "server",
        "sessions",
        "state",
    )

    def __init__(
        self,
        tasks: anyio.abc.TaskGroup,
        server: Served,
        state: object,
        readable: Callable[[str, SessionInfo], Awaitable[bool]],
    ) -> None:
        self._tasks = tasks
        # The server this run serves, and what its lifespan yielded (reachable by handlers).
        self.server = server
        self.state = state
        self._readable = readable
        self._announcer = Announcer(tasks, self._announce)
        self.sessions: dict[Connection, SessionState] = {}
        # Handshake-era HTTP sessions' connections by session id (for the hot path).
        self.by_session: dict[str, Connection] = {}
        # 2026-07-28 clients get change notifications on subscriptions/listen streams instead.
        self.bus = VisibleBus(readable)
        self.listen = ListenHandler(self.bus)

    @property
    def draining(self) -> bool:
        """Whether the server this run serves is draining (stopping)."""
        return self.server.lifecycle.draining

    def start(self, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``work`` in this lifespan's task group."""
        self._tasks.start_soon(work)

    def track(self, state: SessionState) -> None:
        connection = state.connection
        self.sessions[connection] = state
        connection.exit_stack.callback(self.sessions.pop, connection, None)
        session_id = connection.session_id
        if session_id is not None:
            self.by_session[session_id] = connection
            connection.exit_stack.callback(self.by_session.pop, session_id, None)

    def list_changed(self, kinds: ElementKind) -> None:
        """Announce that the lists of ``kinds`` changed (coalesced: see :mod:`._announce`)."""
        # Called synchronously from registry listeners.
        self._announcer.changed(kinds)

    async def _announce(self, kinds: ElementKind) -> None:
        for changed, method in LIST_CHANGED:
            if kinds & changed:
                for state in tuple(self.sessions.values()):
                    if state.connection.initialized.is_set():
                        await state.connection.notify(method, None)
                await self.bus.publish(_EVENTS[method])

    async def resource_updated(self, uri: str) -> None:
        for state in tuple(self.sessions.values()):
            # Re-checked now: what a session may read can change after it subscribed.
            if (
                uri in state.subscriptions
                and state.info is not None
                and await self._readable(uri, state.info)
            ):
                await state.connection.send_resource_updated(uri)
        await self.bus.publish(ResourceUpdated(uri=uri))
