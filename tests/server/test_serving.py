"""Serving as a process: listening (ListenError), the ready callback, stopping, serverInfo.version."""

from __future__ import annotations

import errno
import importlib.metadata
import socket

import anyio
import pytest
from mcp import Client

import mcp_core
from mcp_core.app import App
from mcp_core.errors import ListenError, McpCoreError
from mcp_core.registry import Registry
from mcp_core.server import McpServer
from mcp_core.server._uvicorn import listen

pytestmark = pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"
)  # handshake-era client APIs


class TestListen:
    """listen() binds first and says why it cannot, naming the host and port."""

    def test_port_zero_picks_a_free_port(self) -> None:
        """Port 0 binds a real port, reported by the socket."""
        with listen("127.0.0.1", 0) as sock:
            assert sock.getsockname()[1] > 0

    def test_taken_port(self) -> None:
        """A taken port is a ListenError (an OSError with EADDRINUSE) naming it and the fix."""
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            with pytest.raises(ListenError) as caught:
                listen("127.0.0.1", port)
        error = caught.value
        assert isinstance(error, McpCoreError)
        assert isinstance(error, OSError)
        assert (error.host, error.port, error.errno) == ("127.0.0.1", port, errno.EADDRINUSE)
        assert str(error) == (
            f"cannot listen on 127.0.0.1:{port}: the address is already in use; choose another "
            "port, or stop the server using it"
        )

    @pytest.mark.parametrize("port", [-1, 65536, 10**9])
    def test_port_out_of_range(self, port: int) -> None:
        """A port outside 0-65535 is refused before any socket exists."""
        with pytest.raises(ListenError, match="a port is a number from 0 to 65535"):
            listen("127.0.0.1", port)

    def test_unknown_host(self) -> None:
        """A host that does not resolve is named, with an address to use instead."""
        with pytest.raises(ListenError, match=r"'no-such-host\.invalid' is not an address"):
            listen("no-such-host.invalid", 0)

    def test_address_not_here(self) -> None:
        """An address of another machine is refused (TEST-NET-1 is never local)."""
        with pytest.raises(ListenError, match="not one of this machine's") as caught:
            listen("192.0.2.1", 0)
        assert caught.value.errno == errno.EADDRNOTAVAIL

    def test_ipv6_loopback(self) -> None:
        """An IPv6 host binds an IPv6 socket."""
        try:
            sock = listen("::1", 0)
        except ListenError:
            pytest.skip("no IPv6 loopback on this machine")
        with sock:
            assert sock.family is socket.AF_INET6


class TestRunHttp:
    """run_http: ready once serving, with the real URL; cancelled, it stops and returns."""

    async def test_ready_then_cancelled(self) -> None:
        """The URL given to ready answers; cancelling the serving task ends it cleanly."""
        app = App("ready")

        @app.tool
        def ping() -> str:
            """Answer."""
            return "pong"

        urls: list[str] = []
        ready = anyio.Event()

        def on_ready(url: str) -> None:
            urls.append(url)
            ready.set()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: app.server.run_http(port=0, ready=on_ready))
            with anyio.fail_after(30):
                await ready.wait()
            async with Client(urls[0]) as client:
                result = await client.call_tool("ping", {})
                assert result.content[0].text == "pong"  # type: ignore[union-attr]  # a text block
            tasks.cancel_scope.cancel()
        assert urls[0].startswith("http://127.0.0.1:")
        assert urls[0].endswith("/mcp")

    async def test_taken_port_before_anything_starts(self) -> None:
        """A taken port raises at once; ready is never called."""
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            called: list[str] = []
            with pytest.raises(ListenError):
                await App("taken").server.run_http(port=port, ready=called.append)
        assert called == []


class TestVersion:
    """serverInfo.version is mcp-core's version from the package metadata unless given."""

    def test_version_from_metadata(self) -> None:
        """mcp_core.__version__ is the installed distribution's version."""
        assert mcp_core.__version__ == importlib.metadata.version("mcp-core-server")

    async def test_default_and_given(self) -> None:
        """An App or McpServer without a version reports mcp-core's; a given one wins."""
        servers = {
            "app": App("a").server,
            "server": McpServer(Registry(), name="s"),
            "given": App("g", version="2.5.1").server,
            "empty": McpServer(Registry(), name="e", version=""),
        }
        seen = {}
        for label, server in servers.items():
            async with Client(server.lowlevel) as client:
                assert client.server_info is not None
                seen[label] = client.server_info.version
        version = mcp_core.__version__
        assert seen == {"app": version, "server": version, "given": "2.5.1", "empty": ""}
