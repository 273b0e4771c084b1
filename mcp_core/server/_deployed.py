"""The seam between the server core and the deployment wing: what a server asks of a deployment.

:class:`~mcp_core.server.McpServer` serves as one worker of several when given a deployment; it
knows that deployment only through :class:`Deployed`. The reference one,
:class:`~mcp_core.server.Deployment`, lives in the deployment wing
(:mod:`mcp_core.server._deployment`, the session routing it installs,
:mod:`mcp_core.server._sessions`, and the sessions it shares between workers,
:mod:`mcp_core.server._shared_sessions`), which the server core never imports: an import-linter contract
in ``pyproject.toml`` holds it (ADR 0114). The wing may import the core; the core sees only this
Protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from mcp.server.request_state import RequestStateSecurity

from mcp_core.stores import BackendHealth, CacheStore

if TYPE_CHECKING:
    from mcp.server.connection import Connection
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.types import ASGIApp

    from mcp_core.server._events import SessionEventStore
    from mcp_core.server._gateway import SessionState

__all__ = [
    "Deployed",
    "SessionKeeper",
    "SharedSessions",
    "WorkerListing",
    "WorkerState",
    "WorkerStatus",
]


@runtime_checkable
class Deployed(Protocol):
    """What a server needs of the deployment it is a worker of (``Deployment`` is one).

    Laws a server relies on: :meth:`keys` answers the same keys on every worker of one
    deployment (so any worker continues what another started) and refuses, with TypeError naming
    the registry, a registry it cannot keep in step; :meth:`serving` is entered once per server
    run, around everything the run serves; :meth:`drain` is idempotent and does not block.
    """

    @property
    def worker(self) -> str:
        """This worker's id, as the health endpoint reports it."""
        ...

    @property
    def store(self) -> CacheStore:
        """The store every worker shares (one retry per ``requestState``, on every worker)."""
        ...

    def keys(self, registry: object) -> tuple[bytes, RequestStateSecurity]:
        """The cursor key and the ``requestState`` security a server of ``registry`` uses.

        Raises:
            TypeError: ``registry`` cannot be kept in step with the other workers.
        """
        ...

    def health(self) -> tuple[BackendHealth, ...]:
        """The shared backends as this worker sees them (reported by the health endpoint)."""
        ...

    def serving(self, registry: object) -> AbstractAsyncContextManager[None]:
        """While a server serves ``registry``: registered as a worker, in step with the others."""
        ...

    async def admit(self) -> None:
        """Check, before listening, that this worker fits the deployment (raise if it does not)."""
        ...

    def drain(self) -> None:
        """This worker is stopping: tell the others now."""
        ...

    def route_sessions(self, app: Starlette) -> None:
        """Install on a stateful HTTP ``app`` what routes each session to the worker it names."""
        ...


WorkerState = Literal["serving", "draining", "stale", "gone", "left", "unverified"]


@dataclass(frozen=True, slots=True)
class WorkerStatus:
    """One worker of a deployment, as the shared store records it (see :class:`WorkerListing`).

    ``state``: ``serving`` (it renewed its registration within the last three heartbeats, 3 s);
    ``draining`` (it is stopping); ``stale`` (not renewed for longer, but within its lease: a
    worker frozen, cut off from the store, or just killed); ``gone`` (its lease ran out without it
    leaving: killed, or lost); ``left`` (it stopped and said so); ``unverified`` (a record not
    signed with the deployment's secret: written by something else; nothing else in it is shown).
    A gone or left worker stays listed for an hour after it was last seen.
    """

    worker: str
    """The worker's id."""
    state: WorkerState
    """What the records say of it (see above)."""
    last_seen: float | None
    """When it last renewed its registration (Unix time; None when unverified)."""
    address: str | None = None
    """The URL it serves at, if it said (``run_http`` says)."""
    host: str | None = None
    """The host name it runs on."""
    pid: int | None = None
    """Its process id on that host."""
    this: bool = False
    """Whether it is the worker that asked (this process)."""


@runtime_checkable
class WorkerListing(Protocol):
    """Optional, beside :class:`Deployed`: a deployment that lists its workers (``Deployment`` does).

    The status page lists them; ``run_http`` tells it the URL this worker serves at.
    """

    def advertise(self, address: str) -> None:
        """Record ``address``, the URL this worker serves at, for the others' listings."""
        ...

    async def workers(self) -> Sequence[WorkerStatus]:
        """Every worker of the deployment, sorted by id (raises ``CacheStoreError`` if unknown)."""
        ...


@runtime_checkable
class SessionKeeper(Protocol):
    """What a server tells its deployment of the handshake-era sessions of one HTTP app (ADR 0109).

    Made by :meth:`SharedSessions.share_sessions`. A store that fails is the keeper's to log:
    none of these methods fails a request.
    """

    @property
    def events_shared(self) -> bool:
        """Whether the app's event store is read by every worker.

        A session ending here then keeps its events for the worker that resumes it.
        """
        ...

    def public(self, session_id: str) -> str:
        """The id every worker knows ``session_id`` by (this worker's SDK may know a shorter one)."""
        ...

    def resuming(self, endpoint: ASGIApp) -> ASGIApp:
        """``endpoint`` resuming the sessions this worker does not hold.

        It is placed inside authentication and the per-client session slots.
        """
        ...

    def restore(self, state: SessionState) -> None:
        """Give a resumed session's new state what its record says (log level, subscriptions)."""
        ...

    async def opened(self, state: SessionState, params: Mapping[str, Any], version: str) -> None:
        """The session of ``state`` answered ``initialize`` with ``params``, speaking ``version``."""
        ...

    async def changed(self, state: SessionState) -> None:
        """The session's log level or subscriptions changed: every worker must see it."""
        ...

    async def used(self, state: SessionState) -> None:
        """A request of the session arrived (its record is renewed now and then)."""
        ...

    async def forget(self, session_id: str) -> None:
        """The session ended for good (reclaimed): no worker resumes it."""
        ...


@runtime_checkable
class SharedSessions(Protocol):
    """Optional, beside :class:`Deployed`: handshake-era sessions outlive their worker (ADR 0109).

    ``Deployment`` is one. A server asks by isinstance; without it, a session lives on the
    worker that opened it (:meth:`Deployed.route_sessions`).
    """

    def session_events(self) -> SessionEventStore | None:
        """The event store every worker shares (None: there is none; each keeps its own)."""
        ...

    def share_sessions(
        self,
        app: Starlette,
        manager: StreamableHTTPSessionManager,
        *,
        events: SessionEventStore | None,
        idle_timeout: float | None,
        on_resumed: Callable[[Connection], object],
    ) -> SessionKeeper:
        """Share the sessions of a stateful HTTP ``app`` with every worker, and route them.

        ``manager`` serves the app's sessions, ``events`` keeps their events; this replaces
        :meth:`Deployed.route_sessions` for the app. ``on_resumed`` is given each session
        resumed here before it serves anything.
        """
        ...
