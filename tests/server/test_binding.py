"""McpServer over the official SDK, driven in memory by the official ``mcp`` client."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import methods
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from mcp_core.elements import (
    Annotations,
    Definition,
    Element,
    ElementCollection,
    ElementKind,
    HandlerRef,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
)
from mcp_core.handlers import (
    ClientGateway,
    prompt_from_function,
    resource_from_function,
    resource_template_from_function,
    tool_from_function,
)
from mcp_core.registry import Registry
from mcp_core.server import McpServer
from mcp_core.sources import StaticSource
from mcp_core.visibility import SessionInfo, predicate
from tests.clients import Inbox, pages


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def chatty(gateway: ClientGateway) -> str:
    """Log at two levels and report progress."""
    await gateway.log("info", "an info")
    await gateway.log("warning", "a warning")
    await gateway.progress(1, 2, "half")
    await gateway.progress(2, 2, "done")
    return "ok"


async def ask(question: str, gateway: ClientGateway) -> str:
    """Sample the client's model, then elicit a confirmation."""
    answer = await gateway.sample(
        [{"role": "user", "content": {"type": "text", "text": question}}], max_tokens=10
    )
    confirmed = await gateway.elicit(
        "ok?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    )
    return f"{answer['content']['text']} / {confirmed['action']} {confirmed.get('content')}"


def crash() -> str:
    """Raise something internal."""
    raise RuntimeError("password=hunter2")


def note() -> str:
    """A fixed note."""
    return "a note"


def item(id: int) -> str:  # noqa: A002 -- the template variable
    """An item."""
    return f"item {id}"


def greet(who: str) -> str:
    """Greet someone."""
    return f"hello {who}"


def make_registry(*, tools: int = 0) -> Registry:
    """A registry with a few real elements, plus ``tools`` numbered filler tools."""
    elements = [
        tool_from_function(add),
        tool_from_function(chatty),
        tool_from_function(ask),
        tool_from_function(crash),
        tool_from_function(add, name="admin_tool", tags=("scope:admin",)),
        resource_from_function(note, "test://note"),
        resource_template_from_function(item, "test://items/{id}"),
        prompt_from_function(greet),
    ]
    elements.extend(tool_from_function(add, name=f"t{n:04d}") for n in range(tools))
    return Registry([(StaticSource(ElementCollection(elements)), 0)])


def user() -> Inbox:
    """The client's side: a model answering with the prompt upper-cased, a user who confirms."""
    return Inbox(reply=str.upper, form={"ok": True})


def client(server: McpServer, inbox: Inbox | None = None, **options: Any) -> Client:
    """An official in-memory client of ``server`` (handshake-era unless a mode is given)."""
    options.setdefault("mode", "legacy")
    return (inbox or user()).client(server.lowlevel, **options)


class TestCapabilities:
    """Capabilities follow the registry's kinds and whether changes can be announced."""

    async def test_from_kinds(self) -> None:
        """A tools-only registry advertises tools (with listChanged) and logging only."""
        registry = Registry([(StaticSource(ElementCollection([tool_from_function(add)])), 0)])
        async with client(McpServer(registry)) as c:
            caps = c.server_capabilities
        assert caps.tools is not None
        assert caps.tools.list_changed is True
        assert (caps.resources, caps.prompts, caps.completions) == (None, None, None)
        assert caps.logging is not None
        assert not registry.loaded  # initialize loads nothing

    async def test_no_list_changed_without_events(self) -> None:
        """A registry that cannot announce changes gets listChanged false."""

        class Quiet:
            def __init__(self, inner: Registry) -> None:
                self._inner = inner

            def __getattr__(self, name: str) -> Any:
                if name == "subscribe":
                    raise AttributeError(name)
                return getattr(self._inner, name)

        async with client(McpServer(Quiet(make_registry()))) as c:
            caps = c.server_capabilities
        assert caps.tools is not None
        assert caps.tools.list_changed is False
        assert caps.resources is not None
        assert caps.resources.subscribe is True
        assert caps.completions is not None


@pytest.mark.parametrize("mode", ["legacy", "auto"])
class TestRequests:
    """Every request, on the handshake era and on 2026-07-28."""

    async def test_list_pages(self, mode: str) -> None:
        """Walking every page lists every tool once."""
        server = McpServer(make_registry(tools=25), page_size=4)
        async with client(server, mode=mode) as c:
            tools = await pages(
                lambda cursor: c.list_tools(cursor=cursor, cache_mode="bypass"), "tools"
            )
            resources = await pages(lambda cursor: c.list_resources(cursor=cursor), "resources")
            templates = await pages(
                lambda cursor: c.list_resource_templates(cursor=cursor), "resource_templates"
            )
            prompts = await pages(lambda cursor: c.list_prompts(cursor=cursor), "prompts")
        names = [t.name for t in tools]
        assert len(names) == 30 == len(set(names))
        assert names == sorted(names)
        assert [r.uri for r in resources] == ["test://note"]
        assert [t.uri_template for t in templates] == ["test://items/{id}"]
        assert [p.name for p in prompts] == ["greet"]

    async def test_call_read_get_complete(self, mode: str) -> None:
        """call, read (static and template), get and complete answer."""
        async with client(McpServer(make_registry()), mode=mode) as c:
            called = await c.call_tool("add", {"a": 2, "b": 3})
            static = await c.read_resource("test://note")
            templated = await c.read_resource("test://items/42")
            prompt = await c.get_prompt("greet", {"who": "ann"})
            ref = types.PromptReference(type="ref/prompt", name="greet")
            completed = await c.complete(ref, {"name": "who", "value": ""})
        assert called.structured_content == {"result": 5}
        assert static.contents[0].text == "a note"  # type: ignore[union-attr]  # text contents
        assert templated.contents[0].text == "item 42"  # type: ignore[union-attr]  # same
        assert prompt.messages[0].content.text == "hello ann"  # type: ignore[union-attr]  # same
        assert completed.completion.values == []

    async def test_errors(self, mode: str) -> None:
        """Unknown names are -32602, unknown URIs -32002 (2026-07-28: -32602), failures opaque.

        Arguments failing the input schema are a tool execution error (SEP-1303), not -32602.
        """
        async with client(McpServer(make_registry()), mode=mode) as c:
            with pytest.raises(MCPError) as unknown_tool:
                await c.call_tool("nope", {})
            with pytest.raises(MCPError) as unknown_prompt:
                await c.get_prompt("nope", {})
            with pytest.raises(MCPError) as unknown_resource:
                await c.read_resource("test://nope")
            bad_arguments = await c.call_tool("add", {"a": "x"})
            with pytest.raises(MCPError) as bad_cursor:
                await c.list_tools(cursor="forged", cache_mode="bypass")
            failed = await c.call_tool("crash", {})
        assert (unknown_tool.value.code, unknown_tool.value.message) == (
            -32602,
            "Unknown tool: nope",
        )
        assert (unknown_prompt.value.code, unknown_prompt.value.message) == (
            -32602,
            "Unknown prompt: nope",
        )
        # SEP-2164: 2026-07-28 retired -32002; a missing resource is invalid params there.
        assert (unknown_resource.value.code, unknown_resource.value.data) == (
            -32002 if mode == "legacy" else -32602,
            {"uri": "test://nope"},
        )
        assert bad_arguments.is_error is True
        assert bad_arguments.content[0].text == (  # type: ignore[union-attr]  # a text block
            "tool 'add': invalid arguments: /: 'b' is a required property; "
            "/a: 'x' is not of type 'integer'"
        )
        assert bad_cursor.value.code == -32602
        assert failed.is_error is True
        assert "hunter2" not in str(failed.content)


@pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"
)  # handshake-era APIs
class TestSessionFeatures:
    """Logging, progress, sampling, elicitation, subscriptions and notifications (handshake era)."""

    async def test_logging_threshold_and_progress(self) -> None:
        """The session's setLevel filters the tool's logs; progress reaches the caller's callback."""
        inbox = user()
        reports: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reports.append((progress, total, message))

        async with client(McpServer(make_registry()), inbox) as c:
            await c.set_logging_level("warning")
            await c.call_tool("chatty", {}, progress_callback=on_progress)
        assert [(log.level, log.data) for log in inbox.logged] == [("warning", "a warning")]
        assert reports == [(1, 2, "half"), (2, 2, "done")]

    async def test_sampling_and_elicitation(self) -> None:
        """A tool's sample and elicit reach the client's callbacks during the call."""
        async with client(McpServer(make_registry())) as c:
            result = await c.call_tool("ask", {"question": "hi"})
        assert result.content[0].text == "HI / accept {'ok': True}"  # type: ignore[union-attr]  # text

    async def test_subscribe_and_updates(self) -> None:
        """Only subscribed sessions hear about an updated resource; unknown URIs cannot be subscribed."""
        server = McpServer(make_registry())
        inbox = user()
        async with client(server, inbox) as c:
            await c.subscribe_resource("test://note")
            await server.notify_resource_updated("test://note")
            await server.notify_resource_updated("test://items/1")
            updated = await inbox.wait_for("notifications/resources/updated")
            await c.unsubscribe_resource("test://note")
            await server.notify_resource_updated("test://note")
            with pytest.raises(MCPError) as unknown:
                await c.subscribe_resource("test://nope")
        assert updated.params.uri == "test://note"
        assert inbox.methods == []  # nothing else: no second update, none for an unsubscribed URI
        assert unknown.value.code == -32002

    async def test_list_changed_after_runtime_registration(self) -> None:
        """Registering a tool at runtime sends tools/list_changed, and the list shows it."""
        registry = make_registry()
        server = McpServer(registry)
        inbox = user()
        async with client(server, inbox) as c:
            await c.list_tools()
            await registry.register(tool_from_function(greet, name="late"))
            await inbox.wait_for("notifications/tools/list_changed")
            names = [t.name for t in (await c.list_tools(cache_mode="bypass")).tools]
        assert inbox.methods == []  # that one notification alone
        assert "late" in names

    async def test_list_changed_on_2026_listen_stream(self) -> None:
        """A 2026-07-28 client hears registry changes on its subscriptions/listen stream."""
        registry = make_registry()
        async with (
            client(McpServer(registry), mode="auto") as c,
            c.listen(tools_list_changed=True) as events,
        ):
            await c.list_tools()  # changes are announced once a catalogue has been loaded
            await registry.register(tool_from_function(greet, name="late"))
            with anyio.fail_after(5):
                event = await anext(aiter(events))
        assert type(event).__name__ == "ToolsListChanged"


def scoped_server(registry: Registry) -> McpServer:
    """A server whose sessions get scopes from their client's name, hiding admin tools from others."""

    def hook(info: SessionInfo) -> SessionInfo:
        scopes = {"admin"} if info.attributes.get("client_name") == "alice" else set()
        return SessionInfo(
            session_id=info.session_id, scopes=frozenset(scopes), attributes=info.attributes
        )

    rule = predicate(
        lambda ref, session: not ref.key.startswith("admin") or "admin" in session.scopes
    )
    return McpServer(registry, visibility=rule, session_hook=hook)


class TestVisibility:
    """Two sessions with different scopes see and reach different elements."""

    async def test_two_sessions(self) -> None:
        """Alice sees and calls the admin tool; Bob neither sees it nor can tell it from a missing one."""
        server = scoped_server(make_registry())
        alice_info = types.Implementation(name="alice", version="1")
        bob_info = types.Implementation(name="bob", version="1")
        async with (
            client(server, client_info=alice_info) as alice,
            client(server, client_info=bob_info) as bob,
        ):
            alice_tools = {t.name for t in (await alice.list_tools()).tools}
            bob_tools = {t.name for t in (await bob.list_tools()).tools}
            allowed = await alice.call_tool("admin_tool", {"a": 1, "b": 1})
            with pytest.raises(MCPError) as hidden:
                await bob.call_tool("admin_tool", {"a": 1, "b": 1})
            with pytest.raises(MCPError) as missing:
                await bob.call_tool("admin_toolx", {"a": 1, "b": 1})
        assert alice_tools - bob_tools == {"admin_tool"}
        assert allowed.structured_content == {"result": 2}
        assert hidden.value.code == missing.value.code == -32602
        assert hidden.value.message + "x" == missing.value.message


class TestPartlyBroken:
    """A registry with a failing source and an invalid element still answers everything."""

    async def test_serves_the_rest(self) -> None:
        """A raising source costs only its own elements."""

        class Down:
            def kinds(self) -> ElementKind:
                return ElementKind.TOOL | ElementKind.PROMPT

            async def provide(self) -> ElementCollection:
                raise RuntimeError("database down")

        broken = Element(definition=Prompt(name="bad"), handler=object())
        registry = Registry(
            [(Down(), 0), (StaticSource(ElementCollection([tool_from_function(add), broken])), 0)],
            validator=_reject_objects,
        )
        async with client(McpServer(registry)) as c:
            tools = [t.name for t in (await c.list_tools()).tools]
            prompts = (await c.list_prompts()).prompts
            resources = (await c.list_resources()).resources
            result = await c.call_tool("add", {"a": 1, "b": 2})
        assert tools == ["add"]
        assert (prompts, resources) == ([], [])
        assert result.structured_content == {"result": 3}
        assert {d.kind for d in registry.diagnostics()} == {"failed", "skipped"}


def _reject_objects(element: Element) -> None:
    if type(element.handler) is object:
        raise ValueError("a bare object cannot handle anything")


class TestListFastPath:
    """Lists skip the SDK's result models; what they send is exactly what the SDK would send."""

    @pytest.mark.parametrize("version", [LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION])
    async def test_pages_are_fixed_points_of_the_sdk_rendering(self, version: str) -> None:
        """Validating and re-dumping a page with the SDK's models changes nothing."""
        rich: list[Definition] = [
            Tool(
                name="rich",
                title="Rich",
                description="Everything set.",
                input_schema={
                    "type": "object",
                    "properties": {"x": {"type": "integer"}},
                    "required": ["x"],
                },
                output_schema={"type": "object", "properties": {"y": {"type": "string"}}},
                annotations=ToolAnnotations(title="R", read_only_hint=True),
                icons=[
                    Icon(src="https://example.org/i.png", mime_type="image/png", sizes=["48x48"])
                ],
                meta={"k": "v"},
            ),
            Resource(
                uri="test://r",
                name="r",
                mime_type="text/plain",
                size=3,
                annotations=Annotations(priority=0.5),
            ),
            Resource(
                uri="test://s",
                name="s",
                annotations=Annotations(audience=["user"], last_modified="2025-01-12"),
            ),
            ResourceTemplate(uri_template="test://t/{id}", name="t", description="T."),
            Prompt(name="p", arguments=[PromptArgument(name="a", description="A.", required=True)]),
        ]
        collection = ElementCollection(
            Element(definition=d, handler=HandlerRef("m:f")) for d in rich
        )
        handlers = McpServer(Registry([(StaticSource(collection), 0)]), page_size=1).handlers
        session = SessionInfo()
        modern = version == LATEST_MODERN_VERSION
        envelope = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"} if modern else {}
        for method, page in (
            ("tools/list", await handlers.list_tools(None, session)),
            ("resources/list", await handlers.list_resources(None, session)),
            ("resources/templates/list", await handlers.list_resource_templates(None, session)),
            ("prompts/list", await handlers.list_prompts(None, session)),
        ):
            result = {**page, **envelope}
            assert methods.serialize_server_result(method, version, result) == result
