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

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from mcp.server.request_state import RequestStateSecurity

from mcp_core.stores import BackendHealth, CacheStore

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["Deployed"]


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
