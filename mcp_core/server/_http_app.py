"""Assembling the streamable HTTP app: the session event store, the guarded endpoint, ending a session."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from mcp.server.streamable_http import EventStore
from starlette.routing import Route

from mcp_core.server._events import InMemoryEventStore, SessionEventStore

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.types import ASGIApp


__all__ = ["end_session", "guard_endpoint", "session_event_store"]


def guard_endpoint(app: Starlette, path: str, guard: Callable[[ASGIApp], ASGIApp]) -> None:
    """Wrap the MCP endpoint's ASGI app at ``path`` (inside authentication) in ``guard``."""
    for route in app.routes:
        if isinstance(route, Route) and route.path == path:
            route.app = guard(route.app)
            return
    raise RuntimeError(f"the SDK's app has no route at {path!r}; cannot guard the endpoint")


async def end_session(manager: StreamableHTTPSessionManager, session_id: str) -> None:
    """End one session as the SDK does when it ends (its id answers 404 from now on)."""
    transport = manager._server_instances.get(session_id)  # noqa: SLF001 -- the table bind_sessions owns
    if transport is not None:
        await manager._discard_session(session_id, transport)  # noqa: SLF001 -- the SDK's own ending


def session_event_store(
    event_store: SessionEventStore | Literal["memory"] | None,
) -> SessionEventStore | None:
    if event_store == "memory":
        return InMemoryEventStore()
    if event_store is None:
        return None
    if isinstance(event_store, EventStore) or not isinstance(event_store, SessionEventStore):
        raise TypeError(
            f"event_store must be a SessionEventStore (e.g. InMemoryEventStore()), got "
            f"{type(event_store).__name__}: an SDK EventStore keys streams by request id alone, "
            "which every session shares, so one session could replay another's results"
        )
    return event_store
