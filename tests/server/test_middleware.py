"""Middleware on App and McpServer, driven in memory by the official client in both eras."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_core.app import App
from mcp_core.errors import RequestRefusedError
from mcp_core.handlers import tool_from_function
from mcp_core.server import AuditLog, AuditRecord, CallNext, Middleware, RateLimit, Request
from mcp_core.server._middleware import chain
from mcp_core.visibility import SessionInfo, predicate
from tests.clients import ok_text, text

MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def make_app(*middleware: Middleware) -> App:
    """An app of each element kind (one tool hidden from everyone), wrapped in ``middleware``."""
    app = App("shaped", middleware=middleware)

    @app.tool
    def echo(text: str) -> str:
        """Echo ``text``."""
        return text

    @app.tool
    def hidden() -> str:
        """Hidden from every session."""
        return "hidden"

    @app.resource("test://config")
    def config() -> str:
        """A fixed resource."""
        return "config"

    @app.resource_template("test://items/{number}")
    def item(number: str) -> str:
        """One item."""
        return f"item {number}"

    @app.prompt
    def greet(name: str) -> str:
        """Greet ``name``."""
        return f"Hello {name}"

    @app.completion(greet, "name")
    def names(value: str) -> list[str]:
        return [n for n in ("ann", "bob") if n.startswith(value)]

    app.visibility = predicate(lambda ref, _session: ref.key != "hidden")
    return app


class Recorder:
    """Keeps every request it passes on."""

    def __init__(self) -> None:
        self.seen: list[Request] = []

    async def __call__(self, request: Request, call_next: CallNext) -> dict[str, Any]:
        self.seen.append(request)
        return await call_next(request)


@MODES
async def test_every_request_kind_passes_with_what_it_names(mode: str) -> None:
    """Lists, call, read, get, complete and subscribe each reach the middleware, with the era."""
    recorder = Recorder()
    app = make_app(recorder)
    async with Client(app.server.lowlevel, mode=mode) as client:
        tools = await client.list_tools()
        await client.list_resources()
        await client.list_resource_templates()
        await client.list_prompts()
        await client.call_tool("echo", {"text": "hi"})
        await client.read_resource("test://items/7")
        await client.get_prompt("greet", {"name": "ann"})
        await client.complete(
            types.PromptReference(type="ref/prompt", name="greet"), {"name": "name", "value": "a"}
        )
        if mode == "legacy":
            await client.subscribe_resource("test://config")
        era = client.protocol_version
    assert [t.name for t in tools.tools] == ["echo"]  # hidden stays hidden
    seen = {r.method: r for r in recorder.seen}
    expected = {
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "tools/call",
        "resources/read",
        "prompts/get",
        "completion/complete",
    } | ({"resources/subscribe"} if mode == "legacy" else set())
    assert set(seen) == expected
    assert {r.era for r in recorder.seen} == {era}
    assert seen["tools/call"].target == "echo"
    assert seen["tools/call"].arguments == {"text": "hi"}
    assert seen["tools/call"].element is not None
    assert seen["tools/call"].element.ref.key == "echo"
    assert seen["resources/read"].arguments == {"number": "7"}
    assert seen["prompts/get"].arguments == {"name": "ann"}
    assert seen["completion/complete"].arguments == {"name": "a"}
    assert seen["tools/list"].element is None
    assert seen["tools/list"].is_list


async def test_hidden_tool_reaches_middleware_as_a_missing_one() -> None:
    """A hidden tool comes with no element and answers exactly like an unknown one."""
    recorder = Recorder()
    async with Client(make_app(recorder).server.lowlevel) as client:
        errors = []
        for name in ("hidden", "nowhere"):
            with pytest.raises(MCPError) as raised:
                await client.call_tool(name, {})
            errors.append(raised.value.error.message)
    assert errors == ["Unknown tool: hidden", "Unknown tool: nowhere"]
    assert [(r.target, r.element) for r in recorder.seen] == [("hidden", None), ("nowhere", None)]


@MODES
async def test_short_circuit_refuse_and_rewrite(mode: str) -> None:
    """A middleware answers in the tool's place, refuses, or changes the arguments."""

    async def shape(request: Request, call_next: CallNext) -> dict[str, Any]:
        if request.target == "echo" and request.arguments == {"text": "cached"}:
            return {"content": [{"type": "text", "text": "from the cache"}], "isError": False}
        if request.target == "echo" and request.arguments == {"text": "no"}:
            raise RequestRefusedError("not this", code=-32001, data={"why": "policy"})
        if request.target == "echo":
            return await call_next(request.with_arguments({"text": "shaped"}))
        return await call_next(request)

    async with Client(make_app(shape).server.lowlevel, mode=mode) as client:
        cached = await client.call_tool("echo", {"text": "cached"})
        shaped = await client.call_tool("echo", {"text": "anything"})
        with pytest.raises(MCPError) as refused:
            await client.call_tool("echo", {"text": "no"})
    assert ok_text(cached) == "from the cache"
    assert ok_text(shaped) == "shaped"
    assert refused.value.error.code == -32001
    assert refused.value.error.message == "not this"
    assert refused.value.error.data == {"why": "policy"}


async def test_order_first_is_outermost_and_add_middleware_goes_inside() -> None:
    """``middleware=[a, b]`` runs a around b; ``app.middleware`` adds inside them."""
    order: list[str] = []

    def named(label: str) -> Middleware:
        async def step(request: Request, call_next: CallNext) -> dict[str, Any]:
            if request.method != "tools/call":  # the client lists tools too, for their schemas
                return await call_next(request)
            order.append(f"{label}>")
            result = await call_next(request)
            order.append(f"<{label}")
            return result

        return step

    app = make_app(named("a"), named("b"))
    app.middleware(named("c"))
    async with Client(app.server.lowlevel) as client:
        await client.call_tool("echo", {"text": "x"})
    app.server.add_middleware(named("d"))
    async with Client(app.server.lowlevel) as client:
        order.clear()
        await client.call_tool("echo", {"text": "x"})
    assert order == ["a>", "b>", "c>", "d>", "<d", "<c", "<b", "<a"]


async def test_list_middleware_sees_only_what_the_session_may_see() -> None:
    """A list's result reaches middleware already filtered; it may narrow it further."""
    pages: list[list[str]] = []

    async def narrow(request: Request, call_next: CallNext) -> dict[str, Any]:
        result = await call_next(request)
        if request.method == "tools/list":
            pages.append([tool["name"] for tool in result["tools"]])
            result["tools"] = [t for t in result["tools"] if t["name"] != "echo"]
        return result

    app = make_app(narrow)

    @app.tool
    def other() -> str:
        """Another tool."""
        return "other"

    async with Client(app.server.lowlevel) as client:
        listed = await client.list_tools()
    assert pages == [["echo", "other"]]
    assert [t.name for t in listed.tools] == ["other"]


def test_bad_middleware_is_refused_by_name() -> None:
    """A middleware that is not callable is named when given."""
    with pytest.raises(TypeError, match=r"middleware\[1\] must be an async callable"):
        make_app(Recorder(), "not a middleware")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sequence of middleware"):
        App("x", middleware=Recorder())  # type: ignore[arg-type]


async def test_rate_limit_per_session_and_tool() -> None:
    """Over ``burst`` calls within a frozen clock, a caller gets a tool error; others do not."""
    now = [0.0]
    limit = RateLimit(1, burst=2, clock=lambda: now[0])
    app = make_app(limit)

    @app.tool
    def other() -> str:
        """Another tool."""
        return "other"

    async with Client(app.server.lowlevel, mode="legacy") as client:
        first = [await client.call_tool("echo", {"text": str(i)}) for i in range(3)]
        elsewhere = await client.call_tool("other", {})
        now[0] += 1.0
        later = await client.call_tool("echo", {"text": "later"})
    assert [r.is_error for r in first] == [False, False, True]
    assert text(first[2]).startswith("Rate limit exceeded for this tool; retry in 1")
    assert not elsewhere.is_error
    assert ok_text(later) == "later"
    async with Client(app.server.lowlevel, mode="legacy") as client:  # another session
        assert not (await client.call_tool("echo", {"text": "again"})).is_error


async def test_rate_limit_across_tools() -> None:
    """``per_tool=False``: one bucket per caller, whatever tool it calls."""
    limit = RateLimit(1, burst=1, per_tool=False, clock=lambda: 0.0)
    app = make_app(limit)

    @app.tool
    def other() -> str:
        """Another tool."""
        return "other"

    async with Client(app.server.lowlevel, mode="legacy") as client:
        first = await client.call_tool("echo", {"text": "x"})
        second = await client.call_tool("other", {})
    assert not first.is_error
    assert second.is_error


@given(st.lists(st.floats(min_value=0, max_value=10), max_size=40))
def test_rate_limit_never_admits_more_than_rate_allows(gaps: list[float]) -> None:
    """Law: over any time t, at most burst + rate * t calls pass."""
    now = [0.0]
    limit = RateLimit(2, burst=3, clock=lambda: now[0])
    session = SessionInfo(session_id="s")

    async def answer(_request: Request) -> dict[str, Any]:
        return {"content": [], "isError": False}

    async def run() -> int:
        count = 0
        for gap in gaps:
            now[0] += gap
            request = Request("tools/call", session, target="t", element=_ELEMENT)
            result = await limit(request, answer)
            count += not result["isError"]
        return count

    passed = asyncio.run(run())
    assert passed <= 3 + 2 * now[0] + 1e-9


async def test_audit_log_records_outcomes_without_arguments(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each call, refusal and failure is one record; argument values only when asked."""
    records: list[AuditRecord] = []

    async def deny(request: Request, call_next: CallNext) -> dict[str, Any]:
        if request.arguments == {"text": "deny"}:
            raise RequestRefusedError("denied")
        return await call_next(request)

    app = make_app(AuditLog(records.append), AuditLog(arguments=True), deny)
    with caplog.at_level(logging.INFO, logger="mcp_core.audit"):
        async with Client(app.server.lowlevel, mode="legacy") as client:
            await client.list_tools()
            await client.call_tool("echo", {"text": "ok"})
            with pytest.raises(MCPError):
                await client.call_tool("echo", {"text": "deny"})
            with pytest.raises(MCPError):
                await client.call_tool("nowhere", {})
            await client.call_tool("echo", {})  # bad arguments: a tool error
    assert [(r.method, r.target, r.outcome, r.code) for r in records] == [
        ("tools/call", "echo", "ok", None),
        ("tools/call", "echo", "refused", -32600),
        ("tools/call", "nowhere", "refused", -32602),
        ("tools/call", "echo", "tool_error", None),
    ]
    assert all(r.arguments is None and r.era == "2025-11-25" for r in records)
    assert records[0].session_id is not None
    logged = [r.audit for r in caplog.records if hasattr(r, "audit")]
    assert logged[0]["arguments"] == {"text": "ok"}
    assert "arguments" not in records[0].as_dict()


def test_chain_names_a_bad_item() -> None:
    """chain() checks what it is given."""
    with pytest.raises(TypeError, match=r"middleware\[0\]"):
        chain([42], Recorder())  # type: ignore[list-item,arg-type]


def _t() -> str:
    return "t"


_ELEMENT = tool_from_function(_t)
