"""McpServer under faults: containment in the binding and the gateway, health, warm-up."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from starlette.testclient import TestClient

from mcp_core.elements import Element, ElementCollection, Resource
from mcp_core.errors import clip_input
from mcp_core.handlers import ClientGateway, tool_from_function
from mcp_core.registry import Registry
from mcp_core.server import McpServer
from mcp_core.server._errors import ErrorReply
from mcp_core.sources import StaticSource
from mcp_core.visibility import SessionInfo


async def logs_a_surrogate(gateway: ClientGateway) -> str:
    """Log text that UTF-8 cannot carry."""
    await gateway.log("warning", "a\ud800b")
    return "never"


async def reports_nan(gateway: ClientGateway) -> str:
    """Report progress with a message UTF-8 cannot carry."""
    await gateway.progress(1, 2, "\udfff")
    return "never"


def ok() -> str:
    """Fine."""
    return "ok"


def read_exits() -> str:
    """A read that exits."""
    raise SystemExit(1)


def registry(*elements: Element) -> Registry:
    """A registry of ``elements``."""
    return Registry([(StaticSource(ElementCollection(elements)), 0)])


class TestContainment:
    """What handlers do wrong never ends the session."""

    @pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
    async def test_gateway_refuses_what_cannot_be_sent(self) -> None:
        """A log or progress message with a lone surrogate fails the tool, not the stream."""
        server = McpServer(
            registry(
                tool_from_function(logs_a_surrogate),
                tool_from_function(reports_nan),
                tool_from_function(ok),
            )
        )
        async with Client(server.lowlevel, mode="legacy") as client:
            await client.set_logging_level("debug")
            logged = await client.call_tool("logs_a_surrogate", {})
            progressed = await client.call_tool("reports_nan", {}, progress_callback=_ignore)
            after = await client.call_tool("ok", {})
        assert logged.is_error is True
        assert progressed.is_error is True
        assert after.content[0].text == "ok"  # type: ignore[union-attr]  # a text block

    async def test_a_read_raising_system_exit_is_internal_error(self) -> None:
        """SystemExit from a read is -32603; the next request is served."""
        element = Element(definition=Resource(uri="test://exits", name="exits"), handler=read_exits)
        async with Client(
            McpServer(registry(element, tool_from_function(ok))).lowlevel, mode="legacy"
        ) as client:
            with pytest.raises(MCPError) as caught:
                await client.read_resource("test://exits")
            after = await client.call_tool("ok", {})
        assert (caught.value.code, caught.value.message) == (-32603, "Internal error")
        assert after.content[0].text == "ok"  # type: ignore[union-attr]  # a text block

    @pytest.mark.parametrize("error", [RuntimeError("secret=hunter2"), SystemExit(1)])
    async def test_a_failing_session_hook_is_internal_error(self, error: BaseException) -> None:
        """A session hook that raises fails the request with -32603 and never leaks its text."""

        def hook(info: SessionInfo) -> SessionInfo:
            raise error

        server = McpServer(registry(tool_from_function(ok)), session_hook=hook)
        async with Client(server.lowlevel, mode="legacy") as client:
            with pytest.raises(MCPError) as listed:
                await client.list_tools()
            with pytest.raises(MCPError) as called:
                await client.call_tool("ok", {})
        for caught in (listed, called):
            assert (caught.value.code, caught.value.message) == (-32603, "Internal error")
            assert "hunter2" not in str(caught.value.error)

    async def test_the_log_names_the_request_clipped(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A failed or refused request's log line names it; the key the client sent is clipped."""
        exits = Element(definition=Resource(uri="test://exits", name="exits"), handler=read_exits)
        unknown = "test://" + "x" * 5000
        with caplog.at_level(logging.INFO, logger="mcp_core.server"):
            async with Client(McpServer(registry(exits)).lowlevel, mode="legacy") as client:
                for uri in ("test://exits", unknown):
                    with pytest.raises(MCPError):
                        await client.read_resource(uri)
        failed, refused = (r.getMessage() for r in caplog.records if r.name == "mcp_core.server")
        assert (
            failed
            == "resources/read 'test://exits' failed; the client is told only 'Internal error'"
        )
        assert refused.startswith(f"resources/read {clip_input(unknown)!r} refused: ")
        assert len(refused) < len(unknown)  # the error's own message is clipped too

    def test_wire_errors_are_always_sendable(self) -> None:
        """An error quoting a lone surrogate from the client is repaired to U+FFFD."""
        error = ErrorReply(-32602, "Unknown tool: \ud800", {"name": ["\udfff"]})
        assert (error.message, error.data) == ("Unknown tool: \ufffd", {"name": ["\ufffd"]})


async def _ignore(progress: float, total: float | None, message: str | None) -> None:
    return None


class _NoHealth:
    """A registry without health(): only the roles a server needs."""

    def __init__(self, inner: Registry) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name in ("health", "background"):
            raise AttributeError(name)
        return getattr(self._inner, name)


class TestHealth:
    """The server's health() and its HTTP endpoint."""

    async def test_any_registry_has_a_health(self) -> None:
        """A registry without health() is described by whether it loaded, with no sources."""
        inner = registry(tool_from_function(ok))
        server = McpServer(_NoHealth(inner))
        assert (server.health().status, server.health().sources) == ("unloaded", ())
        await inner.load()
        assert server.health().status == "ok"

    def test_endpoint_never_loads_and_answers_json(self) -> None:
        """A probe of a server loading on demand answers 200 ``unloaded`` and loads nothing."""
        inner = registry(tool_from_function(ok))
        app = McpServer(inner).streamable_http_app()
        with TestClient(app, base_url="http://127.0.0.1:8000") as http:
            first = http.get("/healthz")
            again = http.get("/healthz")
            loaded_by_probes = inner.loaded
            with anyio.from_thread.start_blocking_portal() as portal:
                portal.call(inner.load)
            second = http.get("/healthz")
            strict = http.get("/healthz?strict")
            rebinding = http.get("/healthz", headers={"Host": "evil.example"})
        assert not loaded_by_probes
        assert (first.status_code, again.status_code) == (200, 200)
        assert first.json()["status"] == "unloaded"
        assert (first.json()["ready"], first.json()["loaded"]) == (True, False)
        assert first.json()["sources"][0]["state"] == "pending"
        assert second.status_code == 200
        assert second.headers["cache-control"] == "no-store"
        assert (second.json()["status"], second.json()["loaded"]) == ("ok", True)
        assert second.json()["sources"][0]["state"] == "ok"
        assert strict.status_code == 200
        assert rebinding.status_code == 421

    def test_liveness_readiness_and_draining(self) -> None:
        """/livez answers while serving; /readyz and /healthz say 503 once the server drains."""
        inner = registry(tool_from_function(ok))
        server = McpServer(inner)
        app = server.streamable_http_app(preload=True)
        with TestClient(app, base_url="http://127.0.0.1:8000") as http:
            # On the app's own loop: the preload it started holds the registry's lock there.
            assert http.portal is not None
            http.portal.call(inner.load)
            serving = [http.get(path) for path in ("/livez", "/readyz", "/healthz")]
            server.lifecycle.begin_drain()
            draining = [http.get(path) for path in ("/livez", "/readyz", "/healthz")]
        assert [answer.status_code for answer in serving] == [200, 200, 200]
        assert serving[0].json() == {"live": True}
        assert serving[1].json()["ready"] is True
        assert "draining" not in serving[2].json()
        assert [answer.status_code for answer in draining] == [200, 503, 503]
        assert draining[1].json()["ready"] is False
        assert draining[1].json()["draining"] is True
        assert draining[2].json()["status"] == "ok"  # what it serves is fine: it is stopping

    def test_endpoint_can_be_moved_or_turned_off(self) -> None:
        """health_path names the route; None removes it."""
        server = McpServer(registry(tool_from_function(ok)))
        with TestClient(
            server.streamable_http_app(health_path="/ready"), base_url="http://127.0.0.1:8000"
        ) as http:
            assert http.get("/ready").status_code in (200, 503)
            assert http.get("/healthz").status_code == 404
        with TestClient(
            server.streamable_http_app(health_path=None, ready_path=None, live_path=None),
            base_url="http://127.0.0.1:8000",
        ) as http:
            assert [http.get(p).status_code for p in ("/healthz", "/readyz", "/livez")] == [404] * 3

    def test_preload_loads_at_startup(self) -> None:
        """preload=True starts the first load when the app starts, before any request."""
        inner = registry(tool_from_function(ok))
        app = McpServer(inner).streamable_http_app(preload=True)
        with (
            TestClient(app, base_url="http://127.0.0.1:8000"),
            anyio.from_thread.start_blocking_portal() as portal,
        ):
            portal.call(_until_loaded, inner)
        assert inner.loaded


async def _until_loaded(registry: Registry) -> None:
    with anyio.fail_after(10):  # a guard against hanging, not a timing assertion
        while not registry.loaded:
            await anyio.lowlevel.checkpoint()
