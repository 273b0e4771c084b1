"""The seam between the server core and the deployment wing: what a server asks of a deployment.

:class:`~mcp_core.server.McpServer` serves as one worker of several when given a deployment; it
knows that deployment only through :class:`Deployed`. The reference one,
:class:`~mcp_core.server.Deployment`, lives in the deployment wing
(:mod:`mcp_core.server._deployment` and the session routing it installs,
:mod:`mcp_core.server._sessions`), which the server core never imports: an import-linter contract
in ``pyproject.toml`` holds it (ADR 0114). The wing may import the core; the core sees only this
Protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from mcp.server.request_state import RequestStateSecurity

from mcp_core.stores import BackendHealth, CacheStore

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["Deployed", "WorkerListing", "WorkerState", "WorkerStatus"]


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
