"""Attacker: a hostile backend. Each finding of the hostile-backend pass, as the test that tries it.

Every test here models one backend behind a gateway sending what it likes: huge or endless
lists, slow lists, self-referring, remote and over-deep schemas, over-long names, answers of
megabytes or without end, calls that never end. Each failed before its fix (the whole gateway
froze, every call to a tool logged ~2,000 traceback lines, the backend was dropped whole, a
call outlived its timeout) and now shows the backend costing only itself. The hostile server is
the SDK's low-level server of ``tests/e2e/servers/hostile_backend.py``, reached in this process,
over streamable HTTP or over stdio; the same server, driven by hypothesis behind a real gateway,
is in ``tests/e2e/test_hostile_gateway.py``.
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.server import Server
from mcp.shared.exceptions import MCPError

from mcp_core import App, ClientGateway
from mcp_core.bridges import RemoteSource
from mcp_core.bridges import _remote as remote
from mcp_core.bridges._common import Backend, bridged
from mcp_core.elements import ElementKind
from mcp_core.errors import InvalidElementError, SourceUnavailableError
from mcp_core.handlers import Invoker
from mcp_core.handlers._jsonschema import CompiledSchema
from mcp_core.handlers.testing import RecordingGateway
from mcp_core.sources import PrefixedSource
from tests.clients import ROOT, until
from tests.e2e.conftest import free_port, start, stop
from tests.e2e.servers.hostile_backend import build

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

HOSTILE = ROOT / "tests" / "e2e" / "servers" / "hostile_backend.py"


def hostile(tmp_path: Path, **plan: Any) -> Server[Any]:
    """The hostile server carrying out ``plan``, to reach in this process."""
    return build(plan, tmp_path / "listed")


def listings(tmp_path: Path) -> int:
    """How many list requests the hostile server answered."""
    listed = tmp_path / "listed"
    return listed.read_text().count("listed") if listed.exists() else 0


@pytest.fixture
def serve_hostile(tmp_path: Path) -> Iterator[Any]:
    """Start the hostile server over streamable HTTP with a plan: ``serve(**plan)`` -> its URL."""
    running: list[subprocess.Popen[bytes]] = []

    def serve(**plan: Any) -> str:
        path = tmp_path / f"plan{len(running)}.json"
        path.write_text(json.dumps(plan))
        port = free_port()
        running.append(start([sys.executable, str(HOSTILE), str(port), str(path)], port))
        return f"http://127.0.0.1:{port}/mcp"

    yield serve
    for process in running:
        stop(process)


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The log records that carry a traceback."""
    return [record for record in caplog.records if record.exc_info]


def gateway(source: RemoteSource) -> App:
    """An app serving ``source`` under the prefix ``hostile`` and a local tool."""
    app = App("gateway")
    app.add_source(PrefixedSource(source, "hostile"))

    @app.tool
    def echo(text: str) -> str:
        """The gateway's own tool."""
        return text

    return app


class TestListingBounds:
    """A huge, endless or slow list costs the listing, never the process."""

    async def test_a_huge_list_is_read_to_max_elements(self, tmp_path: Path) -> None:
        """20 pages of 1,000 tools: the first max_elements are served, one page read, one note.

        Before, every page was read and every element made (1e6 tools: minutes of CPU and GBs).
        """
        source = RemoteSource(
            hostile(tmp_path, pages=20, per_page=1000), mode="legacy", max_elements=1500
        )
        collection = await source.provide()
        (note,) = source.diagnostics()
        assert len(collection) == 1500
        assert "more than max_elements=1500" in note.message
        assert "serving the first 1500" in note.message
        assert listings(tmp_path) == 2  # the pages holding the first 1,500, no more

    async def test_the_budget_runs_across_kinds(self) -> None:
        """Elements counted across every list: tools first, then nothing more is asked."""
        tools = [types.Tool(name=f"t{i}", input_schema={"type": "object"}) for i in range(5)]
        asked: list[str] = []

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            asked.append("tools")
            return types.ListToolsResult(tools=tools)

        async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
            asked.append("prompts")
            return types.ListPromptsResult(prompts=[types.Prompt(name="p")])

        server = Server("two", on_list_tools=list_tools, on_list_prompts=list_prompts)
        source = RemoteSource(server, mode="legacy", max_elements=5)
        collection = await source.provide()
        assert [element.ref.key for element in collection] == [f"t{i}" for i in range(5)]
        assert asked == ["tools", "prompts"]  # the prompts page came, but took nothing
        source = RemoteSource(server, mode="legacy", max_elements=3)
        asked.clear()
        assert len(await source.provide()) == 3
        assert asked == ["tools"]

    async def test_a_slow_list_is_cut_at_max_listing_time(self, tmp_path: Path) -> None:
        """An endless list, each page slow: what was read within the bound is served."""

        async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
            page = int(params.cursor) if params is not None and params.cursor else 0
            await anyio.sleep(0.05)
            tool = types.Tool(name=f"t{page}", input_schema={"type": "object"})
            return types.ListToolsResult(tools=[tool], next_cursor=str(page + 1))

        slow = Server("slow", on_list_tools=list_tools)
        source = RemoteSource(slow, mode="legacy", max_listing_time=0.5)
        collection = await source.provide()
        (note,) = source.diagnostics()
        assert "did not finish within 0.5 s" in note.message
        assert f"serving the {len(collection)} elements read" in note.message
        assert 0 < len(collection) < 1000

    async def test_elements_are_made_with_the_loop_free(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """3,000 elements are made a stretch at a time: other tasks run between stretches.

        Before, every element of a listing was made in one go, the event loop blocked throughout.
        """
        turns = 0
        seen: list[int] = []  # the other task's turns when each element was made
        admit = remote._admit

        def counted(*args: Any, **options: Any) -> Any:
            seen.append(turns)
            return admit(*args, **options)

        monkeypatch.setattr(remote, "_admit", counted)
        source = RemoteSource(hostile(tmp_path, per_page=3000), mode="legacy")
        done = anyio.Event()

        async def other_task() -> None:
            nonlocal turns
            while not done.is_set():
                turns += 1
                await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(other_task)
            collection = await source.provide()
            done.set()
        assert len(collection) == 3000
        longest = max(seen.count(turn) for turn in set(seen))
        assert longest <= 256  # never more than a stretch without the other task's turn


@dataclass(frozen=True)
class HostileRemote:
    """``remote(plan, **options)``: a RemoteSource for the hostile server over ``transport``."""

    transport: str
    folder: Path
    serve_http: Any

    def __call__(self, plan: dict[str, Any], **options: Any) -> RemoteSource:
        if self.transport == "http":
            return RemoteSource.http(self.serve_http(**plan), name="hostile", **options)
        path = self.folder / "plan.json"
        path.write_text(json.dumps(plan))
        return RemoteSource.stdio(
            sys.executable, [str(HOSTILE), "--stdio", str(path)], name="hostile", **options
        )


@pytest.fixture(params=["http", "stdio"])
def hostile_remote(
    request: pytest.FixtureRequest, tmp_path: Path, serve_hostile: Any
) -> HostileRemote:
    """The hostile server as a RemoteSource's remote, over each transport."""
    return HostileRemote(request.param, tmp_path, serve_hostile)


class TestMessageBytes:
    """What a remote sends is counted, over HTTP and stdio: no message over the bound is held.

    Reading one costs time linear in its size (``test_metering.py`` holds the framing's laws).
    """

    async def test_a_page_over_max_bytes_fails_that_listing_alone(
        self, hostile_remote: HostileRemote, caplog: pytest.LogCaptureFixture
    ) -> None:
        """One ~8 MB page: the remote is unavailable, saying which bound; no traceback of ours."""
        source = hostile_remote(
            {"per_page": 4000, "description_bytes": 2000}, max_message_bytes=1_000_000
        )
        with pytest.raises(SourceUnavailableError, match="larger than max_message_bytes=1000000"):
            await source.provide()
        assert not [r for r in tracebacks(caplog) if r.name.startswith("mcp_core")]

    async def test_pages_are_read_with_a_running_byte_budget(
        self, hostile_remote: HostileRemote
    ) -> None:
        """Ten pages of ~200 kB against a 500 kB budget: the pages read by then are served."""
        source = hostile_remote(
            {"pages": 10, "per_page": 100, "description_bytes": 2000}, max_bytes=500_000
        )
        collection = await source.provide()
        (note,) = source.diagnostics()
        assert "more than max_bytes=500000" in note.message
        assert 100 <= len(collection) <= 300
        assert len(collection) % 100 == 0

    async def test_large_pages_within_the_bound_are_read(
        self, hostile_remote: HostileRemote
    ) -> None:
        """A 3 MB page (over the SDK's own 1 MiB event limit) is read whole by default."""
        source = hostile_remote({"per_page": 1500, "description_bytes": 2000})
        collection = await source.provide()
        assert len(collection) == 1500
        assert not source.diagnostics()

    async def test_a_refused_answer_is_not_blamed_on_a_later_page(
        self, hostile_remote: HostileRemote
    ) -> None:
        """After a call's answer was refused for its size, a list the remote refuses costs that list.

        The meter remembered the refusal, and the next listing took the remote's refusal of its
        prompts list for a page over the bound: the whole remote was unavailable ("a page of its
        prompts list is larger than max_message_bytes").
        """
        source = hostile_remote(
            {"per_page": 2, "call": "flood", "prompts": "refuse"}, max_message_bytes=1_000_000
        )
        (tool, _) = sorted(await source.provide(), key=lambda e: e.ref.key)
        result = await Invoker().call_tool(
            tool, {"x": "a"}, cast("ClientGateway", RecordingGateway())
        )
        assert "larger than max_message_bytes=1000000" in str(result["content"])
        again = await source.provide()
        assert sorted(element.ref.key for element in again) == ["t0_0", "t0_1"]
        (note,) = source.diagnostics()
        assert "the remote refused prompts/list" in note.message

    @pytest.mark.parametrize("call", ["flood", "endless"])
    async def test_an_answer_over_max_message_bytes_fails_that_call_alone(
        self, hostile_remote: HostileRemote, call: str, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A 64 MiB answer, or one that never ends: that call fails at once, naming the bound.

        Over stdio the official client's reader joined each chunk to the line so far and held
        it whole: a 64 MiB answer took past a 20 s ``call_timeout`` to fail (timed out) with the
        gateway's event loop busy copying, and an answer that never ends grew without bound.
        Now the line is skipped unread from the bound on, and the call in progress fails; the
        remote's session goes on (its next answers are read) once the line ends.
        """
        if call == "endless" and hostile_remote.transport == "http":
            pytest.skip("over HTTP an answer's size is bounded by its JSON read (flood)")
        app = gateway(hostile_remote({"per_page": 2, "call": call}, max_message_bytes=1_000_000))
        async with Client(app.server.lowlevel, mode="legacy") as client:
            with anyio.fail_after(60):
                failed = await client.call_tool("hostile_t0_0", {"x": "a"})
                echoed = await client.call_tool("echo", {"text": "hi"})
                listed = {tool.name for tool in (await client.list_tools()).tools}
        assert failed.is_error
        assert "larger than max_message_bytes=1000000 bytes; it was not read" in str(failed.content)
        assert echoed.content[0].text == "hi"  # type: ignore[union-attr]  # text
        assert listed == {"echo", "hostile_t0_0", "hostile_t0_1"}
        assert not [r for r in tracebacks(caplog) if r.name.startswith("mcp_core")]


class TestSchemas:
    """Schemas a remote may send, refused per element with one line, never a traceback."""

    @pytest.mark.parametrize(
        ("schema", "why"),
        [
            ("cycle", "leads back here without descending into the input"),
            ("loop", "leads back here without descending into the input"),
            ("remote", "refers to another document, which is never fetched"),
        ],
    )
    async def test_unfollowable_refs_cost_their_element(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture, schema: str, why: str
    ) -> None:
        """``{"$ref": "#"}`` made every call fail with ~1,960 traceback lines; now it is not listed."""
        app = gateway(RemoteSource(hostile(tmp_path, per_page=2, schema=schema), mode="legacy"))
        async with Client(app.server.lowlevel, mode="legacy") as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            with pytest.raises(MCPError, match="Unknown tool: hostile_t0_0"):
                await client.call_tool("hostile_t0_0", {})
            echoed = await client.call_tool("echo", {"text": "hi"})
        assert listed == {"echo"}
        assert echoed.content[0].text == "hi"  # type: ignore[union-attr]  # text
        skipped = [d.message for d in app.registry.diagnostics() if d.kind == "skipped"]
        assert len(skipped) == 2
        assert all(why in message for message in skipped)
        assert not tracebacks(caplog)

    def test_a_remote_ref_is_never_fetched(self) -> None:
        """A schema referring to a URL is refused when compiled; nothing is asked of that URL."""
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            listener.settimeout(0.2)
            port = listener.getsockname()[1]
            schema = {"type": "object", "$ref": f"http://127.0.0.1:{port}/schema.json"}
            with pytest.raises(ValueError, match="never fetched"):
                CompiledSchema(schema)
            with pytest.raises(TimeoutError):
                listener.accept()

    async def test_deep_schemas_cost_their_element(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A 180-level schema is skipped at admission, its neighbours served, no traceback."""
        app = gateway(
            RemoteSource(hostile(tmp_path, per_page=2, schema="deep", depth=90), mode="legacy")
        )
        async with Client(app.server.lowlevel, mode="legacy") as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
        assert listed == {"echo"}
        skipped = [d.message for d in app.registry.diagnostics() if d.kind == "skipped"]
        assert len(skipped) == 2
        assert all("more than the limit of 64" in message for message in skipped)
        assert not tracebacks(caplog)

    @pytest.mark.parametrize("mode", ["legacy", "auto"])
    async def test_a_page_too_deep_for_the_client_costs_its_element(
        self, hostile_remote: HostileRemote, mode: str, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A 300-deep schema on a page: that tool skipped, the page's others served.

        Before, the official client could not parse the page at all: over HTTP every listing
        failed and the backend was down, with a dozen tracebacks per listing, and then, in the
        handshake era (whose answers are events of a stream), still; over stdio the page was
        never answered (the line could not be parsed, so no request was), and the listing waited
        out its timeout.
        """
        source = hostile_remote({"per_page": 3, "raw_depth": 300}, mode=mode)
        with anyio.fail_after(20):
            collection = await source.provide()
        assert sorted(element.ref.key for element in collection) == ["t0_1", "t0_2"]
        (note,) = source.diagnostics()
        assert "1 elements of its tools list nest JSON more than 150 levels deep" in note.message
        assert not [r for r in tracebacks(caplog) if r.name.startswith("mcp_core")]

    def test_definitions_too_deep_to_read_are_invalid_elements(self) -> None:
        """300 levels, past what pydantic serialises: an InvalidElementError, not a crash.

        Before, the ValueError escaped the listing and took the whole backend down.
        """
        inner: dict[str, Any] = {"type": "string"}
        for _ in range(300):
            inner = {"type": "object", "properties": {"x": inner}}
        model = types.Tool.model_construct(name="deep", input_schema=inner)
        backend = Backend(source=None, call=None, read=None, get=None, complete=None)  # type: ignore[arg-type]  # never called
        with pytest.raises(InvalidElementError, match="too deeply to be read"):
            bridged(ElementKind.TOOL, model, backend, frozenset())


class TestTakingTurns:
    """Requests take turns on a stdio remote's one session, each within its own timeout."""

    @pytest.mark.parametrize("mode", ["legacy", "auto"])
    async def test_a_call_waiting_for_its_turn_keeps_to_its_call_timeout(
        self, tmp_path: Path, mode: str
    ) -> None:
        """Three calls at once to a remote that answers each after 1.5 s, ``call_timeout=2``.

        Before, each waited for the calls before it and then had its whole timeout: all three
        were answered, the last after 4.5 s. Now the wait for the turn is part of the call's
        timeout: the first is answered, and the two behind it cannot be (their turn comes after
        1.5 s, with at most 0.5 s left), each ending as "timed out" on the remote or, when its
        time ran out before its turn came, "busy"; the remote is busy, not down. (Which of the
        two a queued call says depends on timers firing at about the same moment; that none is
        answered does not.)
        """
        source = HostileRemote("stdio", tmp_path, None)(
            {"per_page": 2, "call": "slow"}, mode=mode, call_timeout=2.0, health_interval=0.2
        )
        said: list[str] = []
        async with source.running():
            (tool, _) = sorted(await source.provide(), key=lambda e: e.ref.key)

            async def call() -> None:
                result = await Invoker().call_tool(
                    tool, {"x": "a"}, cast("ClientGateway", RecordingGateway())
                )
                said.append(str(result["content"]))

            with anyio.fail_after(60):
                async with anyio.create_task_group() as calls:
                    for _ in range(3):
                        calls.start_soon(call)
            assert source.available
        timed_out = "'hostile' did not answer: Request 'tools/call' timed out"
        busy = (
            "'hostile' did not answer: its one session was busy with other requests for 2 s, "
            "this request's timeout, before its turn came"
        )
        failed = [text for text in said if timed_out in text or busy in text]
        answered = [text for text in said if "'text': 'hostile'" in text]
        assert len(said) == 3, said
        assert len(failed) >= 2, said  # the queued calls: never answered
        assert len(answered) + len(failed) == 3, said


class TestNames:
    """A remote tool name over 128 characters once prefixed costs that tool alone."""

    async def test_over_long_names_cost_their_element(self, tmp_path: Path) -> None:
        """Before, one such name dropped the whole backend; now the others are served."""

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(
                tools=[
                    types.Tool(name="n" * 125, input_schema={"type": "object"}),
                    types.Tool(name="fine", input_schema={"type": "object"}),
                ]
            )

        app = gateway(RemoteSource(Server("long", on_list_tools=list_tools), mode="legacy"))
        async with Client(app.server.lowlevel, mode="legacy") as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
        assert listed == {"echo", "hostile_fine"}
        (skipped,) = [d for d in app.registry.diagnostics() if d.kind == "skipped"]
        assert "use a shorter prefix" in skipped.message


class TestListChangedStorm:
    """A backend's storm of list changes reaches each client as about one a second per kind."""

    @pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
    async def test_a_storm_is_coalesced_per_client(self, mode: str) -> None:
        """200 changes in about 2 s: a handful of notifications, the last change announced.

        Before, each change reached each client (~195 notifications in 5 s per client).
        """
        app = App("stormy")

        @app.tool
        def echo(text: str) -> str:
            """The app's own tool."""
            return text

        async with listening_in_memory(app, mode) as (client, heard):
            await client.list_tools()
            began = anyio.current_time()
            for _ in range(200):
                app.server.notify_list_changed(ElementKind.TOOL)
                await anyio.sleep(0.01)
            last_change = anyio.current_time()

            async def announced() -> bool:  # the trailing announcement, after the last change
                return bool(heard) and heard[-1] >= last_change

            await until(announced)
            elapsed = heard[-1] - began
        assert 1 <= len(heard) <= elapsed / 1.0 + 2


@asynccontextmanager
async def listening_in_memory(app: App, mode: str) -> AsyncIterator[tuple[Client, list[float]]]:
    """An in-memory client of ``app`` and when it heard each ``tools/list_changed``."""
    heard: list[float] = []

    async def on_message(message: Any) -> None:  # 2025-11-25: the notifications
        if (
            mode == "legacy"
            and getattr(message, "method", None) == "notifications/tools/list_changed"
        ):
            heard.append(anyio.current_time())

    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(
            Client(app.server.lowlevel, mode=mode, message_handler=on_message)
        )
        if mode != "legacy":
            subscription = await stack.enter_async_context(client.listen(tools_list_changed=True))
            tasks = await stack.enter_async_context(anyio.create_task_group())

            async def follow() -> None:  # 2026-07-28: the listen stream's events
                async for _ in subscription:
                    heard.append(anyio.current_time())  # noqa: PERF401 -- as each one comes

            tasks.start_soon(follow)
            stack.callback(tasks.cancel_scope.cancel)
        yield client, heard
