"""SDK-style functions (``ctx: Context``, ``Resolve`` markers) served by an App, with a lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, Elicit, Resolve, Sample
from pydantic import BaseModel

from mcp_core import App, Tool
from mcp_core.handlers import Invoker, tool_from_function
from mcp_core.handlers.testing import RecordingGateway
from mcp_core.server import Lifespan
from tests.clients import Inbox, text

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@dataclass
class State:
    """What the lifespan yields."""

    greeting: str
    events: list[str] = field(default_factory=list)


class Person(BaseModel):
    """An elicitation form."""

    name: str


async def who(ctx: Context) -> Elicit[Person]:
    """A resolver asking the user (annotations resolve at module level)."""
    assert isinstance(ctx, Context)
    return Elicit("who are you?", Person)


def model() -> Sample:
    """A resolver asking the client's model."""
    return Sample(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text="?"))],
        max_tokens=5,
    )


def make_app() -> tuple[App, State]:
    """An app whose functions are written for the SDK's MCPServer, unchanged."""
    state = State(greeting="hello")

    @asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[State]:
        state.events.append(f"start {app.name}")
        yield state
        state.events.append("stop")

    app = App("sdk-style", lifespan=lifespan)

    @app.resource("app://config", mime_type="application/json")
    def config() -> str:
        return '{"mode": "demo"}'

    @app.tool
    async def process(x: int, ctx: Context[State, Any]) -> str:
        """Use every Context feature."""
        await ctx.info(f"processing {x}")
        await ctx.report_progress(50, 100, "half")
        contents = list(await ctx.read_resource("app://config"))
        content = contents[0].content
        assert isinstance(content, str)
        greeting = ctx.request_context.lifespan_context.greeting
        return f"{greeting} {x} {content} id={ctx.request_id}"

    @app.tool
    async def ask(ctx: Context) -> str:
        """Sample and elicit through the Context."""
        sampled = await ctx.session.create_message(
            [types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))],
            max_tokens=5,
        )
        person = await ctx.elicit("who?", Person)
        content = sampled.content
        text = content.text if isinstance(content, types.TextContent) else "?"
        return f"{text} / {person.action} {getattr(person, 'data', None)}"

    @app.tool
    async def resolved(
        greeting: str,
        person: Annotated[Person, Resolve(who)],
        sampled: Annotated[types.CreateMessageResult, Resolve(model)],
    ) -> str:
        """Resolve markers: an elicitation and a sample."""
        content = sampled.content
        text = content.text if isinstance(content, types.TextContent) else "?"
        return f"{greeting} {person.name} ({text})"

    @app.tool
    async def native(x: int, state: Annotated[State, Lifespan]) -> str:
        """An mcp-core handler reading the lifespan state."""
        return f"{state.greeting} {x}"

    return app, state


def client(app: App, mode: str, inbox: Inbox | None = None) -> Client:
    """The official client of ``app`` in memory, with a model and a user called Ann."""
    inbox = inbox if inbox is not None else Inbox(form={"name": "Ann"})
    return inbox.client(app.server.lowlevel, mode=mode, log_level="debug")


def input_schema(fn: Callable[..., Any]) -> Mapping[str, Any]:
    """The input schema published for ``fn`` as a tool."""
    definition = tool_from_function(fn).definition
    assert isinstance(definition, Tool)
    return definition.input_schema


class TestDerivation:
    """The Context and the markers are injected, never published."""

    def test_context_is_not_an_argument(self) -> None:
        """A ``ctx: Context`` parameter is left out of the input schema."""

        def f(x: int, ctx: Context) -> str:
            return str(x)

        schema = input_schema(f)
        assert set(schema["properties"]) == {"x"}
        assert list(schema["required"]) == ["x"]

    def test_resolve_and_lifespan_are_not_arguments(self) -> None:
        """Resolve(...) and Lifespan parameters are not published either."""

        def f(
            x: int,
            person: Annotated[Person, Resolve(lambda: Person(name="a"))],
            state: Annotated[State, Lifespan],
        ) -> str:
            return str(x)

        assert set(input_schema(f)["properties"]) == {"x"}

    async def test_context_over_a_recording_gateway(self) -> None:
        """Outside a server, the Context still logs and reports progress through the gateway."""

        async def f(ctx: Context) -> str:
            await ctx.info("hi")
            await ctx.report_progress(1, 2)
            return str(ctx.request_context.lifespan_context)

        gateway = RecordingGateway()
        result = await Invoker().call_tool(tool_from_function(f), {}, gateway)
        assert result["content"][0]["text"] == "{}"
        assert [call.data for call in gateway.logs] == ["hi"]
        assert len(gateway.progress_updates) == 1


class TestServedInLegacyMode:
    """Through the official client in the 2025-11-25 era."""

    async def test_context_features_and_lifespan(self) -> None:
        """Logging, progress, reading a resource, request id and the lifespan state."""
        app, state = make_app()
        inbox = Inbox(form={"name": "Ann"})
        reports: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reports.append(progress)

        async with client(app, "legacy", inbox) as connected:
            await connected.set_logging_level("debug")
            result = await connected.call_tool("process", {"x": 3}, progress_callback=on_progress)
            native = await connected.call_tool("native", {"x": 4})
        assert text(result).startswith('hello 3 {"mode": "demo"} id=')
        assert text(native) == "hello 4"
        assert inbox.logs == ["processing 3"]
        assert reports == [50]
        assert state.events == ["start sdk-style", "stop"]

    async def test_sampling_and_elicitation(self) -> None:
        """``ctx.session.create_message`` and ``ctx.elicit`` reach the client's callbacks."""
        app, _ = make_app()
        async with client(app, "legacy") as connected:
            result = await connected.call_tool("ask", {})
        assert text(result) == "forty-two / accept name='Ann'"

    async def test_resolve_markers(self) -> None:
        """An Elicit and a Sample resolver are answered before the tool body runs."""
        app, _ = make_app()
        async with client(app, "legacy") as connected:
            result = await connected.call_tool("resolved", {"greeting": "hi"})
        assert text(result) == "hi Ann (forty-two)"


class TestServedInModernMode:
    """Through the official client in the 2026-07-28 era."""

    async def test_context_features_and_lifespan(self) -> None:
        """Progress, reading a resource and the lifespan state need no server-to-client request."""
        app, _ = make_app()
        async with client(app, "2026-07-28") as connected:
            result = await connected.call_tool("process", {"x": 3})
            native = await connected.call_tool("native", {"x": 4})
        assert text(result).startswith('hello 3 {"mode": "demo"}')
        assert text(native) == "hello 4"

    async def test_sampling_and_elicitation(self) -> None:
        """``ctx.session.create_message`` and ``ctx.elicit`` reach the client's callbacks."""
        app, _ = make_app()
        async with client(app, "2026-07-28") as connected:
            result = await connected.call_tool("ask", {})
        assert text(result) == "forty-two / accept name='Ann'"

    async def test_resolve_markers(self) -> None:
        """An Elicit and a Sample resolver are answered before the tool body runs."""
        app, _ = make_app()
        async with client(app, "2026-07-28") as connected:
            result = await connected.call_tool("resolved", {"greeting": "hi"})
        assert text(result) == "hi Ann (forty-two)"
