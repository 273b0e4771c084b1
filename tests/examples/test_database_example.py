"""examples/database end to end: a PostgreSQL catalogue followed live, and an outage survived.

Needs a PostgreSQL server: ``MCP_CORE_POSTGRES_URL`` (``scripts/check`` starts one on loopback;
CI requires it). Each test gets a database of its own. The server reaches it through a TCP gate
the test controls, so "the database is down" is what a server sees when its database host goes
away: new connections refused, open ones cut.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager
from urllib.parse import urlsplit, urlunsplit

import anyio
import psycopg
import pytest
from anyio.abc import SocketStream, TaskGroup
from mcp import Client
from mcp.shared.exceptions import MCPError
from psycopg import sql

from tests.clients import Changes, listening, stdio, text, tool_names, until
from tests.examples.conftest import EXAMPLES

SERVER = EXAMPLES / "database" / "catalogue_server.py"
ADMIN_URL = os.environ.get("MCP_CORE_POSTGRES_URL", "")

pytestmark = [
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
    pytest.mark.skipif(not ADMIN_URL, reason="MCP_CORE_POSTGRES_URL is not set (scripts/check)"),
]

ServeHttp = Callable[..., AbstractContextManager[str]]


def with_database(url: str, name: str, *, port: int | None = None) -> str:
    """``url`` naming database ``name`` (and, given one, another port on the same host)."""
    parts = urlsplit(url)
    netloc = parts.netloc if port is None else parts.netloc.rsplit(":", 1)[0] + f":{port}"
    return urlunsplit(parts._replace(netloc=netloc, path=f"/{name}"))


@pytest.fixture
def database() -> Iterator[str]:
    """A fresh, empty database on the test server; dropped afterwards."""
    name = f"catalogue_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_database(ADMIN_URL, name)
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


class Gate:
    """A TCP forwarder to the database that the test can cut (refuse and reset) and restore."""

    def __init__(self, upstream: str, tasks: TaskGroup) -> None:
        parts = urlsplit(upstream)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 5432
        self._tasks = tasks
        self._open: set[SocketStream] = set()
        self._serving: anyio.CancelScope | None = None
        self.port = 0

    async def restore(self) -> None:
        """Accept connections (again, on the same port)."""
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)  # noqa: S610 -- anyio, not Django
        scope = self._serving = anyio.CancelScope()

        async def serve() -> None:
            with scope:
                async with listener:
                    await listener.serve(self._forward)

        self._tasks.start_soon(serve)

    async def cut(self) -> None:
        """Refuse new connections and reset the open ones."""
        if self._serving is not None:
            self._serving.cancel()
        for stream in tuple(self._open):
            await stream.aclose()

    async def _forward(self, client: SocketStream) -> None:
        async with client, await anyio.connect_tcp(self._host, self._port) as server:
            self._open |= {client, server}

            async def pipe(source: SocketStream, sink: SocketStream) -> None:
                try:
                    async for chunk in source:
                        await sink.send(chunk)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
                finally:
                    await sink.aclose()

            try:
                async with anyio.create_task_group() as pipes:
                    pipes.start_soon(pipe, client, server)
                    pipes.start_soon(pipe, server, client)
            finally:
                self._open -= {client, server}


@asynccontextmanager
async def gate_to(url: str) -> AsyncIterator[Gate]:
    """A running gate in front of the database at ``url``."""
    async with anyio.create_task_group() as tasks:
        gate = Gate(url, tasks)
        await gate.restore()
        try:
            yield gate
        finally:
            await gate.cut()
            tasks.cancel_scope.cancel()


def add_tool(url: str, name: str) -> None:
    """An admin adds a tool row, straight into the database."""
    definition = (
        f'{{"name": "{name}", "inputSchema": {{"type": "object", "properties": '
        f'{{"name": {{"type": "string"}}}}}}, "_meta": {{"template": "{name}, {{name}}!"}}}}'
    )
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(
            "INSERT INTO mcp_elements (kind, key, definition, handler) VALUES "
            "('tool', %s, %s, 'text.template')",
            (name, definition),
        )


async def test_follows_the_table_and_survives_an_outage(
    database: str, serve_http: ServeHttp, mode: str
) -> None:
    """A row added is announced; down: last good served, retried; back: reloaded, announced."""
    async with gate_to(database) as gate:
        env = {
            **os.environ,
            "CATALOGUE_DATABASE_URL": with_database(
                database, urlsplit(database).path[1:], port=gate.port
            ),
            "CATALOGUE_TIMEOUT": "3",
            "CATALOGUE_MAX_BACKOFF": "0.5",
        }
        with serve_http(SERVER, env=env) as url:
            async with listening(url, mode) as (client, changes):
                first = await tool_names(client)
                greeting = await client.call_tool("greet", {"name": "Ann"})
                shipped = await client.call_tool("order_status", {"order": 1})
                apology = await client.get_prompt("apology", {"order": "2"})

                add_tool(database, "farewell")
                with_farewell = first | {"farewell"}
                await changes.announce(client, with_farewell, after=changes.seen)

                await gate.cut()

                async def unavailable() -> bool:
                    return "[unavailable]" in text(await client.call_tool("catalogue_status", {}))

                await until(unavailable)
                during = await tool_names(client)
                still = await client.call_tool("greet", {"name": "Bo"})
                failed = await client.call_tool("order_status", {"order": 1})
                add_tool(database, "coupon")  # changed while the server could not see it
                before_restore = changes.seen

                await gate.restore()
                # Back: the catalogue is provided again, and the change is announced.
                await changes.announce(client, with_farewell | {"coupon"}, after=before_restore)
                back = await client.call_tool("order_status", {"order": 2})
                status = await client.call_tool("catalogue_status", {})
    assert first == {"greet", "order_status", "catalogue_status"}
    assert text(greeting) == "Hello Ann, welcome back!"
    assert text(shipped) == "order 1: shipped"
    assert text(apology) == "Write a short apology for the delay of order 2."
    assert during == with_farewell  # the last good catalogue, while the database is away
    assert text(still) == "Hello Bo, welcome back!"
    assert failed.is_error
    assert "unavailable" in text(failed)
    assert "retry later" in text(failed)
    assert text(back) == "order 2: packing"
    assert text(status) == "catalogue up to date"


async def test_a_bad_row_costs_only_itself_and_a_silent_database_is_bounded(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows naming foreign handlers or invalid definitions are skipped; a hung database times out."""
    monkeypatch.syspath_prepend(str(EXAMPLES / "database"))
    from catalogue_handlers import Handlers
    from catalogue_source import PostgresCatalogue

    from mcp_core.errors import SourceUnavailableError

    handlers = Handlers({"text.template": object()})
    source = PostgresCatalogue(database, handlers=handlers, timeout=2)
    assert len(await source.provide()) == 0  # a new database gets the table
    add_tool(database, "fine")
    with psycopg.connect(database, autocommit=True) as db:
        db.execute(
            "INSERT INTO mcp_elements (kind, key, definition, handler) VALUES "
            '(\'tool\', \'shell\', \'{"name": "shell", "inputSchema": {"type": "object"}}\', '
            "'subprocess:getoutput'), "
            '(\'tool\', \'broken\', \'{"name": "broken", "inputSchema": {"type": "array"}}\', '
            "'text.template')"
        )
    served = await source.provide()
    skipped = [d.message for d in source.diagnostics()]
    # A database that accepts connections and then says nothing: bounded by the timeout.
    silent = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with silent, anyio.create_task_group() as tasks:

        async def hold(stream: SocketStream) -> None:
            async with stream:
                await anyio.sleep_forever()

        tasks.start_soon(silent.serve, hold)
        port = silent.extra(anyio.abc.SocketAttribute.local_port)  # noqa: S610 -- anyio, not Django
        hung_url = with_database(database, "x", port=port)
        hung = PostgresCatalogue(hung_url, handlers=handlers, timeout=1)
        with pytest.raises(SourceUnavailableError, match="unreachable"):
            await hung.provide()
        tasks.cancel_scope.cancel()
    assert [element.ref.key for element in served] == ["fine"]
    assert any("'subprocess:getoutput' is not one of this server's handlers" in m for m in skipped)
    assert any("row (tool, 'broken') was skipped: its definition is invalid" in m for m in skipped)
    assert repr(source) == "PostgresCatalogue('mcp_elements')"  # never the password


def served_through(database: str, gate: Gate) -> dict[str, str]:
    """The example's configuration: ``database`` reached through ``gate``, retried quickly."""
    return {
        "CATALOGUE_DATABASE_URL": with_database(
            database, urlsplit(database).path[1:], port=gate.port
        ),
        "CATALOGUE_TIMEOUT": "3",
        "CATALOGUE_MAX_BACKOFF": "0.5",
    }


async def cold_start(client: Client, gate: Gate, changes: Changes) -> dict[str, object]:
    """Started with the database down: what is served, what is said, and what the return brings."""
    tools = await tool_names(client)
    status = text(await client.call_tool("catalogue_status", {}))
    with pytest.raises(MCPError) as missing:
        await client.call_tool("greet", {"name": "Ann"})
    before = changes.seen
    await gate.restore()  # back: the registry's retry provides it, and clients are told
    await changes.announce(client, {"greet", "order_status", "catalogue_status"}, after=before)
    greeting = text(await client.call_tool("greet", {"name": "Ann"}))
    prompt = text(await client.get_prompt("apology", {"order": "2"}))
    return {
        "tools": tools,
        "status": status,
        "missing": (missing.value.code, missing.value.message),
        "greeting": greeting,
        "prompt": prompt,
        "after": text(await client.call_tool("catalogue_status", {})),
    }


def assert_cold_start(seen: dict[str, object]) -> None:
    """The server started without its database, said why, and picked the elements up after."""
    assert seen["tools"] == {"catalogue_status"}  # what it can serve: not an empty server
    status = str(seen["status"])
    assert "[unavailable]" in status
    assert "the catalogue database is unreachable" in status  # says why
    assert "contributing nothing until it recovers" in status  # and what it does meanwhile
    assert seen["missing"] == (-32602, "Unknown tool: greet")
    assert seen["greeting"] == "Hello Ann, welcome back!"
    assert seen["prompt"] == "Write a short apology for the delay of order 2."
    assert seen["after"] == "catalogue up to date"


async def test_a_cold_start_without_the_database_over_http(
    database: str, serve_http: ServeHttp, mode: str
) -> None:
    """Down at start: the server starts, serves its own tools, says why; the return is announced."""
    async with gate_to(database) as gate:
        await gate.cut()
        with serve_http(SERVER, env={**os.environ, **served_through(database, gate)}) as url:
            async with listening(url, mode) as (client, changes):
                seen = await cold_start(client, gate, changes)
    assert_cold_start(seen)


async def test_a_cold_start_without_the_database_over_stdio(database: str, mode: str) -> None:
    """The same over stdio (``mcp-core run``): started, said why, the elements picked up later."""
    async with gate_to(database) as gate:
        await gate.cut()
        async with listening(stdio(SERVER, env=served_through(database, gate)), mode) as (
            client,
            changes,
        ):
            seen = await cold_start(client, gate, changes)
    assert_cold_start(seen)
