"""RemoteSource against servers in this process (and a closed port): listing, relays, failures."""

from __future__ import annotations

import json
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server import Server
from mcp.shared.exceptions import MCPError

from mcp_core import App, ClientGateway, ToolError
from mcp_core.bridges import RemoteSource
from mcp_core.elements import ElementKind, ElementRef, Tool
from mcp_core.errors import SourceUnavailableError
from mcp_core.handlers import Invoker, tool_from_function
from mcp_core.handlers.testing import ElicitUrlCall, RecordingGateway
from mcp_core.visibility import SessionInfo
from tests.e2e.conftest import free_port

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def backend(page_size: int = 2) -> App:
    """An mcp-core app to reach as a remote: its lists take pages."""
    app = App("backend", page_size=page_size)

    @app.tool
    async def work(steps: int, gateway: ClientGateway) -> str:
        """Log and report progress, then answer."""
        for step in range(1, steps + 1):
            await gateway.log("info", f"step {step}")
            await gateway.progress(step, steps)
        return f"{steps} steps"

    @app.tool
    async def ask(gateway: ClientGateway) -> str:
        """Ask the client's model and its user."""
        sampled = await gateway.sample(
            [{"role": "user", "content": {"type": "text", "text": "?"}}], max_tokens=5
        )
        answer = await gateway.elicit("name?", {"type": "object", "properties": {}})
        return f"{sampled['content']['text']} {answer['action']}"

    @app.tool
    def fail() -> str:
        """Fail for the model."""
        raise ToolError("nope")

    for index in range(5):
        app.add(Tool(name=f"extra_{index}", input_schema={"type": "object"}), lambda: "extra")

    @app.resource("mem://a", mime_type="text/plain")
    def a() -> str:
        return "A"

    @app.prompt
    def hello(name: str) -> str:
        """Say hello."""
        return f"hello {name}"

    return app


def element(collection: Any, kind: ElementKind, key: str) -> Any:
    """The element at ``kind``/``key``, which must exist."""
    found = collection.get(ElementRef(kind, key))
    assert found is not None, key
    return found


class TestListing:
    """Every page walked; hostile remotes cost only what they break."""

    async def test_every_page(self) -> None:
        """Tools across pages, the resource and the prompt; handlers forward."""
        source = RemoteSource(backend().server.lowlevel, mode="legacy")
        collection = await source.provide()
        names = {e.ref.key for e in collection if e.kind is ElementKind.TOOL}
        assert names == {"work", "ask", "fail", *(f"extra_{i}" for i in range(5))}
        assert {e.ref.key for e in collection if e.kind is not ElementKind.TOOL} == {
            "mem://a",
            "hello",
        }
        assert source.kinds() == ElementKind.ALL  # tools, resources (and templates), prompts

    async def test_hostile_remote(self) -> None:
        """An invalid name is skipped, a duplicate too, and an endless list stops at max_pages."""

        async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
            tools = [
                types.Tool(name="ok", input_schema={"type": "object"}),
                types.Tool(name="bad name!", input_schema={"type": "object"}),
                types.Tool(name="ok", input_schema={"type": "object"}),
            ]
            return types.ListToolsResult(tools=tools, next_cursor="again")

        hostile = Server("hostile", on_list_tools=list_tools)
        source = RemoteSource(hostile, mode="legacy", max_pages=3)
        collection = await source.provide()
        messages = [d.message for d in source.diagnostics()]
        assert [e.ref.key for e in collection] == ["ok"]
        assert any("'bad name!'" in m for m in messages)
        assert any("listed twice" in m for m in messages)
        assert any("did not end after 3 pages" in m for m in messages)

    async def test_unreachable(self) -> None:
        """A closed port is unavailable; the message names the remote, not its address."""
        port = free_port()  # free now, so nothing listens there
        source = RemoteSource.http(f"http://127.0.0.1:{port}/mcp", name="weather", timeout=5)
        with pytest.raises(SourceUnavailableError) as down:
            await source.provide()
        assert str(down.value) == (
            "the remote MCP server 'weather' is unavailable (connection refused); retry later"
        )
        assert str(port) not in str(down.value)

    def test_bad_targets(self) -> None:
        """Only URLs, stdio parameters and SDK servers."""
        with pytest.raises(ValueError, match=r"RemoteSource\.stdio"):
            RemoteSource("weather.example")
        with pytest.raises(TypeError, match="got int"):
            RemoteSource(3)  # type: ignore[arg-type]  # what is being refused
        with pytest.raises(ValueError, match="positive"):
            RemoteSource("http://x/mcp", timeout=0)


class TestForwarding:
    """Calls forwarded; logs, progress, sampling and elicitation relayed to the gateway."""

    @pytest.mark.parametrize("mode", ["legacy", "auto"])
    async def test_relays(self, mode: str) -> None:
        """The remote's logs, progress, sampling and elicitation reach the calling gateway."""
        source = RemoteSource(backend().server.lowlevel, mode=mode)  # type: ignore[arg-type]  # both literals
        collection = await source.provide()
        gateway = RecordingGateway(
            sample_result={
                "role": "assistant",
                "content": {"type": "text", "text": "42"},
                "model": "m",
            },
            elicit_result={"action": "accept", "content": {}},
        )
        invoker = Invoker()
        worked = await invoker.call_tool(
            element(collection, ElementKind.TOOL, "work"), {"steps": 2}, gateway
        )
        failed = await invoker.call_tool(element(collection, ElementKind.TOOL, "fail"), {}, gateway)
        read = await invoker.read_resource(
            element(collection, ElementKind.RESOURCE, "mem://a"), "mem://a", {}, gateway
        )
        prompt = await invoker.get_prompt(
            element(collection, ElementKind.PROMPT, "hello"), {"name": "Bo"}, gateway
        )
        assert worked == {"content": [{"type": "text", "text": "2 steps"}]}
        assert [u.progress for u in gateway.progress_updates] == [1, 2]
        assert [log.data for log in gateway.logs] == ["step 1", "step 2"]
        assert failed == {"content": [{"type": "text", "text": "nope"}], "isError": True}
        assert read == {"contents": [{"uri": "mem://a", "mimeType": "text/plain", "text": "A"}]}
        assert prompt["messages"][0]["content"]["text"] == "hello Bo"
        if mode == "legacy":  # only a handshake-era remote sends its questions as requests
            asked = await invoker.call_tool(
                element(collection, ElementKind.TOOL, "ask"), {}, gateway
            )
            assert asked == {"content": [{"type": "text", "text": "42 accept"}]}

    async def test_roots_and_url_elicitation_relayed_and_a_failure_told(self) -> None:
        """Roots and URL elicitation reach the remote; a client that fails is an error it is told."""
        app = App("asker")

        @app.tool
        async def probe(gateway: ClientGateway) -> str:
            """List the roots, then ask for a URL to be opened and the model: report each."""
            outcomes = [repr(await gateway.list_roots())]
            for ask in (
                gateway.elicit_url("Sign in", "https://example.com/login"),
                gateway.sample(
                    [{"role": "user", "content": {"type": "text", "text": "?"}}], max_tokens=5
                ),
            ):
                try:
                    outcomes.append(repr(await ask))
                except MCPError as exc:
                    outcomes.append(str(exc))
            return " | ".join(outcomes)

        def down(call: object) -> Any:
            raise RuntimeError("the model at 10.0.0.7 is down")

        source = RemoteSource(app.server.lowlevel, mode="legacy")
        collection = await source.provide()
        gateway = RecordingGateway(
            roots=[{"uri": "file:///project", "name": "p"}],
            sample_result=down,
            elicit_result={"action": "accept"},
        )
        result = await Invoker().call_tool(
            element(collection, ElementKind.TOOL, "probe"), {}, gateway
        )
        assert result == {
            "content": [
                {
                    "type": "text",
                    "text": "[{'uri': 'file:///project', 'name': 'p'}]"
                    " | {'action': 'accept'}"
                    " | the client could not answer sampling/createMessage",
                }
            ]
        }  # the client's own failure (and its address) is not the remote's to see
        opened = [call.url for call in gateway.calls if isinstance(call, ElicitUrlCall)]
        assert opened == ["https://example.com/login"]

    async def test_running_follows_changes(self) -> None:
        """While running, a tool registered on the remote is announced and then provided."""
        remote = backend()
        source = RemoteSource(remote.server.lowlevel, mode="legacy", health_interval=0.1)
        changes: list[ElementKind] = []
        twice = anyio.Event()

        def changed(kinds: ElementKind) -> None:
            changes.append(kinds)
            if len(changes) == 2:  # connected, then the new tool
                twice.set()

        source.subscribe(changed)
        async with source.running():
            first = await source.provide()
            await remote.registry.register(tool_from_function(lambda: "new", name="added"))
            with anyio.fail_after(10):
                await twice.wait()
            second = await source.provide()
            assert source.available is True
        assert "added" not in {e.ref.key for e in first}
        assert "added" in {e.ref.key for e in second}

    async def test_a_failed_request_is_checked_not_believed(self) -> None:
        """A forwarded request that failed marks the remote down until the connection says otherwise."""
        source = RemoteSource(backend().server.lowlevel, mode="legacy", health_interval=0.05)
        announced: list[ElementKind] = []
        back = anyio.Event()

        def changed(kinds: ElementKind) -> None:
            announced.append(kinds)
            if len(announced) == 3:  # connected, down, back
                back.set()

        source.subscribe(changed)
        async with source.running():
            await source.provide()
            source._went_down("a request timed out")
            with pytest.raises(SourceUnavailableError, match="a request timed out"):
                await source.provide()
            with anyio.fail_after(10):
                await back.wait()
            collection = await source.provide()
        assert "work" in {e.ref.key for e in collection}


def quiet_remote(names: list[str], **handlers: Any) -> Server[Any]:
    """An SDK low-level server listing tools ``names`` (read at each listing), announcing nothing."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        tools = [types.Tool(name=name, input_schema={"type": "object"}) for name in names]
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

    return Server("quiet", on_list_tools=list_tools, on_call_tool=call_tool, **handlers)


async def followed(source: RemoteSource, names: list[str], added: str) -> list[str]:
    """Run ``source``, add the tool ``added`` to the remote, and wait until it is provided."""
    changed = anyio.Event()
    source.subscribe(lambda kinds: changed.set())
    async with source.running():
        assert [e.ref.key for e in await source.provide()] == names
        names.append(added)
        with anyio.fail_after(10):
            while added not in {e.ref.key for e in await source.provide()}:
                await changed.wait()
                changed = anyio.Event()
        assert source.available is True
        return [e.ref.key for e in await source.provide()]


class TestNegotiation:
    """Only what the remote offers is used; what it lacks costs that feature, never the connection."""

    @pytest.mark.parametrize("mode", ["auto", "legacy"])
    async def test_a_remote_announcing_nothing_is_polled(self, mode: str) -> None:
        """No listChanged, no subscriptions/listen: connected, and its changes found by polling."""
        names = ["first"]
        source = RemoteSource(
            quiet_remote(names),
            mode=mode,  # type: ignore[arg-type]  # both literals
            health_interval=0.05,
            poll_interval=0.1,
        )
        assert await followed(source, names, "second") == ["first", "second"]
        assert source.diagnostics() == ()

    async def test_a_refused_listen_costs_only_listening(self) -> None:
        """A remote declaring listChanged but refusing subscriptions/listen is polled, with a note."""

        async def refuse(ctx: Any, params: Any) -> Any:
            raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found")

        names = ["first"]
        remote = quiet_remote(names, on_subscriptions_listen=refuse)
        source = RemoteSource(remote, health_interval=0.05, poll_interval=0.1)
        assert await followed(source, names, "second") == ["first", "second"]
        (note,) = source.diagnostics()
        assert note.kind == "skipped"
        assert note.source == "RemoteSource('quiet')"
        assert "refused subscriptions/listen (error -32601: Method not found)" in note.message
        assert "listing it again every 0.1 s" in note.message

    async def test_a_refused_list_costs_only_that_list(self) -> None:
        """resources/templates/list refused (as SDK 1.x servers do): resources still served."""

        async def list_resources(ctx: Any, params: Any) -> Any:
            resource = types.Resource(uri="memo://insights", name="Business Insights Memo")
            return types.ListResourcesResult(resources=[resource])

        remote = quiet_remote(["first"], on_list_resources=list_resources)
        source = RemoteSource(remote, mode="legacy")
        collection = await source.provide()
        assert {e.ref.key for e in collection} == {"first", "memo://insights"}
        (note,) = source.diagnostics()
        assert "refused resources/templates/list (error -32601" in note.message
        assert "serving none" in note.message

    async def test_poll_interval_is_checked(self) -> None:
        """A poll interval is a positive number of seconds, or None for never."""
        RemoteSource("http://x/mcp", poll_interval=None)
        with pytest.raises(ValueError, match="poll_interval must be a positive number"):
            RemoteSource("http://x/mcp", poll_interval=0)

    @pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
    @pytest.mark.parametrize("running", [False, True])
    async def test_a_stdio_remote_asks_in_either_era(self, era: str, *, running: bool) -> None:
        """An SDK server's session requests reach a client of either era (default mode)."""
        script = Path(__file__).with_name("sdk_asker.py")
        source = RemoteSource.stdio(sys.executable, [str(script)])
        gateway = RecordingGateway(
            session=SessionInfo(attributes={"protocol_version": era}),
            sample_result={
                "role": "assistant",
                "content": {"type": "text", "text": "42"},
                "model": "m",
            },
            elicit_result={"action": "accept", "content": {"name": "Ann"}},
        )
        async with AsyncExitStack() as stack:
            if running:
                await stack.enter_async_context(source.running())
            collection = await source.provide()
            answers = [
                await Invoker().call_tool(element(collection, ElementKind.TOOL, name), {}, gateway)
                for name in ("sample", "elicit", "elicit_url")
            ]
        assert [answer["content"][0]["text"] for answer in answers] == [
            "42",
            "accept Ann",
            "accept",
        ]
        opened = [call.url for call in gateway.calls if isinstance(call, ElicitUrlCall)]
        assert opened == ["https://example.com/sign-in"]

    async def test_url_elicitation_required_passes_through(self) -> None:
        """A remote's -32042 reaches the client as that error, with its URL (never a tool error)."""
        script = Path(__file__).with_name("sdk_asker.py")
        source = RemoteSource.stdio(sys.executable, [str(script)])
        collection = await source.provide()
        with pytest.raises(MCPError) as raised:
            await Invoker().call_tool(
                element(collection, ElementKind.TOOL, "sign_in"), {}, RecordingGateway()
            )
        assert raised.value.error.code == -32042
        assert "https://example.org/login" in json.dumps(raised.value.error.data)


@pytest.mark.parametrize(
    ("command", "args", "name"),
    [
        ("python", ["notes.py", "--port", "3"], "notes"),
        ("python3", ["-m", "mcp_server_time"], "mcp_server_time"),
        ("/venv/bin/mcp-server-time", ["--local-timezone", "UTC"], "mcp-server-time"),
        ("npx", ["-y", "@modelcontextprotocol/server-memory"], "server-memory"),
        ("uvx", ["mcp-server-git"], "mcp-server-git"),
    ],
)
def test_a_stdio_remote_is_named_after_what_it_runs(
    command: str, args: list[str], name: str
) -> None:
    """Without a name, a stdio remote is named after its command, or the script it launches."""
    assert RemoteSource.stdio(command, args).name == name
