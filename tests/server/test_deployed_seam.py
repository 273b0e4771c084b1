"""The seam between the server core and the deployment wing (ADR 0114).

McpServer knows a deployment only as a :class:`~mcp_core.server._deployed.Deployed`: a
deployment written from the Protocol alone (no mcp_core deployment code) is served as the
reference one is, each member used where the Protocol says; the reference ``Deployment``
conforms, checked by mypy --strict and at runtime.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from mcp import Client
from mcp.server.request_state import RequestStateSecurity
from starlette.applications import Starlette

from mcp_core import App
from mcp_core.registry import Registry
from mcp_core.server import Deployment, McpServer
from mcp_core.server._deployed import Deployed
from mcp_core.stores import BackendHealth, CacheStore, MemoryChangeBus, MemoryStore

SECRET = b"s" * 32


class RecordingDeployment:
    """A deployment written against the seam alone; it records what the server asks of it."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self._store = MemoryStore()
        self.security = RequestStateSecurity(keys=[SECRET])

    @property
    def worker(self) -> str:
        return "w9"

    @property
    def store(self) -> CacheStore:
        return self._store

    def keys(self, registry: object) -> tuple[bytes, RequestStateSecurity]:
        self.calls.append(f"keys {type(registry).__name__}")
        return b"k" * 32, self.security

    def health(self) -> tuple[BackendHealth, ...]:
        self.calls.append("health")
        return (BackendHealth(backend="fake", state="ok"),)

    @asynccontextmanager
    async def serving(self, registry: object) -> AsyncIterator[None]:
        self.calls.append("serving")
        try:
            yield
        finally:
            self.calls.append("served")

    async def admit(self) -> None:
        self.calls.append("admit")

    def drain(self) -> None:
        self.calls.append("drain")

    def route_sessions(self, app: Starlette) -> None:
        self.calls.append("route_sessions")


def served(deployment: Deployed) -> McpServer:
    """A server with one tool, a worker of ``deployment``."""
    app = App("seam")

    @app.tool
    def ping() -> str:
        """Answers pong."""
        return "pong"

    return McpServer(app.registry, invoker=app.invoker, deployment=deployment)


class TestTheSeam:
    """A deployment is what the Protocol says, nothing more."""

    def test_the_reference_deployment_conforms(self) -> None:
        """Deployment is a Deployed: statically (this assignment) and at runtime."""
        seam: Deployed = Deployment(
            worker="w1", secret=SECRET, store=MemoryStore(), bus=MemoryChangeBus()
        )
        assert isinstance(seam, Deployed)

    async def test_a_deployment_from_the_protocol_alone_is_served(self) -> None:
        """Keys at construction, serving around a run, health, drain, session routing."""
        deployment = RecordingDeployment()
        server = served(deployment)
        assert deployment.calls == ["keys Registry"]
        async with Client(server.lowlevel, mode="legacy") as client:
            assert deployment.calls[-1] == "serving"
            result = await client.call_tool("ping", {})
            assert not result.is_error
        assert deployment.calls[-1] == "served"
        health = server.health()
        assert (health.worker, [b.backend for b in health.backends]) == ("w9", ["fake"])
        server.streamable_http_app(stateless=True)
        assert "route_sessions" not in deployment.calls  # a stateless app has no sessions
        server.streamable_http_app()
        assert deployment.calls.count("route_sessions") == 1
        server.lifecycle.stop_accepting()
        assert deployment.calls.count("drain") == 1

    def test_anything_else_is_refused_by_name(self) -> None:
        """An object without the seam's members: TypeError naming its type."""
        with pytest.raises(TypeError, match="deployment must be a Deployment, got str"):
            McpServer(Registry(), deployment="redis://x")  # type: ignore[arg-type]
