"""examples/gateway end to end: the official client, bearer tokens, HTTP and stdio backends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import anyio
import pytest
from mcp import Client

from mcp_core import ClientGateway
from mcp_core.bridges import RemoteSource
from mcp_core.elements import ElementKind, ElementRef
from mcp_core.errors import SourceUnavailableError
from mcp_core.handlers import Invoker
from mcp_core.handlers.testing import RecordingGateway
from tests.clients import MCP_CORE, ROOT, WAIT, Inbox, bearer, text, tool_names
from tests.e2e.conftest import free_port, start, stop

GATEWAY = ROOT / "examples" / "gateway"

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def start_weather(port: int, *, alerts: bool = False) -> subprocess.Popen[bytes]:
    """The weather backend over streamable HTTP (``WEATHER_ALERTS`` adds a tool)."""
    command = [str(MCP_CORE), "run", str(GATEWAY / "weather.py"), "--transport", "http"]
    return start([*command, "--port", str(port)], port, {"WEATHER_ALERTS": "1" if alerts else ""})


def start_gateway(port: int, weather_port: int, log: IO[bytes]) -> subprocess.Popen[bytes]:
    """The gateway, checking its backends every 0.2 s, retrying a lost one at least every 1 s.

    What it logs goes to ``log`` (shown when a test of it fails).
    """
    env = {
        "WEATHER_URL": f"http://127.0.0.1:{weather_port}/mcp",
        "GATEWAY_HEALTH_INTERVAL": "0.2",
        "GATEWAY_MAX_BACKOFF": "1",  # a restarted backend is found within a second
    }
    command = [
        sys.executable,
        str(GATEWAY / "gateway.py"),
        "--port",
        str(port),
        "--log-level",
        "info",
    ]
    return start(command, port, env, stderr=log)


@dataclass
class Deployment:
    """A running gateway and its HTTP backend."""

    url: str
    weather_port: int
    log: IO[bytes]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def logged(self) -> str:
        """The end of what the gateway logged so far (its HTTP client's request lines left out)."""
        self.log.seek(0)
        lines = self.log.read().decode(errors="replace").splitlines()
        return "\n".join(line for line in lines if " httpx2: " not in line)[-20_000:]


@contextmanager
def deploy() -> Iterator[Deployment]:
    """The weather backend and the gateway (which starts the notes backend over stdio)."""
    weather_port, gateway_port = free_port(), free_port()
    with tempfile.TemporaryFile() as log:
        running = Deployment(f"http://127.0.0.1:{gateway_port}/mcp", weather_port, log)
        try:
            running.processes["weather"] = start_weather(weather_port)
            running.processes["gateway"] = start_gateway(gateway_port, weather_port, log)
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


def connect(url: str, token: str, mode: str, inbox: Inbox) -> AbstractAsyncContextManager[Client]:
    """The official client of the gateway, with ``token`` as its bearer token."""
    return bearer(url, token, inbox, mode=mode, log_level="debug")


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
            alice_tools = await tool_names(alice)
            bob_tools = await tool_names(bob)
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
            before = await tool_names(alice)
            stop(fresh_deployment.processes.pop("weather"))

            failed = await alice.call_tool("weather_forecast", {"city": "paris"})
            again = await alice.call_tool("weather_forecast", {"city": "paris"})
            listed = await tool_names(alice)
            notes = await alice.call_tool("notes_search", {"query": "gateway"})
            status = text(await alice.call_tool("status"))
            with pytest.raises(Exception, match="unavailable"):
                await alice.read_resource("weather+weather://stations")

            fresh_deployment.processes["weather"] = start_weather(
                fresh_deployment.weather_port, alerts=True
            )
            try:
                await inbox.wait_for("notifications/tools/list_changed")
            except TimeoutError:
                pytest.fail(
                    f"no list_changed after the restart; the gateway logged:\n"
                    f"{fresh_deployment.logged()}"
                )
            after = await tool_names(alice)
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


def weather_source(port: int, mode: str, **options: Any) -> RemoteSource:
    """The weather backend on ``port`` as a remote source, spoken to in ``mode``'s era."""
    era = "auto" if mode == "2026-07-28" else "legacy"
    return RemoteSource.http(f"http://127.0.0.1:{port}/mcp", name="weather", mode=era, **options)


class Availability:
    """Waits for a source to be available or not, woken by its change announcements."""

    def __init__(self, source: RemoteSource) -> None:
        self.source = source
        self.changed = anyio.Event()
        source.subscribe(self.announced)

    def announced(self, kinds: object) -> None:
        """A change was announced: look again."""
        self.changed.set()

    async def until(self, *, wanted: bool) -> None:
        """Until ``source.available`` is ``wanted`` (bounded by WAIT)."""
        with anyio.fail_after(WAIT):
            while self.source.available is not wanted:
                await self.changed.wait()
                self.changed = anyio.Event()


def stdio_weather(pid_file: Path, mode: str, **options: Any) -> RemoteSource:
    """The weather backend over stdio, writing its pid to ``pid_file`` (``exec`` keeps it)."""
    script = f'echo $$ > "$0"; exec "{MCP_CORE}" run "{GATEWAY / "weather.py"}"'
    return RemoteSource.stdio(
        "sh",
        ["-c", script, str(pid_file)],
        name="weather",
        mode="auto" if mode == "2026-07-28" else "legacy",
        **options,
    )


FAULTS = {
    # SIGSTOP: connections stay open, nothing fails by itself; only the check can tell.
    "frozen": r"'weather' is unavailable \(it did not answer a check within 1 s\)",
    # SIGKILL: connections reset; SIGTERM: the backend drains and ends its streams gracefully.
    "killed": r"'weather' is unavailable \(",
    "stopped": r"'weather' is unavailable \(",
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_backend_gone_silent_is_found_by_the_health_check(mode: str, fault: str) -> None:
    """Nothing called, nothing listed: the periodic check alone finds a backend gone, and its return.

    The backend is frozen (SIGSTOP), killed (SIGKILL) or stopped (SIGTERM, a drain that ends its
    streams as a redeploy does). The check must reach it in either era (a ``server/discover``
    answered from the client's own memory proved nothing: a stopped or frozen backend went
    unseen until the next listing), and a frozen one is said down as its check fails, not once
    a close that waits on it ends; then the backend is resumed or started again, and is back.
    """
    port = free_port()
    weather = start_weather(port)
    source = weather_source(port, mode, health_interval=0.1, max_backoff=0.5, poll_interval=None)
    until_available = Availability(source).until
    try:
        async with source.running():
            assert {e.ref.key for e in await source.provide()} >= {"forecast", "explain"}
            assert source.available is True
            if fault == "frozen":
                weather.send_signal(signal.SIGSTOP)
            elif fault == "killed":
                weather.kill()
                weather.wait()
            else:
                stop(weather)
            await until_available(wanted=False)
            with pytest.raises(SourceUnavailableError, match=FAULTS[fault]):
                await source.provide()
            if fault == "frozen":
                weather.send_signal(signal.SIGCONT)
            else:
                weather = start_weather(port)
            await until_available(wanted=True)
            assert {e.ref.key for e in await source.provide()} >= {"forecast", "explain"}
    finally:
        weather.send_signal(signal.SIGCONT)
        stop(weather)


class FreezesOnProgress:
    """A client gateway that freezes ``process`` (SIGSTOP) when the first progress arrives."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.recorded = RecordingGateway()
        self.process = process

    def __getattr__(self, name: str) -> Any:
        return getattr(self.recorded, name)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Freeze the backend mid-call, then record the notification."""
        self.process.send_signal(signal.SIGSTOP)
        await self.recorded.progress(progress, total, message)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_call_to_a_backend_frozen_mid_call_keeps_to_its_timeout(mode: str) -> None:
    """The backend freezes while a forwarded call runs: the call ends as ``call_timeout`` says.

    The call times out after ``call_timeout``; closing its connection (the cancellation, and in
    the handshake era the session's end) talks to the frozen backend, and is cut within the
    check's bound: it waited for the HTTP read timeout, five minutes, before.
    """
    port = free_port()
    weather = start_weather(port)
    try:
        source = weather_source(port, mode, timeout=2.0, call_timeout=1.0)
        collection = await source.provide()
        (forecast,) = (e for e in collection if e.ref == ElementRef(ElementKind.TOOL, "forecast"))
        gateway = FreezesOnProgress(weather)
        with anyio.fail_after(WAIT):
            result = await Invoker().call_tool(
                forecast, {"city": "oslo"}, cast("ClientGateway", gateway)
            )
        assert result["isError"] is True
        assert "'weather' did not answer: Request 'tools/call' timed out" in str(result["content"])
        assert [type(call).__name__ for call in gateway.recorded.calls][-1] == "ProgressCall"
    finally:
        weather.send_signal(signal.SIGCONT)
        stop(weather)


async def test_a_call_to_a_backend_frozen_since_its_last_check_keeps_to_the_check_bound() -> None:
    """Frozen just before a call: the call's own handshake is held to the check's bound.

    In the handshake era a forwarded call opens a session of its own; against a backend that
    froze since its last check, that handshake waited for the whole ``timeout`` (here longer
    than the test's bound), past the call's ``call_timeout``.
    """
    port = free_port()
    weather = start_weather(port)
    source = weather_source(
        port, "legacy", timeout=120.0, call_timeout=1.0, health_interval=0.25, poll_interval=None
    )
    try:
        async with source.running():
            collection = await source.provide()
            (forecast,) = (e for e in collection if e.ref.key == "forecast")
            weather.send_signal(signal.SIGSTOP)
            with anyio.fail_after(WAIT):
                result = await Invoker().call_tool(
                    forecast, {"city": "oslo"}, cast("ClientGateway", RecordingGateway())
                )
        assert result["isError"] is True
        assert "'weather' is unavailable (it did not answer a handshake within 1 s)" in str(
            result["content"]
        )
    finally:
        weather.send_signal(signal.SIGCONT)
        stop(weather)


@pytest.mark.parametrize("fault", ["frozen", "killed"])
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_stdio_backend_gone_silent_is_found_by_the_health_check(
    mode: str, fault: str, tmp_path: Path
) -> None:
    """The same over stdio: a backend process frozen (SIGSTOP) or killed is said down, then back.

    The backend's process is the source's own child; it writes its pid first (``exec`` keeps
    it), so the test can freeze or kill it. A frozen one keeps its pipes open: only the check can
    tell, and closing its session (which waits on the process) is cut within the check's bound.
    A killed one is started again by the source at its next try.
    """
    pid_file = tmp_path / "pid"
    source = stdio_weather(pid_file, mode, health_interval=0.1, max_backoff=0.5, poll_interval=None)
    until_available = Availability(source).until

    def backend() -> int:
        return int(pid_file.read_text())

    frozen: int | None = None
    try:
        async with source.running():
            assert {e.ref.key for e in await source.provide()} >= {"forecast", "explain"}
            first = backend()
            if fault == "frozen":
                frozen = first
                os.kill(first, signal.SIGSTOP)
            else:
                os.kill(first, signal.SIGKILL)
            await until_available(wanted=False)
            with pytest.raises(SourceUnavailableError, match=FAULTS[fault]):
                await source.provide()
            if fault == "frozen":
                os.kill(first, signal.SIGCONT)
            await until_available(wanted=True)
            assert {e.ref.key for e in await source.provide()} >= {"forecast", "explain"}
            if fault == "killed":
                assert backend() != first  # started again
    finally:
        if frozen is not None:
            with suppress(ProcessLookupError):
                os.kill(frozen, signal.SIGCONT)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_frozen_stdio_backend_is_found_while_calls_keep_coming(
    mode: str, tmp_path: Path
) -> None:
    """Calls keep the one stdio session busy while the backend is frozen: the check still runs.

    Requests to a stdio remote take turns on its session; the check skipped its turn while one
    held it, so with calls coming steadily a frozen backend was never found down, and each call
    waited for the calls before it and then for its own ``call_timeout``. The check now takes
    its turn too: after the calls already waiting, the remote is found down, and the calls after
    that fail at once; then the source starts the backend again.
    """
    pid_file = tmp_path / "pid"
    source = stdio_weather(
        pid_file, mode, health_interval=0.1, max_backoff=0.5, poll_interval=None, call_timeout=1.0
    )
    outcomes: list[str] = []
    first = 0
    try:
        async with source.running():
            collection = await source.provide()
            (explain,) = (e for e in collection if e.ref.key == "explain")
            first = int(pid_file.read_text())
            os.kill(first, signal.SIGSTOP)

            async def caller() -> None:
                while source.available is not False:
                    result = await Invoker().call_tool(
                        explain, {"city": "oslo"}, cast("ClientGateway", RecordingGateway())
                    )
                    outcomes.append(str(result["content"]))
                    await anyio.sleep(0.01)

            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as callers:
                    callers.start_soon(caller)
                    callers.start_soon(caller)
            result = await Invoker().call_tool(
                explain, {"city": "oslo"}, cast("ClientGateway", RecordingGateway())
            )
        # The call holding the turn times out on the remote; one waiting for it may end first.
        assert any(
            "'weather' did not answer: Request 'tools/call' timed out" in o for o in outcomes
        )
        assert "'weather' is unavailable (it did not answer a check within 1 s)" in str(
            result["content"]
        )
    finally:
        if first:
            with suppress(ProcessLookupError):
                os.kill(first, signal.SIGCONT)
