"""Raw streamable HTTP for the tests the official client cannot write: hostile headers and ids."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import uvicorn
from starlette.types import ASGIApp

from tests.e2e.conftest import free_port

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
"""A handshake-era ``initialize`` request, as a raw client POSTs it."""


@contextmanager
def serve(app: ASGIApp, port: int | None = None) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread on 127.0.0.1 (a free port unless given); yield the ``/mcp`` URL."""
    if port is None:
        port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    web = uvicorn.Server(config)
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not web.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        web.should_exit = True
        thread.join(timeout=10)


@dataclass(frozen=True, slots=True)
class Event:
    """One SSE event: its id (may be empty) and its data (a JSON-RPC message, or '' to prime)."""

    id: str
    data: str

    @property
    def message(self) -> dict[str, Any] | None:
        """The JSON-RPC message the event carries, or None for a priming event."""
        return json.loads(self.data) if self.data else None


def answer_to(request_id: int) -> Callable[[list[Event]], bool]:
    """A predicate on events: some event is the response to ``request_id``."""

    def answered(events: list[Event]) -> bool:
        return any((event.message or {}).get("id") == request_id for event in events)

    return answered


def parse_sse(text: str) -> list[Event]:
    """The events of an SSE body."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            name, colon, value = line.partition(":")
            if colon and name in {"id", "data"}:
                fields[name] = fields.get(name, "") + value.removeprefix(" ")
        if fields:
            events.append(Event(fields.get("id", ""), fields.get("data", "")))
    return events


@dataclass(slots=True)
class RawSession:
    """A handshake-era MCP session spoken by hand over one ``httpx2`` client."""

    url: str
    http: httpx2.AsyncClient
    session_id: str | None = None
    event_ids: list[str] = field(default_factory=list)

    def headers(self, **extra: str) -> dict[str, str]:
        """The headers every request of this session carries, plus ``extra``."""
        headers = {"accept": ACCEPT, "mcp-protocol-version": LEGACY, **extra}
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        return headers

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, request_id: int | str = 1
    ) -> list[Event]:
        """POST one request; return the events of its SSE response (and remember their ids).

        A JSON answer (the server's default for a request that sends nothing before its answer)
        reads as one event without an id.
        """
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        response = await self.http.post(self.url, json=body, headers=self.headers())
        assert response.status_code == 200, (response.status_code, response.text[:500])
        self.session_id = response.headers.get("mcp-session-id", self.session_id)
        if response.headers.get("content-type", "").startswith("application/json"):
            return [Event("", response.text)]
        events = parse_sse(response.text)
        self.event_ids.extend(event.id for event in events if event.id)
        return events

    async def open(self) -> None:
        """Initialize the session and send ``notifications/initialized``."""
        await self.request("initialize", INITIALIZE["params"], request_id=0)
        response = await self.http.post(
            self.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=self.headers(),
        )
        assert response.status_code == 202, response.text

    async def resume(
        self,
        last_event_id: str,
        *,
        until: Callable[[list[Event]], bool] = lambda events: False,
        session_id: str | None = None,
    ) -> tuple[int, list[Event]]:
        """GET the stream after ``last_event_id``: the status and the events until ``until`` holds.

        An id the server does not replay ends the response at once; a resumed stream stays open
        for live events, so reading stops as soon as ``until`` is satisfied (or after a while).
        """
        headers = self.headers(accept="text/event-stream", **{"last-event-id": last_event_id})
        if session_id is not None:
            headers["mcp-session-id"] = session_id
        text = ""
        status = 0
        with anyio.move_on_after(3):
            async with self.http.stream("GET", self.url, headers=headers) as response:
                status = response.status_code
                async for chunk in response.aiter_text():
                    text += chunk
                    if until(parse_sse(text)):
                        break
        return status, parse_sse(text)

    async def delete(self) -> int:
        """End the session with DELETE; return the status."""
        response = await self.http.delete(self.url, headers=self.headers())
        return response.status_code


class ForwardedSession(RawSession):
    """A raw session whose requests arrive through the trusted proxy for one client."""

    def __init__(self, url: str, http: httpx2.AsyncClient, *, forwarded: str) -> None:
        super().__init__(url, http)
        self._forwarded = forwarded

    def headers(self, **extra: str) -> dict[str, str]:
        """The session's headers, plus the proxy's ``X-Forwarded-For``."""
        return {**super().headers(**extra), "x-forwarded-for": self._forwarded}
