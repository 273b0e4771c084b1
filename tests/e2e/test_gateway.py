"""examples/gateway end to end: the official client, bearer tokens, HTTP and stdio backends."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.conftest import MCP_CORE, free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
GATEWAY = ROOT / "examples" / "gateway"

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def start_weather(port: int, *, alerts: bool = False) -> subprocess.Popen[bytes]:
    """The weather backend over streamable HTTP (``WEATHER_ALERTS`` adds a tool)."""
    env = dict(os.environ)
    env.pop("WEATHER_ALERTS", None)
    if alerts:
        env["WEATHER_ALERTS"] = "1"
    command = [str(MCP_CORE), "run", str(GATEWAY / "weather.py"), "--transport", "http"]
    process = subprocess.Popen(  # noqa: S603 -- our own console script
        [*command, "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, process)
    return process


def start_gateway(port: int, weather_port: int) -> subprocess.Popen[bytes]:
    """The gateway, checking its backends every 0.2 s, retrying a lost one at least every 1 s."""
    env = dict(os.environ)
    env["WEATHER_URL"] = f"http://127.0.0.1:{weather_port}/mcp"
    env["GATEWAY_HEALTH_INTERVAL"] = "0.2"
    env["GATEWAY_MAX_BACKOFF"] = "1"  # a restarted backend is found within a second
    process = subprocess.Popen(  # noqa: S603 -- our own example
        [sys.executable, str(GATEWAY / "gateway.py"), "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, process)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a process this test started, killing it if it lingers."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass
class Deployment:
    """A running gateway and its HTTP backend."""

    url: str
    weather_port: int
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)


@contextmanager
def deploy() -> Iterator[Deployment]:
    """The weather backend and the gateway (which starts the notes backend over stdio)."""
    weather_port, gateway_port = free_port(), free_port()
    running = Deployment(f"http://127.0.0.1:{gateway_port}/mcp", weather_port)
    try:
        running.processes["weather"] = start_weather(weather_port)
        running.processes["gateway"] = start_gateway(gateway_port, weather_port)
        yield running
    finally:
        for process in running.processes.values():
            stop(process)


@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    """One deployment shared by the tests that leave it as they found it."""
    with deploy() as running:
        yield running


@pytest.fixture
def fresh_deployment() -> Iterator[Deployment]:
    """A deployment of its own, for a test that kills and restarts a backend."""
    with deploy() as running:
        yield running


@dataclass
class Inbox:
    """What the gateway sent a client besides responses."""

    logs: list[Any] = field(default_factory=list)
    notifications: list[str] = field(default_factory=list)
    sampled: list[types.CreateMessageRequestParams] = field(default_factory=list)
    arrived: anyio.Event = field(default_factory=anyio.Event)

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params.data)

    async def on_message(self, message: IncomingMessage) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            self.notifications.append(method)
            self.arrived.set()

    async def sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampled.append(params)
        content = types.TextContent(type="text", text="forty-two")
        return types.CreateMessageResult(role="assistant", content=content, model="m")

    async def wait_for(self, method: str) -> None:
        with anyio.fail_after(90):  # a bound for a loaded machine, not a measured time
            while method not in self.notifications:
                self.arrived = anyio.Event()
                await self.arrived.wait()


@asynccontextmanager
async def connect(url: str, token: str, mode: str, inbox: Inbox) -> AsyncIterator[Client]:
    """The official client of the gateway, with ``token`` as its bearer token."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            sampling_callback=inbox.sampling,
            logging_callback=inbox.on_log,
            message_handler=inbox.on_message,
            log_level="debug",
        ) as client,
    ):
        yield client


async def every_tool(client: Client) -> set[str]:
    """The names of every tool, all pages walked."""
    names: set[str] = set()
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        names.update(tool.name for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return names


def text(result: types.CallToolResult) -> str:
    """The text of a result's first block."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


WEATHER = {"weather_forecast", "weather_explain"}
NOTES = {"notes_search", "notes_add", "notes_delete"}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
class TestGateway:
    """One endpoint, three origins, per-user visibility."""

    async def test_listing_across_backends_per_user(
        self, deployment: Deployment, mode: str
    ) -> None:
        """Alice sees every backend; Bob only the weather; both see the gateway's own tool."""
        async with (
            connect(deployment.url, "alice-token", mode, Inbox()) as alice,
            connect(deployment.url, "bob-token", mode, Inbox()) as bob,
        ):
            alice_tools = await every_tool(alice)
            bob_tools = await every_tool(bob)
            alice_resources = {str(r.uri) for r in (await alice.list_resources()).resources}
            bob_templates = {
                t.uri_template for t in (await bob.list_resource_templates()).resource_templates
            }
            alice_prompts = {p.name for p in (await alice.list_prompts()).prompts}
            who = text(await bob.call_tool("whoami"))
        assert WEATHER | NOTES | {"whoami", "status"} <= alice_tools
        assert bob_tools == WEATHER | {"whoami"}
        assert alice_resources == {"weather+weather://stations", "notes+notes://index"}
        assert bob_templates == {"weather+weather://city/{name}"}
        assert alice_prompts == {"weather_briefing", "notes_summarize"}
        assert who == "bob (scopes: weather)"

    async def test_calls_forwarded_with_progress_and_logging(
        self, deployment: Deployment, mode: str
    ) -> None:
        """Calls reach the HTTP and the stdio backend; their logs and progress reach the client."""
        inbox = Inbox()
        reports: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reports.append(progress)

        async with connect(deployment.url, "alice-token", mode, inbox) as alice:
            forecast = await alice.call_tool(
                "weather_forecast", {"city": "paris", "days": 2}, progress_callback=on_progress
            )
            found = await alice.call_tool("notes_search", {"query": "milk"})
            city = await alice.read_resource("weather+weather://city/oslo")
            note = await alice.read_resource("notes+notes://note/todo")
            briefing = await alice.get_prompt("weather_briefing", {"city": "lima"})
        assert text(forecast).startswith("paris: day 1:")
        assert found.structured_content == {"result": ["todo"]}
        assert reports == [1, 2]
        assert "forecasting paris for 2 days" in inbox.logs
        assert "searching notes for 'milk'" in inbox.logs
        assert '"latitude": 59.91' in city.contents[0].text  # type: ignore[union-attr]  # text
        assert str(city.contents[0].uri) == "weather+weather://city/oslo"
        assert note.contents[0].text == "buy milk; call Ann"  # type: ignore[union-attr]  # text
        assert "lima" in briefing.messages[0].content.text  # type: ignore[union-attr]  # text

    async def test_precedence_and_hidden_elements(self, deployment: Deployment, mode: str) -> None:
        """The gateway's own notes_delete wins; Bob cannot reach what he cannot see."""
        async with (
            connect(deployment.url, "alice-token", mode, Inbox()) as alice,
            connect(deployment.url, "bob-token", mode, Inbox()) as bob,
        ):
            refused = await alice.call_tool("notes_delete", {"name": "todo"})
            still = await alice.call_tool("notes_search", {"query": "milk"})
            with pytest.raises(Exception, match="Unknown tool: notes_search"):
                await bob.call_tool("notes_search", {"query": "milk"})
        assert refused.is_error
        assert "disabled" in text(refused)
        assert still.structured_content == {"result": ["todo"]}

    async def test_sampling_relayed(self, deployment: Deployment, mode: str) -> None:
        """A backend's sampling request reaches the client through the gateway, and back."""
        inbox = Inbox()
        async with connect(deployment.url, "alice-token", mode, inbox) as alice:
            result = await alice.call_tool("weather_explain", {"city": "oslo"})
        assert text(result) == "model says: forty-two"
        assert len(inbox.sampled) == 1


class TestBackendDown:
    """A backend killed mid-run, then back: stale listing, fast failures, list_changed."""

    async def test_killed_and_back(self, fresh_deployment: Deployment) -> None:
        """Its elements keep listing, its calls fail clearly, the others work, its return shows."""
        inbox = Inbox()
        async with connect(fresh_deployment.url, "alice-token", "legacy", inbox) as alice:
            before = await every_tool(alice)
            stop(fresh_deployment.processes.pop("weather"))

            failed = await alice.call_tool("weather_forecast", {"city": "paris"})
            again = await alice.call_tool("weather_forecast", {"city": "paris"})
            listed = await every_tool(alice)
            notes = await alice.call_tool("notes_search", {"query": "gateway"})
            status = text(await alice.call_tool("status"))
            with pytest.raises(Exception, match="unavailable"):
                await alice.read_resource("weather+weather://stations")

            fresh_deployment.processes["weather"] = start_weather(
                fresh_deployment.weather_port, alerts=True
            )
            await inbox.wait_for("notifications/tools/list_changed")
            after = await every_tool(alice)
            back = await alice.call_tool("weather_alerts", {"city": "oslo"})
        assert before >= WEATHER
        for result in (failed, again):
            assert result.is_error
            assert "'weather' is unavailable" in text(result)
            assert "retry later" in text(result)
        assert listed == before
        assert notes.structured_content == {"result": ["ideas"]}
        assert "[unavailable] PrefixedSource(RemoteSource('weather'), 'weather')" in status
        assert "serving its last good collection" in status
        assert after == before | {"weather_alerts"}
        assert text(back) == "no alerts for oslo"
