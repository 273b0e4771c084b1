"""What a client can make the server hold: bounded echoes, body limit, idle sessions, session cap.

Error answers that quote client input are measured in bytes on the wire (raw HTTP) and through
the official client in both protocol eras; the limits are configured on small apps served by
uvicorn on 127.0.0.1. No test measures time or memory: each asserts what the server answers.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError

from mcp_core.app import App
from mcp_core.errors import INPUT_ECHO_LIMIT
from mcp_core.server import InMemoryEventStore
from tests.e2e._http import RawSession, serve

HUGE = 3_900_000  # characters: just under the default 4 MiB request body limit
# An answer may quote a handful of clipped inputs (message and data) and its own framing.
ANSWER_LIMIT = 16 * INPUT_ECHO_LIMIT + 2048

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

# Requests whose error answer would quote a ~3.9 MB piece of the request.
HOSTILE: list[tuple[str, str, dict[str, Any]]] = [
    (
        "argument of the wrong type",
        "tools/call",
        {"name": "json_schema_2020_12_tool", "arguments": {"address": "x" * HUGE}},
    ),
    (
        "unexpected argument name",
        "tools/call",
        {"name": "json_schema_2020_12_tool", "arguments": {"k" * HUGE: 1}},
    ),
    (
        "wrong type on the direct path",
        "tools/call",
        {"name": "test_update_watched_resource", "arguments": {"text": ["y" * HUGE]}},
    ),
    ("unknown tool", "tools/call", {"name": "t" * HUGE, "arguments": {}}),
    ("unknown method (the SDK's refusal)", "m" * HUGE, {}),
    ("unknown prompt", "prompts/get", {"name": "p" * HUGE}),
    ("unknown resource", "resources/read", {"uri": "test://" + "u" * HUGE}),
    (
        "unknown completion ref",
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "test://" + "c" * HUGE},
            "argument": {"name": "id", "value": "1"},
        },
    ),
]


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    """An HTTP client with room for slow answers to big requests."""
    async with httpx2.AsyncClient(timeout=60) as client:
        yield client


class TestEchoesAreClipped:
    """An error (or error result) repeats at most a clipped piece of what the client sent."""

    @pytest.mark.parametrize(("case", "method", "params"), HOSTILE, ids=[h[0] for h in HOSTILE])
    async def test_raw_answer_is_small(
        self,
        http_url: str,
        http: httpx2.AsyncClient,
        case: str,
        method: str,
        params: dict[str, Any],
    ) -> None:
        """The whole HTTP answer to a 3.9 MB hostile request is a few KiB, with the marker."""
        session = RawSession(http_url, http)
        await session.open()
        events = await session.request(method, params, request_id=5)
        answer = next(event for event in events if event.message)
        assert len(answer.data) < ANSWER_LIMIT, case
        assert "characters elided" in answer.data

    @pytest.mark.parametrize("mode", ["legacy", "modern"])
    async def test_official_client_sees_a_clipped_error(self, http_url: str, mode: str) -> None:
        """Through mcp.Client in both eras: the error (or error result) quotes a clipped value."""
        arguments = {"address": "x" * HUGE}
        options: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
        async with Client(http_url, **options) as client:
            try:
                result = await client.call_tool("json_schema_2020_12_tool", arguments)
            except MCPError as error:
                echoed = error.error.message + json.dumps(error.error.data)
            else:  # invalid arguments reported as an error result (SEP-1303)
                assert result.is_error
                echoed = result.model_dump_json()
        assert len(echoed) < ANSWER_LIMIT
        assert "characters elided" in echoed
        assert "is not of type 'object'" in echoed  # the validator's verdict survives the clip


def small_app() -> App:
    """An app with a tool that echoes its text, and one that logs it first (a streamed answer)."""
    app = App("bounds")

    @app.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @app.tool
    async def loud(text: str, ctx: Context) -> str:
        """Log the text, then return it: the answer is a stream, its events kept for resuming."""
        await ctx.info(text)
        return text

    return app


class TestTransportLimits:
    """The request body limit, the idle timeout and the session cap are McpServer/App options."""

    async def test_body_limit(self, http: httpx2.AsyncClient) -> None:
        """Over max_request_body_size the answer is 413 before any parsing; under it, served."""
        with serve(small_app().asgi(max_request_body_size=64 * 1024)) as url:
            session = RawSession(url, http)
            await session.open()
            small = await session.request(
                "tools/call", {"name": "echo", "arguments": {"text": "z" * 1000}}
            )
            assert "z" * 1000 in small[-1].data
            body = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "z" * 100_000}},
            }
            response = await http.post(url, json=body, headers=session.headers())
            assert response.status_code == 413

    async def test_idle_sessions_are_closed_with_their_events(
        self, http: httpx2.AsyncClient
    ) -> None:
        """A session left idle is closed: its id answers 404 and its events are forgotten."""
        store = InMemoryEventStore()
        app = small_app().asgi(session_idle_timeout=0.5, event_store=store)
        with serve(app) as url:
            session = RawSession(url, http)
            await session.open()
            await session.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
            assert store.retained_events > 0
            with anyio.fail_after(30):
                while (await session.delete()) != 404:  # noqa: ASYNC110 -- the server's state, no event to await
                    await anyio.sleep(0.2)
            assert store.retained_events == 0

    async def test_deleted_sessions_leave_no_events(self, http: httpx2.AsyncClient) -> None:
        """DELETE drops the session's retained events at once."""
        store = InMemoryEventStore()
        with serve(small_app().asgi(event_store=store)) as url:
            kept = RawSession(url, http)
            await kept.open()
            gone = RawSession(url, http)
            await gone.open()
            # (A JSON answer is never resumed, so it keeps nothing: the stream of a call that logs.)
            await gone.request("tools/call", {"name": "loud", "arguments": {"text": "z" * 10_000}})
            assert store.retained_bytes > 10_000
            assert await gone.delete() == 200
            # The SDK answers the DELETE, then forgets the session: wait for that, not for a time.
            with anyio.fail_after(10):
                while store.retained_bytes > 10_000:  # noqa: ASYNC110 -- the server's state, no event to await
                    await anyio.sleep(0.05)
            assert store.retained_events > 0  # the other session's events are still there

    async def test_session_cap(self, http: httpx2.AsyncClient) -> None:
        """At max_sessions a new session reclaims the least recently used idle one; others carry on.

        (With every session busy it is refused 503 with Retry-After: see test_anonymous_client.)
        """
        with serve(small_app().asgi(max_sessions=2)) as url:
            first, second = RawSession(url, http), RawSession(url, http)
            await first.open()
            await second.open()
            third = RawSession(url, http)
            await third.open()
            reclaimed = await http.post(
                url, json={"jsonrpc": "2.0", "id": 5, "method": "ping"}, headers=first.headers()
            )
            assert reclaimed.status_code == 404
            still = await second.request(
                "tools/call", {"name": "echo", "arguments": {"text": "ok"}}
            )
            assert "ok" in still[-1].data
