"""SSE polling (SEP-1699) over real HTTP: the official suite's server-sse-polling probe, done right.

The conformance suite 0.1.16 probes ``test_reconnection`` with ``mcp-protocol-version:
2025-03-26``, a version to which no priming event may be sent, so against any conformant server it
can only warn (scripts/conformance-suite lists those two warnings as known). These tests send the
version the scenario is about and assert what its checks want: a priming event first (an id,
empty data, a retry field), the stream closed mid-call, and the result after a reconnection with
``Last-Event-ID``.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from httpx2 import EventSource, ServerSentEvent

from tests.clients import Inbox

VERSION = "2025-11-25"

pytestmark = pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"
)  # handshake-era APIs


async def _events(response: httpx2.Response) -> list[ServerSentEvent]:
    return [event async for event in EventSource(response)]


async def _post(http: httpx2.AsyncClient, url: str, session: str, body: dict[str, Any]) -> None:
    headers = {"mcp-session-id": session, "mcp-protocol-version": VERSION}
    response = await http.post(url, json=body, headers=headers)
    assert response.status_code in (200, 202), response.text


class TestSsePolling:
    """test_reconnection closes its POST stream mid-call; the client resumes with Last-Event-ID."""

    async def test_priming_event_close_and_resume(self, http_url: str) -> None:
        """The raw probe: priming event with retry, no result on the POST stream, result on resume."""
        accept = {"Accept": "text/event-stream, application/json"}
        async with httpx2.AsyncClient(headers=accept, timeout=20) as http:
            session = await _handshake(http, http_url)
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "test_reconnection", "arguments": {}},
            }
            headers = {"mcp-session-id": session, "mcp-protocol-version": VERSION}
            async with http.stream("POST", http_url, json=call, headers=headers) as stream:
                first = await _events(stream)
            priming = first[0]
            assert priming.id
            assert priming.data == ""
            assert priming.retry is not None
            assert not any('"id":1' in event.data for event in first), "closed before the result"
            last_id = first[-1].id
            resume = {**headers, "Accept": "text/event-stream", "last-event-id": last_id}
            async with http.stream("GET", http_url, headers=resume) as stream:
                resumed: list[str] = []
                async for event in EventSource(stream):
                    resumed.append(event.data)
                    if '"id":1' in event.data:
                        break
        assert any("After reconnect" in data for data in resumed)
        assert "Reconnection test completed" in resumed[-1]

    async def test_official_client_gets_the_result(self, http_url: str) -> None:
        """The official client (2025-11-25) reconnects by itself and gets the tool's result."""
        inbox = Inbox()
        async with inbox.client(http_url, mode="legacy") as client:
            result = await client.call_tool("test_reconnection", {})
        assert result.content[0].text == "Reconnection test completed"  # type: ignore[union-attr]  # a text block
        assert inbox.logs == ["Before disconnect", "After reconnect"]


async def _handshake(http: httpx2.AsyncClient, url: str) -> str:
    """A 2025-11-25 session on ``url``, initialized: its id."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    response = await http.post(url, json=init)
    session = response.headers["mcp-session-id"]
    await _post(http, url, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return session


class TestSessionStreamResumes:
    """The session's GET stream is primed: what was sent while it was away arrives on resume."""

    async def test_notification_sent_while_away(self, http_url: str) -> None:
        """Cut before anything arrived on it, the stream resumes with what was sent meanwhile."""
        accept = {"Accept": "text/event-stream, application/json"}
        async with httpx2.AsyncClient(headers=accept, timeout=20) as http:
            session = await _handshake(http, http_url)
            headers = {"mcp-session-id": session, "mcp-protocol-version": VERSION}
            stream_headers = {**headers, "Accept": "text/event-stream"}
            async with http.stream("GET", http_url, headers=stream_headers) as stream:
                assert stream.status_code == 200
                priming = await anext(aiter(EventSource(stream)))
            assert priming.id
            assert priming.data == ""
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "test_register_tool", "arguments": {"name": "while_away"}},
            }
            await _post(http, http_url, session, call)  # announces list_changed: nobody listens
            resume = {**stream_headers, "last-event-id": priming.id}
            async with http.stream("GET", http_url, headers=resume) as stream:
                async for event in EventSource(stream):
                    if "notifications/tools/list_changed" in event.data:
                        break

    async def test_a_second_stream_is_still_refused(self, http_url: str) -> None:
        """Priming does not open a back door around one GET stream per session (409)."""
        accept = {"Accept": "text/event-stream, application/json"}
        async with httpx2.AsyncClient(headers=accept, timeout=20) as http:
            session = await _handshake(http, http_url)
            headers = {
                "mcp-session-id": session,
                "mcp-protocol-version": VERSION,
                "Accept": "text/event-stream",
            }
            async with http.stream("GET", http_url, headers=headers) as first:
                # Held while the second GET is made: a dropped iterator closes its response.
                events = aiter(EventSource(first))
                await anext(events)
                second = await http.get(http_url, headers=headers)
        assert second.status_code == 409

    async def test_older_clients_get_no_priming_event(self, http_url: str) -> None:
        """A 2025-06-18 client cannot parse an empty-data event: its stream is the SDK's plain one."""
        accept = {"Accept": "text/event-stream, application/json"}
        async with httpx2.AsyncClient(headers=accept, timeout=20) as http:
            session = await _handshake(http, http_url)
            headers = {
                "mcp-session-id": session,
                "mcp-protocol-version": "2025-06-18",
                "Accept": "text/event-stream",
            }
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "test_register_tool", "arguments": {"name": "old_client"}},
            }
            async with http.stream("GET", http_url, headers=headers) as stream:
                events = aiter(EventSource(stream))
                await _post(http, http_url, session, call)
                first = await anext(events)
        assert "notifications/tools/list_changed" in first.data
