"""A served process drains on SIGTERM and SIGINT (ADR 0095), tried with the real console script.

Not ready at once (its socket closed: a balancer's check fails, new connections go elsewhere),
requests in flight finish and are answered, streams that never end on their own (a handshake-era
session's GET stream, a 2026-07-28 listen stream) end without holding the stop, and the process
exits 0. What the drain time cuts is counted, and the exit status says so.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client

from tests.cli.test_process import MCP_CORE, SERVING, finish, read_line, start, write
from tests.clients import listening, text, until

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

SERVER = """
    from pathlib import Path

    import anyio

    from mcp_core import App, ClientGateway
    from mcp_core.server import ServerGateway

    app = App("draining")


    @app.tool
    async def slow(seconds: float, marker: str) -> str:
        '''Say it started (the marker file), wait, answer.'''
        Path(marker).write_text("started")
        await anyio.sleep(seconds)
        return f"done after {seconds}"


    @app.tool
    async def polled(marker: str, go: str, gateway: ClientGateway) -> str:
        '''Log, wait for the go file, close the stream for polling (as countdown does), answer.'''
        await gateway.log("info", "started")
        Path(marker).write_text("started")
        while not Path(go).exists():
            await anyio.sleep(0.02)
        closed = isinstance(gateway, ServerGateway) and await gateway.close_sse_stream()
        await gateway.log("info", "closed" if closed else "kept")
        return "polled"
"""


@pytest.fixture
def serving(tmp_path: Path) -> Path:
    """The module served."""
    return write(tmp_path, "draining.py", SERVER)


def _run(server: Path, *flags: str) -> tuple[subprocess.Popen[str], str]:
    process = start([MCP_CORE, "run", str(server), "--transport", "http", "--port", "0", *flags])
    line = SERVING.match(read_line(process))
    assert line is not None
    return process, line["url"]


async def _started(marker: Path) -> None:
    await until(anyio.Path(marker).exists)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_call_in_flight_finishes_and_the_process_exits_0(
    serving: Path, tmp_path: Path, sig: signal.Signals, mode: str
) -> None:
    """Stopped mid-call: the call is answered, the port closes at once, exit status 0."""
    process, url = _run(serving)
    marker = tmp_path / "started"
    ready = url.removesuffix("/mcp") + "/readyz"
    answers: list[str] = []
    before, refused = 0, False
    try:
        try:
            async with Client(url, mode=mode) as client:
                # Listed first: the client checks a result against the tool's output schema,
                # and asks for it after the call otherwise (from a server that is gone then).
                await client.list_tools()
                async with anyio.create_task_group() as tasks:

                    async def call() -> None:
                        arguments = {"seconds": 1, "marker": str(marker)}
                        answers.append(text(await client.call_tool("slow", arguments)))

                    tasks.start_soon(call)
                    await _started(marker)
                    async with httpx2.AsyncClient(timeout=30) as http:
                        before = (await http.get(ready)).status_code
                        process.send_signal(sig)
                        refused = await _until_refused(http, ready)
        except* httpx2.TransportError:
            pass  # the client's goodbye (ending its session) finds the server gone
        returncode, err = await anyio.to_thread.run_sync(finish, process)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert before == 200
    assert refused
    assert answers == ["done after 1.0"]
    assert (returncode, err) == (0, f"mcp-core: stopped serving draining ({sig.name}, drained)\n")


async def test_a_draining_worker_keeps_a_polled_stream_open(serving: Path, tmp_path: Path) -> None:
    """A call that would close its stream for polling keeps it while draining: it is answered.

    Its resume would have nowhere to go (the port is closed), so the stream stays open and
    the call finishes on it.
    """
    process, url = _run(serving)
    marker, go = tmp_path / "started", tmp_path / "go"
    logged: list[str] = []

    async def on_log(params: object) -> None:
        logged.append(str(getattr(params, "data", "")))

    answers: list[str] = []
    try:
        try:
            async with Client(url, mode="legacy", logging_callback=on_log) as client:
                await client.list_tools()
                async with anyio.create_task_group() as tasks:

                    async def call() -> None:
                        arguments = {"marker": str(marker), "go": str(go)}
                        answers.append(text(await client.call_tool("polled", arguments)))

                    tasks.start_soon(call)
                    await _started(marker)
                    process.send_signal(signal.SIGTERM)
                    async with httpx2.AsyncClient(timeout=30) as http:
                        await _until_refused(http, url.removesuffix("/mcp") + "/readyz")
                    await anyio.Path(go).write_text("go")
        except* httpx2.TransportError:
            pass  # the client's goodbye (ending its session) finds the server gone
        returncode, err = await anyio.to_thread.run_sync(finish, process)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert answers == ["polled"]
    assert logged == ["started", "kept"]
    assert (returncode, err) == (0, "mcp-core: stopped serving draining (SIGTERM, drained)\n")


async def test_with_a_drain_delay_it_serves_on_not_ready(serving: Path, tmp_path: Path) -> None:
    """--drain-delay: not ready at once, yet serving, until the delay ends (or a second signal)."""
    process, url = _run(serving, "--drain-delay", "600")
    ready = url.removesuffix("/mcp") + "/readyz"
    try:
        async with httpx2.AsyncClient(timeout=30) as http:
            process.send_signal(signal.SIGTERM)
            await until(lambda: _unready(http, ready))
            async with Client(url) as client:
                await client.list_tools()  # the output schema, asked before the call
                arguments = {"seconds": 0, "marker": str(tmp_path / "started")}
                served = text(await client.call_tool("slow", arguments))
        process.send_signal(signal.SIGTERM)  # the second: stop now (nothing in flight)
        returncode, err = await anyio.to_thread.run_sync(finish, process)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert served == "done after 0.0"
    assert (returncode, err) == (0, "mcp-core: stopped serving draining (SIGTERM, drained)\n")


async def _unready(http: httpx2.AsyncClient, url: str) -> bool:
    return (await http.get(url)).status_code == 503


async def test_open_streams_do_not_hold_the_stop(serving: Path) -> None:
    """A legacy session's GET stream and a 2026-07-28 listen stream end at once: exit 0.

    Held open, either would keep the process up for the whole drain time and then be cut,
    which the exit status would say (143).
    """
    process, url = _run(serving, "--drain-time", "600")
    try:
        async with (
            listening(url, "legacy") as (legacy, _),
            listening(url, "auto") as (current, _),
        ):
            assert {tool.name for tool in (await legacy.list_tools()).tools} == {"slow", "polled"}
            assert {tool.name for tool in (await current.list_tools()).tools} == {"slow", "polled"}
            process.send_signal(signal.SIGTERM)
            returncode, err = await anyio.to_thread.run_sync(finish, process)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert (returncode, err) == (0, "mcp-core: stopped serving draining (SIGTERM, drained)\n")


async def test_what_the_drain_time_cuts_is_said(serving: Path, tmp_path: Path) -> None:
    """A call longer than --drain-time is cut: the client gets an error, the exit status 143."""
    process, url = _run(serving, "--drain-time", "0.2")
    marker = tmp_path / "started"
    failures: list[BaseException] = []
    try:
        async with Client(url) as client, anyio.create_task_group() as tasks:

            async def call() -> None:
                try:
                    await client.call_tool("slow", {"seconds": 600, "marker": str(marker)})
                except Exception as exc:  # noqa: BLE001 -- the failure is what is looked at
                    failures.append(exc)

            tasks.start_soon(call)
            await _started(marker)
            process.send_signal(signal.SIGTERM)
            returncode, err = await anyio.to_thread.run_sync(finish, process)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert len(failures) == 1
    assert returncode == 128 + signal.SIGTERM
    assert "1 still running when the drain time (0.2 s) ran out were cut" in err
    assert err.endswith(
        "mcp-core: stopped serving draining (SIGTERM, drained: 1 request(s) cut when the drain "
        "time ran out)\n"
    )


async def _until_refused(http: httpx2.AsyncClient, url: str) -> bool:
    """Whether ``url`` stops answering 200 (refused, or 503) once the stop is asked for."""
    with anyio.fail_after(30):  # a guard against hanging, not a timing assertion
        while True:
            try:
                if (await http.get(url)).status_code == 503:
                    return True
            except httpx2.TransportError:
                return True
            await anyio.sleep(0.01)
