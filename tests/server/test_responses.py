"""Request POSTs answered with JSON unless they need a stream: spoken raw, and by the official client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx2
import pytest

import mcp_core.server._responses as responses
from mcp_core.app import App
from mcp_core.handlers import ClientGateway
from mcp_core.server import ServerGateway
from tests.clients import Inbox, ok_text
from tests.e2e._http import (
    ACCEPT,
    INITIALIZE,
    LEGACY,
    Event,
    RawSession,
    answer_to,
    parse_sse,
    serve,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"  # logging/setLevel in 2026-07-28
)

JSON = "application/json"
SSE = "text/event-stream"


def build_app() -> App:
    """Tools that answer at once, talk first, stay silent, close their stream, or ask the client."""
    app = App("deferred")

    @app.tool
    def quiet(n: int) -> str:
        """Answer at once."""
        return f"quiet {n}"

    @app.tool
    async def chatty(gateway: ClientGateway) -> str:
        """Log a line, then answer."""
        await gateway.log("info", "working")
        return "chatty done"

    @app.tool
    async def slow(seconds: float) -> str:
        """Stay silent for a while, then answer."""
        await anyio.sleep(seconds)
        return "slow done"

    @app.tool
    async def polled(gateway: ClientGateway) -> str:
        """Close the response stream before sending anything, then log and answer."""
        assert isinstance(gateway, ServerGateway)
        assert await gateway.close_sse_stream()
        await anyio.sleep(0.1)
        await gateway.log("info", "after the close")
        return "polled done"

    @app.tool
    async def asks(gateway: ClientGateway) -> str:
        """Ask the client a question during the call."""
        answer = await gateway.elicit(
            "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"hello {answer.get('content', {}).get('name')}"

    return app


def serve_app(**options: Any) -> Iterator[str]:
    """The test app over streamable HTTP with ``options``; yields its URL."""
    with serve(build_app().asgi(**options)) as url:
        yield url


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The default: JSON unless a request needs a stream."""
    yield from serve_app()


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    """The same app with every answer an SSE stream: the reference."""
    yield from serve_app(json_response=False)


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    """A raw HTTP client."""
    async with httpx2.AsyncClient(timeout=10) as client:
        yield client


async def opened(url: str, http: httpx2.AsyncClient) -> RawSession:
    """A handshake-era session with logging at ``info``."""
    session = RawSession(url, http)
    await session.open()
    await session.request("logging/setLevel", {"level": "info"}, request_id=1)
    return session


async def post(
    session: RawSession, method: str, params: dict[str, Any], request_id: int
) -> tuple[str, list[Event]]:
    """POST one request; its answer's content type and its events (one, id-less, for JSON)."""
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    response = await session.http.post(session.url, json=body, headers=session.headers())
    assert response.status_code == 200, response.text
    kind = response.headers["content-type"].split(";")[0]
    assert response.headers["mcp-session-id"] == session.session_id
    if kind == JSON:
        return kind, [Event("", response.text)]
    return kind, parse_sse(response.text)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """``tools/call`` params."""
    return {"name": name, "arguments": arguments}


def answer_of(events: list[Event], request_id: int) -> dict[str, Any]:
    """The response to ``request_id`` among ``events``."""
    (answer,) = [e.message for e in events if e.message and e.message.get("id") == request_id]
    return answer


class TestJsonUnlessNeeded:
    """What each request gets by default."""

    async def test_quiet_requests_get_json(self, url: str, http: httpx2.AsyncClient) -> None:
        """Initialize, lists, ping and a tool that only answers: one JSON body each."""
        opening = await http.post(
            url, json=INITIALIZE, headers={"accept": ACCEPT, "mcp-protocol-version": LEGACY}
        )
        assert opening.headers["content-type"].startswith(JSON)
        assert opening.json()["result"]["protocolVersion"] == LEGACY
        session = await opened(url, http)
        answers = []
        for request_id, (method, params) in enumerate(
            [("tools/list", {}), ("ping", {}), ("tools/call", call("quiet", n=3))], start=10
        ):
            kind, events = await post(session, method, params, request_id)
            assert kind == JSON, method
            answers.append(answer_of(events, request_id))
        assert "quiet" in json.dumps(answers[0]["result"]["tools"])
        assert answers[1]["result"] == {}
        assert "quiet 3" in json.dumps(answers[2]["result"])

    async def test_a_request_that_talks_first_streams(
        self, url: str, http: httpx2.AsyncClient
    ) -> None:
        """A log line before the answer: an SSE stream, priming event, the line, the answer."""
        session = await opened(url, http)
        kind, events = await post(session, "tools/call", call("chatty"), 5)
        assert kind == SSE
        priming, line, answer = events
        assert priming.message is None
        assert priming.id
        assert line.message is not None
        assert line.message["params"]["data"] == "working"
        assert line.id
        assert answer.message == answer_of(events, 5)
        assert "chatty done" in answer.data

    async def test_a_talking_stream_resumes(self, url: str, http: httpx2.AsyncClient) -> None:
        """From its priming event, the stream replays the line and the answer, in order."""
        session = await opened(url, http)
        _, events = await post(session, "tools/call", call("chatty"), 6)
        status, replayed = await session.resume(events[0].id, until=answer_to(6))
        assert status == 200
        assert [e.message for e in replayed if e.message] == [e.message for e in events[1:]]

    async def test_closing_before_anything_resumes(
        self, url: str, http: httpx2.AsyncClient
    ) -> None:
        """A stream closed before anything was sent holds its priming event; resuming gets the rest."""
        session = await opened(url, http)
        kind, events = await post(session, "tools/call", call("polled"), 8)
        assert kind == SSE
        assert [e.message for e in events] == [None]
        status, replayed = await session.resume(events[0].id, until=answer_to(8))
        assert status == 200
        messages = [e.message for e in replayed if e.message]
        assert messages[0]["params"]["data"] == "after the close"
        assert "polled done" in json.dumps(messages[-1])

    async def test_a_silent_long_request_streams(
        self, url: str, http: httpx2.AsyncClient, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Silent past the window: the stream opens with its priming event, then the answer."""
        monkeypatch.setattr(responses, "STREAM_AFTER", 0.1)
        session = await opened(url, http)
        kind, events = await post(session, "tools/call", call("slow", seconds=0.5), 9)
        assert kind == SSE
        assert events[0].message is None
        assert events[0].id
        assert "slow done" in json.dumps(answer_of(events, 9))

    async def test_a_session_ended_mid_request(self, url: str, http: httpx2.AsyncClient) -> None:
        """DELETE while a request is waiting for its answer: that request gets a 500 saying so."""
        session = await opened(url, http)
        body = {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": call("slow", seconds=3),
        }
        statuses: list[tuple[int, str]] = []

        async def waiting() -> None:
            response = await http.post(url, json=body, headers=session.headers())
            statuses.append((response.status_code, response.text))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(waiting)
            await anyio.sleep(0.3)
            assert await session.delete() == 200
        ((status, text),) = statuses
        assert status == 500
        assert "Session terminated" in text

    async def test_another_session_cannot_replay_a_stream(
        self, url: str, http: httpx2.AsyncClient
    ) -> None:
        """Every id of a session's deferred stream, replayed by another session: nothing."""
        owner = await opened(url, http)
        _, events = await post(owner, "tools/call", call("chatty"), 5)
        intruder = await opened(url, http)
        for event in events:
            status, replayed = await intruder.resume(event.id)
            assert status in {200, 400, 404}
            assert not any("working" in e.data or "chatty done" in e.data for e in replayed)


class TestEverythingElseUnchanged:
    """What is not a request goes through the SDK's own code, answered exactly as in SSE mode."""

    @pytest.mark.parametrize(
        ("name", "body", "extra"),
        [
            ("a notification", {"jsonrpc": "2.0", "method": "notifications/cancelled"}, {}),
            ("malformed JSON", "{not json", {}),
            ("not JSON-RPC", {"hello": 1}, {}),
            ("a batch", [{"jsonrpc": "2.0", "id": 1, "method": "ping"}], {}),
            ("JSON only accepted", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"accept": JSON}),
            ("no session", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"mcp-session-id": ""}),
            (
                "another session",
                {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                {"mcp-session-id": "0" * 32},
            ),
            ("wrong content type", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"x-text": "1"}),
        ],
    )
    async def test_same_status_as_sse_mode(  # noqa: PLR0917 -- fixtures and parameters
        self,
        url: str,
        sse_url: str,
        http: httpx2.AsyncClient,
        name: str,
        body: object,
        extra: dict[str, str],
    ) -> None:
        """Hostile or odd POSTs get the status (and error) the SDK's SSE mode gives them."""
        answers = []
        for target in (url, sse_url):
            session = await opened(target, http)
            headers = session.headers()
            content_type = "text/plain" if extra.get("x-text") else "application/json"
            headers["content-type"] = content_type
            headers.update({k: v for k, v in extra.items() if k != "x-text"})
            if headers.get("mcp-session-id") == "":
                del headers["mcp-session-id"]
            content = body if isinstance(body, str) else json.dumps(body)
            response = await http.post(target, content=content, headers=headers)
            answers.append((response.status_code, response.text))
        assert answers[0] == answers[1], name


class TestFixedModes:
    """``json_response`` True and False keep the SDK's fixed modes."""

    async def test_json_mode_has_no_back_channel(self, http: httpx2.AsyncClient) -> None:
        """Always JSON: a talking tool still answers in JSON; its log line is dropped."""
        for url in serve_app(json_response=True):
            session = await opened(url, http)
            kind, events = await post(session, "tools/call", call("chatty"), 3)
            assert kind == JSON
            assert "chatty done" in events[0].data

    async def test_sse_mode_streams_everything(self, http: httpx2.AsyncClient) -> None:
        """Always SSE: even ``ping`` is answered with a stream."""
        for url in serve_app(json_response=False):
            session = await opened(url, http)
            kind, _ = await post(session, "ping", {}, 3)
            assert kind == SSE


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_official_client_in_both_eras(url: str, mode: str) -> None:
    """The official client calls, hears logs and answers a question, by default, in both eras."""
    inbox = Inbox(form={"name": "Ada"})
    options = {"mode": "legacy"} if mode == "legacy" else {}
    async with inbox.client(url, **options) as client:
        if mode == "legacy":  # 2026-07-28 has no logging/setLevel
            await client.set_logging_level("info")
        assert ok_text(await client.call_tool("quiet", {"n": 1})) == "quiet 1"
        assert ok_text(await client.call_tool("chatty", {})) == "chatty done"
        assert ok_text(await client.call_tool("asks", {})) == "hello Ada"
    if mode == "legacy":
        assert inbox.logs == ["working"]
    assert inbox.asked == ["Your name?"]
