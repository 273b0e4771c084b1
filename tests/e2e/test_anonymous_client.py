"""Attacker: an anonymous client of a public HTTP endpoint (no token, or one token, one address).

Each test is one finding of the attack pass, tried through the real transport: uvicorn on
127.0.0.1 as ``run_http`` serves it (the header deadline lives in its HTTP protocol), raw
sockets or ``httpx2`` for the attacker, and a well-behaved client beside it. Distinct clients are
told apart as behind the documented HAProxy: the peer 127.0.0.1 is a trusted proxy and
``X-Forwarded-For`` names the client. No test measures time or memory: each asserts what the
server answers and that the attacker's holdings are let go.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.shared.exceptions import MCPError
from pydantic import AnyHttpUrl
from starlette.types import ASGIApp

from mcp_core.app import App
from mcp_core.server._uvicorn import listen, serve_asgi
from tests.clients import Inbox
from tests.e2e._http import INITIALIZE, ForwardedSession, RawSession
from tests.server.test_rounds import PAID, YES, asked, call, paying_server, text_of

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def small_app() -> App:
    """An app with one tool that echoes its text."""
    app = App("edge")

    @app.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return app


@contextmanager
def served(app: ASGIApp, *, header_timeout: float | None = 10.0) -> Iterator[tuple[str, int]]:
    """Serve ``app`` as ``run_http`` does (``serve_asgi``) in a thread; yield its URL and port."""
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    started = threading.Event()
    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []

    def run() -> None:
        async def main() -> None:
            task = asyncio.current_task()
            assert task is not None
            running.append((asyncio.get_running_loop(), task))
            await serve_asgi(app, sock, ready=started.set, header_timeout=header_timeout)

        with contextlib.suppress(asyncio.CancelledError):
            asyncio.run(main())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(10), "the server did not start"
    try:
        yield f"http://127.0.0.1:{port}/mcp", port
    finally:
        loop, task = running[0]
        loop.call_soon_threadsafe(task.cancel)
        thread.join(timeout=15)


def from_client(name: str) -> dict[str, str]:
    """The header the trusted proxy adds for the client called ``name`` (an address)."""
    return {"x-forwarded-for": name}


async def session_of(url: str, http: httpx2.AsyncClient, client: str) -> RawSession:
    """An initialized handshake-era session opened by ``client`` (through the proxy)."""
    session = ForwardedSession(url, http, forwarded=client)
    await session.open()
    return session


async def initialize(url: str, http: httpx2.AsyncClient, client: str) -> httpx2.Response:
    """One raw ``initialize`` POST from ``client``."""
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        **from_client(client),
    }
    return await http.post(url, json=INITIALIZE, headers=headers)


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    """An HTTP client with room for many connections."""
    limits = httpx2.Limits(max_connections=200, max_keepalive_connections=50)
    async with httpx2.AsyncClient(timeout=30, limits=limits) as client:
        yield client


async def ping(session: RawSession, request_id: int) -> None:
    """One ``ping`` in ``session``; it must be answered."""
    events = await session.request("ping", request_id=request_id)
    assert events[-1].message is not None
    assert events[-1].message.get("result") == {}


class TestSessionSlots:
    """An anonymous client pinging many sessions no longer holds every slot."""

    async def test_pinging_client_does_not_starve_others(self, http: httpx2.AsyncClient) -> None:
        """Attacker opens 20 sessions and pings them all; only its own idle ones are reclaimed.

        Before: with 6 slots in total, the attacker held all six and every other client got
        503 for as long as it pinged. Now it holds at most its 3, and another client opens a
        session and calls a tool.
        """
        app = small_app().asgi(
            max_sessions=6, max_sessions_per_client=3, trusted_proxies=["127.0.0.1"]
        )
        with served(app) as (url, _):
            held: list[RawSession] = []
            for _ in range(20):
                session: RawSession = ForwardedSession(url, http, forwarded="203.0.113.9")
                await session.open()
                held.append(session)
                await ping(held[-1], 1)
            alive = []
            for session in held:
                response = await http.post(
                    url,
                    json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                    headers=session.headers(),
                )
                alive.append(response.status_code)
            assert alive.count(200) == 3
            assert alive[-3:] == [200, 200, 200]  # the least recently used were reclaimed
            assert set(alive[:-3]) == {404}  # their clients start anew, as the protocol says
            other = await session_of(url, http, "198.51.100.7")
            events = await other.request(
                "tools/call", {"name": "echo", "arguments": {"text": "served"}}
            )
            assert "served" in events[-1].data

    async def test_busy_sessions_are_not_reclaimed(self, http: httpx2.AsyncClient) -> None:
        """Attacker keeps its 3 sessions busy (open GET streams): its 4th is refused, 429.

        The refusal carries Retry-After; another client is served meanwhile.
        """
        app = small_app().asgi(
            max_sessions=6, max_sessions_per_client=3, trusted_proxies=["127.0.0.1"]
        )
        with served(app) as (url, _):
            async with anyio.create_task_group() as streams:
                sessions = []
                for _ in range(3):
                    session = ForwardedSession(url, http, forwarded="203.0.113.9")
                    await session.open()
                    sessions.append(session)
                opened = anyio.Event()
                count = 0

                async def hold(session: RawSession) -> None:
                    nonlocal count
                    headers = session.headers(accept="text/event-stream")
                    async with http.stream("GET", url, headers=headers) as response:
                        assert response.status_code == 200
                        count += 1
                        if count == 3:
                            opened.set()
                        await anyio.sleep_forever()

                for session in sessions:
                    streams.start_soon(hold, session)
                with anyio.fail_after(10):
                    await opened.wait()
                refused = await initialize(url, http, "203.0.113.9")
                assert refused.status_code == 429
                assert refused.headers["retry-after"].isdigit()
                assert "Too many open sessions for this client" in refused.text
                await ping(await session_of(url, http, "198.51.100.7"), 1)
                streams.cancel_scope.cancel()

    async def test_server_limit_reclaims_then_refuses_with_retry_after(
        self, http: httpx2.AsyncClient
    ) -> None:
        """At max_sessions, a new client reclaims the least recently used idle session.

        With every session busy, the new one is refused 503 with Retry-After.
        """
        app = small_app().asgi(max_sessions=2, trusted_proxies=["127.0.0.1"])
        with served(app) as (url, _):
            first = await session_of(url, http, "192.0.2.1")
            second = await session_of(url, http, "192.0.2.2")
            await ping(second, 1)
            third = await initialize(url, http, "192.0.2.3")
            assert third.status_code == 200
            gone = await http.post(
                url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=first.headers()
            )
            assert gone.status_code == 404
            await ping(second, 3)

    async def test_forwarded_for_is_believed_only_from_trusted_proxies(
        self, http: httpx2.AsyncClient
    ) -> None:
        """Without trusted proxies, a forged X-Forwarded-For buys the attacker no new slots."""
        app = small_app().asgi(max_sessions_per_client=2)
        with served(app) as (url, _):
            sessions = []
            for n in range(5):
                session = ForwardedSession(url, http, forwarded=f"10.0.0.{n}")
                await session.open()
                sessions.append(session)
            statuses = []
            for session in sessions:
                response = await http.post(
                    url,
                    json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                    headers=session.headers(),
                )
                statuses.append(response.status_code)
            assert statuses == [404, 404, 404, 200, 200]


def _raw_connection(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=30)


def _read_all(sock: socket.socket) -> bytes:
    """What the server sends until it closes the connection."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def _partial_post(port: int, body_size: int, sent: int, extra: str = "") -> socket.socket:
    sock = _raw_connection(port)
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
        "accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n"
        f"mcp-protocol-version: 2025-11-25\r\n{extra}content-length: {body_size}\r\n\r\n"
    )
    sock.sendall(head.encode() + b"[" + b" " * (sent - 1))
    return sock


class TestReadDeadlines:
    """Stalled request bodies and slow headers are let go after their deadline."""

    async def test_stalled_bodies_are_released(self) -> None:
        """Attacker starts 100 request bodies of 3.9 MB, sends 64 KiB of each, and stalls.

        Before: all 100 were held indefinitely. Now each is answered 408 and its connection
        closed once the body deadline passes; then a normal client is served.
        """
        app = small_app().asgi(body_timeout=1.0)
        with served(app) as (url, port):
            socks = [_partial_post(port, 3_900_000, 64 * 1024) for _ in range(100)]
            answers = await anyio.to_thread.run_sync(lambda: [_read_all(s) for s in socks])
            for sock in socks:
                sock.close()
            assert all(answer.startswith(b"HTTP/1.1 408 ") for answer in answers)
            assert b"Request body not received within 1 seconds" in answers[0]
            async with httpx2.AsyncClient(timeout=30) as http:
                session = RawSession(url, http)
                await session.open()
                await ping(session, 1)

    async def test_bodies_in_flight_are_bounded_per_client(self) -> None:
        """Attacker's bodies in flight beyond its byte budget are refused 429; others carry on."""
        app = small_app().asgi(
            body_timeout=30.0,
            max_client_body_bytes=1024 * 1024,
            trusted_proxies=["127.0.0.1"],
        )
        with served(app) as (url, port):
            extra = "x-forwarded-for: 203.0.113.9\r\n"
            stalled = _partial_post(port, 3_000_000, 700 * 1024, extra)
            # A complete 400 KiB body of the same client is refused once the server holds the
            # stalled one's 700 KiB (until then it is served): ask until it is.
            probe = b"[" + b" " * (400 * 1024) + b"]"
            headers = {"content-type": "application/json", **from_client("203.0.113.9")}
            async with httpx2.AsyncClient(timeout=30) as http:
                with anyio.fail_after(20):
                    while True:
                        refused = await http.post(url, content=probe, headers=headers)
                        if refused.status_code == 429:
                            break
                        await anyio.sleep(0.05)
                assert refused.headers["retry-after"] == "1"
                assert "Too many request bodies in flight" in refused.text
                await ping(await session_of(url, http, "198.51.100.7"), 1)
            stalled.close()

    async def test_slow_headers_are_closed(self) -> None:
        """Attacker opens 200 connections and sends headers a little at a time, never ending.

        Before: held for as long as the attacker liked. Now each is answered 408 and closed
        once the header deadline passes; a connection that sends nothing is closed too.
        """
        with served(small_app().asgi(), header_timeout=0.5) as (url, port):
            socks = []
            for n in range(200):
                sock = _raw_connection(port)
                if n % 2:
                    sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ")
                socks.append(sock)
            answers = await anyio.to_thread.run_sync(lambda: [_read_all(s) for s in socks])
            for sock in socks:
                sock.close()
            assert all(answer.startswith(b"HTTP/1.1 408 ") for answer in answers)
            async with httpx2.AsyncClient(timeout=30) as http:
                session = RawSession(url, http)
                await session.open()
                await ping(session, 1)


class TestHealthBehindAuth:
    """health_auth=True: the health endpoint answers only a verified bearer token."""

    async def test_health_needs_a_token(self) -> None:
        """Attacker without a token gets 401 from /healthz; a token holder gets the report."""

        class Tokens:
            async def verify_token(self, token: str) -> AccessToken | None:
                if token == "probe-token":  # noqa: S105 -- a test token
                    return AccessToken(token=token, client_id="probe", scopes=[])
                return None

        auth = AuthSettings(
            issuer_url=AnyHttpUrl("http://127.0.0.1"),
            resource_server_url=AnyHttpUrl("http://127.0.0.1/mcp"),
            validate_token_resource=False,
        )
        app = small_app().asgi(token_verifier=Tokens(), auth=auth, health_auth=True)
        with served(app) as (url, _):
            health = url.removesuffix("/mcp") + "/healthz"
            async with httpx2.AsyncClient(timeout=30) as http:
                anonymous = await http.get(health)
                assert anonymous.status_code == 401
                assert "sources" not in anonymous.text
                probe = await http.get(health, headers={"authorization": "Bearer probe-token"})
                assert probe.status_code in {200, 503}
                assert "sources" in json.loads(probe.text)

    def test_health_auth_needs_a_verifier(self) -> None:
        """health_auth without a token verifier is a clear error, not an open endpoint."""
        with pytest.raises(ValueError, match="token_verifier"):
            small_app().asgi(health_auth=True)


def test_bad_limits_are_named() -> None:
    """A limit that is not a positive number is refused, naming the setting."""
    bad: list[tuple[str, Any]] = [
        ("max_sessions_per_client", 0),
        ("body_timeout", -1.0),
        ("max_client_body_bytes", 0),
        ("trusted_proxies", ["haproxy.local"]),
    ]
    for name, value in bad:
        with pytest.raises(ValueError, match=name):
            small_app().asgi(**{name: value})


class TestReplayedRounds:
    """A 2026-07-28 request state is good for one retry, over the real HTTP transport."""

    async def test_replaying_the_final_round_pays_once(self) -> None:
        """Attacker replays the final round of a paid call 8 times: refused each time, paid once."""
        PAID.clear()
        with served(paying_server().streamable_http_app()) as (url, _):
            async with Inbox(form={"ok": True}).client(url) as client:
                first = asked(await call(client, "pay", {"amount": 5}))
                [key] = first.input_requests or {}
                done = await call(
                    client, "pay", {"amount": 5}, responses={key: YES}, state=first.request_state
                )
                refusals = []
                for _ in range(8):
                    with pytest.raises(MCPError) as refused:
                        await call(
                            client,
                            "pay",
                            {"amount": 5},
                            responses={key: YES},
                            state=first.request_state,
                        )
                    refusals.append(refused.value.code)
        assert text_of(done) == "paid 5"
        assert refusals == [-32602] * 8
        assert PAID == ["paid 5"]
