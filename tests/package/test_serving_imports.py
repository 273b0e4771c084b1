"""The serving path imports only what it uses (ADRs 0057, 0112): heavy modules load with their feature.

Each test starts a fresh interpreter, since the test process itself has imported everything.
A server script (``App`` + decorators + ``app.run()``) is served over stdio to the official
client; one of its tools reports which of the watched modules its process has loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.clients import ok_text, text

pytestmark = pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"
)  # handshake-era client APIs

WATCHED = (
    "jsonschema",
    "referencing",
    "sqlite3",
    "redis",
    # Modules for HTTP, deployments, stores, search and the other sources (ADR 0112): every
    # stdio start paid for them; each is imported where it is used.
    "h11",
    "uvicorn.protocols.http.h11_impl",
    "prometheus_client",
    "opentelemetry.sdk",
    "mcp_core.server._deployment",
    "mcp_core.server._hotpath",
    "mcp_core.server._operator",
    "mcp_core.server._sessions",
    "mcp_core.stores._memory",
    "mcp_core.stores._redis",
    "mcp_core.stores._redis_bus",
    "mcp_core.stores._sqlite",
    "mcp_core.search",
    "mcp_core.sources._cached",
    "mcp_core.sources._discovery",
    "mcp_core.sources._entry_points",
    "mcp_core.sources._file",
    "mcp_core.sources._shared",
    "mcp_core.sources._wrappers",
    # URI templates, HTTP sessions and their events, deployments' values, host authentication and
    # metrics: a plain stdio app answers its first call without them.
    "mcp_core.elements._uritemplate",
    "mcp_core.server._deployed",
    "mcp_core.server._events",
    "mcp_core.server._host",
    "mcp_core.server._http_app",
    "mcp_core.server._metrics",
    "mcp_core.server._responses",
    # Visibility combinators (the default rule is ALWAYS), the stores' protocols and the change
    # propagation that follows a bus: a registry serving alone composes and follows nothing.
    "mcp_core.visibility._combinators",
    "mcp_core.registry._propagation",
    "mcp_core.stores._bus",
    "mcp_core.stores._protocol",
)
"""Modules a plain app never needs to serve, each imported by the feature that uses it."""

SERVER = """
    import json
    import sys
    from typing import Annotated

    from pydantic import BaseModel, Field

    from mcp_core.app import App

    app = App("imports")


    class Point(BaseModel):
        x: int
        y: int = 0


    @app.tool
    def add(a: int, b: int = 1) -> int:
        '''Add two numbers.'''
        return a + b


    @app.tool
    def greet(name: str, loud: bool = False, times: float = 1.0) -> str:
        '''Greet someone.'''
        return f"hello {name}" + ("!" if loud else "") * int(times)


    @app.tool
    def loaded() -> str:
        '''The watched modules this process has imported, as a JSON array.'''
        watched = WATCHED
        return json.dumps(sorted(m for m in watched if m in sys.modules))


    if RICH:
        # Arguments beyond scalars are checked against the tool's schema, with jsonschema.
        @app.tool
        def norm(point: Point, scale: float | None = None) -> dict[str, float]:
            '''The point's taxicab norm.'''
            return {"norm": (abs(point.x) + abs(point.y)) * (scale or 1)}

        @app.tool
        def code(value: Annotated[str, Field(pattern="^[A-Z]{3}$")]) -> str:
            '''A three-letter code.'''
            return value


    if __name__ == "__main__":
        app.run()
"""


def server(folder: Path, *, rich: bool) -> StdioServerParameters:
    """``python server.py`` over stdio: the plain app, or with tools taking a model and a pattern."""
    source = textwrap.dedent(SERVER).replace("WATCHED", repr(WATCHED), 1)
    path = folder / "server.py"
    path.write_text(source.replace("RICH", repr(rich), 1), encoding="utf-8")
    return StdioServerParameters(command=sys.executable, args=[str(path)], env=dict(os.environ))


@pytest.mark.parametrize("options", [{}, {"mode": "legacy"}], ids=["2026-07-28", "legacy"])
async def test_a_first_call_finds_none_of_them(tmp_path: Path, options: dict[str, Any]) -> None:
    """Up to its first call, a served app has imported none of them (both protocol eras)."""
    async with Client(server(tmp_path, rich=False), **options) as client:
        assert json.loads(ok_text(await client.call_tool("loaded", {}))) == []


async def test_a_plain_app_serves_without_them(tmp_path: Path) -> None:
    """Admitting, listing and calling scalar tools loads none of them."""
    async with Client(server(tmp_path, rich=False)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"add", "greet", "loaded"}
        assert ok_text(await client.call_tool("add", {"a": 2})) == "3"
        greeted = await client.call_tool("greet", {"name": "ann", "loud": True, "times": 2})
        assert ok_text(greeted) == "hello ann!!"
        refused = await client.call_tool("add", {"a": "two"})
        assert refused.is_error
        assert "/a: 'two' is not of type 'integer'" in text(refused)
        assert json.loads(ok_text(await client.call_tool("loaded", {}))) == []


async def test_jsonschema_loads_and_checks_when_a_schema_needs_it(tmp_path: Path) -> None:
    """A model or a pattern in a schema is checked by jsonschema, imported then: bad values fail."""
    async with Client(server(tmp_path, rich=True)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        # Admission meta-checks the pattern's schema when the catalogue is built.
        loaded = ["jsonschema", "referencing"]
        assert json.loads(ok_text(await client.call_tool("loaded", {}))) == loaded
        result = await client.call_tool("norm", {"point": {"x": 3, "y": -4}, "scale": 2})
        assert json.loads(ok_text(result)) == {"norm": 14.0}
        refused = await client.call_tool("norm", {"point": {"y": 1}})
        assert refused.is_error
        assert "'x'" in text(refused)
        assert tools["code"].input_schema["properties"]["value"]["pattern"] == "^[A-Z]{3}$"
        assert ok_text(await client.call_tool("code", {"value": "ABC"})) == "ABC"
        refused = await client.call_tool("code", {"value": "abcd"})
        assert refused.is_error
        assert "pattern" in text(refused) or "^[A-Z]{3}$" in text(refused)
        assert json.loads(ok_text(await client.call_tool("loaded", {}))) == loaded


def test_sqlite3_loads_with_a_sqlite_store(tmp_path: Path) -> None:
    """Importing the stores costs no sqlite3; a SqliteStore in use imports it and works."""
    probe = textwrap.dedent(
        f"""
        import sys
        import anyio
        from mcp_core.stores import SqliteStore

        before = "sqlite3" in sys.modules

        async def main():
            async with SqliteStore({str(tmp_path / "cache.db")!r}) as store:
                await store.set("k", b"v")
                return await store.get("k")

        print(before, anyio.run(main), "sqlite3" in sys.modules)
        """
    )
    out = subprocess.run(  # noqa: S603 -- our own interpreter with a fixed program
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "b'v'", "True"]


def test_what_a_start_leaves_out_resolves_when_used() -> None:
    """The public names whose modules a stdio start leaves out import them on first use."""
    probe = textwrap.dedent(
        """
        import sys
        import mcp_core.app, mcp_core.server, mcp_core.sources, mcp_core.stores
        assert "mcp_core.server._deployment" not in sys.modules
        assert mcp_core.server.Deployment.__module__ == "mcp_core.server._deployment"
        assert mcp_core.sources.CachedSource.__module__ == "mcp_core.sources._cached"
        assert mcp_core.stores.RedisStore.__module__ == "mcp_core.stores._redis"
        assert "Deployment" in dir(mcp_core.server) and "SqliteStore" in dir(mcp_core.stores)
        import mcp_core.elements, mcp_core.registry, mcp_core.visibility
        from mcp_core.elements import UriTemplate, ResourceTemplate
        assert ResourceTemplate(uri_template="n://{id}", name="n").template == UriTemplate.parse("n://{id}")
        assert mcp_core.visibility.all_of.__module__ == "mcp_core.visibility._combinators"
        assert mcp_core.visibility.ALWAYS is mcp_core.visibility._combinators.ALWAYS
        assert mcp_core.registry.ChangePropagation.__module__ == "mcp_core.registry._propagation"
        assert mcp_core.server.InMemoryEventStore.__module__ == "mcp_core.server._events"
        assert mcp_core.server.WorkerStatus.__module__ == "mcp_core.server._deployed"
        assert "all_of" in dir(mcp_core.visibility) and "UriTemplate" in dir(mcp_core.elements)
        assert mcp_core.stores.ChangeBus.__module__ == "mcp_core.stores._bus"
        # What a start leaves out still describes the values that name it: a tool returning a
        # health report has its output schema, backends included.
        from mcp_core.handlers import tool_from_function
        from mcp_core.registry import RegistryHealth

        def health() -> RegistryHealth:
            return RegistryHealth(loaded=True, sources=(), at=0.0)

        schema = tool_from_function(health).definition.output_schema
        assert "backends" in schema["properties"], schema
        from mcp_core.sources import DiscoverySource, NoSuchSource
        """
    )
    out = subprocess.run(  # noqa: S603 -- our own interpreter with a fixed program
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    # Every lazily exported name resolves; an unknown one is still an ImportError naming it.
    assert out.returncode == 1, out.stderr
    assert "cannot import name 'NoSuchSource' from 'mcp_core.sources'" in out.stderr
