"""The CLI serves what users have: SDK and fastmcp servers, factories, ``python -m mcp_core``.

A target may be an ``App``, an ``McpServer``, the SDK's ``MCPServer`` or low-level ``Server``, a
``fastmcp.FastMCP`` server, or a function of no arguments (sync or async) returning one of them;
without ``:name``, ``create_server`` and ``create_app`` are looked up after ``app``, ``mcp`` and
``server``. Served over the real stdio transport to the official client.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from mcp_core.cli import main
from mcp_core.cli._target import load_target
from mcp_core.errors import TargetError
from tests.clients import ROOT, ok_text

FACTORIES = """
    import anyio
    from fastmcp import FastMCP
    from mcp.server.lowlevel.server import Server
    from mcp.server.mcpserver import MCPServer
    import mcp_types as types
    from mcp_types import Icon

    from mcp_core import App


    def create_server() -> MCPServer:
        server = MCPServer(
            "sdk-made",
            version="2.0",
            website_url="https://example.org/sdk",
            icons=[Icon(src="https://example.org/sdk.png")],
        )

        @server.tool()
        def double(x: int) -> int:
            '''Double it.'''
            return 2 * x

        return server


    async def make_app() -> App:
        await anyio.sleep(0)  # an async factory, run to completion before serving
        app = App("async-made", version="3.0")

        @app.tool
        def triple(x: int) -> int:
            '''Triple it.'''
            return 3 * x

        return app


    def make_fastmcp() -> FastMCP:
        server = FastMCP("fast-made", version="4.0")

        @server.tool
        def square(x: int) -> int:
            '''Square it.'''
            return x * x

        return server


    fast = make_fastmcp()
    lowlevel = Server("low-made", version="5.0")


    def needs(x: int) -> App:
        return App("never")


    def not_a_server() -> int:
        return 42


    def broken() -> App:
        raise RuntimeError("no database")


    def custom() -> MCPServer:
        server = MCPServer("custom")

        async def handler(ctx, params):
            return {}

        server._lowlevel_server.add_request_handler("x/custom", types.RequestParams, handler)
        return server
"""


@pytest.fixture
def module(tmp_path: Path) -> Path:
    """A file holding every kind of factory and server."""
    path = tmp_path / "factories.py"
    path.write_text(textwrap.dedent(FACTORIES), encoding="utf-8")
    return path


def _inspected(spec: str, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["inspect", spec, "--json"]) == 0
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    return report


@pytest.mark.parametrize(
    ("name", "server", "tool"),
    [
        ("", {"name": "sdk-made", "version": "2.0"}, "double"),  # create_server, by default
        (":make_app", {"name": "async-made", "version": "3.0"}, "triple"),
        (":make_fastmcp", {"name": "fast-made", "version": "4.0"}, "square"),
        (":fast", {"name": "fast-made", "version": "4.0"}, "square"),
    ],
)
def test_inspect_takes_factories_and_servers(
    module: Path, name: str, server: dict[str, str], tool: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each is adopted into an App that introduces itself as the server does."""
    report = _inspected(f"{module}{name}", capsys)
    assert report["server"] == server
    elements = report["elements"]
    assert isinstance(elements, dict)
    assert [listed["name"] for listed in elements["Tools"]] == [tool]


def test_an_sdk_servers_info_is_carried(module: Path) -> None:
    """website_url and icons of the MCPServer become the adopting App's serverInfo."""
    target = load_target(str(module))
    lowlevel = target.server.lowlevel
    assert lowlevel.website_url == "https://example.org/sdk"
    assert [icon.src for icon in lowlevel.icons or ()] == ["https://example.org/sdk.png"]


def test_a_lowlevel_server_is_served(module: Path) -> None:
    """An SDK low-level Server is reached in memory, as a remote would be."""
    target = load_target(f"{module}:lowlevel")
    assert target.server.lowlevel.name == "low-made"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (":needs", r"needs arguments \(x\)"),
        (":not_a_server", "returned an int, not an App"),
        (":broken", "the factory raised RuntimeError: no database"),
        (":custom", "cannot be adopted as it is: it handles 'x/custom'"),
    ],
)
def test_factories_that_cannot_serve_say_why(module: Path, name: str, message: str) -> None:
    """A factory with arguments, one returning something else, one that raises."""
    with pytest.raises(TargetError, match=message):
        load_target(f"{module}{name}")


def _python_m(*args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_core", "run", *args], cwd=ROOT
    )


@pytest.mark.parametrize(
    ("name", "tool", "answer"),
    [("", "double", "8"), (":make_app", "triple", "12"), (":make_fastmcp", "square", "16")],
)
async def test_python_m_mcp_core_serves_them_over_stdio(
    module: Path, name: str, tool: str, answer: str
) -> None:
    """``python -m mcp_core run file.py[:factory]``, driven by the official client."""
    async with Client(_python_m(f"{module}{name}")) as client:
        assert [listed.name for listed in (await client.list_tools()).tools] == [tool]
        assert ok_text(await client.call_tool(tool, {"x": 4})) == answer
