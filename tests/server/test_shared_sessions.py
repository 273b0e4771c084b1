"""Handshake-era sessions that outlive their worker (ADR 0109): resumed anywhere, taken by no one.

Workers are servers in this process sharing a MemoryStore and a MemoryChangeBus, over real HTTP
(uvicorn on loopback); the Redis event store's laws run against the Redis at
``MCP_CORE_REDIS_URL`` when there is one. The three workers behind HAProxy, under load, are
``tests/e2e/test_workers_restarts.py``.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.streamable_http import EventMessage
from mcp_types import (
    InitializeRequestParams,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCResponse,
)
from pydantic import AnyHttpUrl

from mcp_core import App
from mcp_core.server import Deployment
from mcp_core.server._gateway import SessionState
from mcp_core.server._shared_sessions import (
    MAX_SESSION_RECORD_BYTES,
    RESTORED_KEY,
    RedisEventStore,
    SessionRecord,
    SessionRecords,
    SessionSharing,
    sign,
)
from mcp_core.stores import MemoryChangeBus, MemoryStore, RedisStore
from tests.e2e._http import INITIALIZE, RawSession, serve
from tests.e2e.conftest import free_port

SECRET = b"s" * 32
REDIS_URL = os.environ.get("MCP_CORE_REDIS_URL")


def _app(deployment: Deployment) -> App:
    app = App("shared", deployment=deployment)

    @app.tool
    def ping() -> str:
        return f"pong from {deployment.worker}"

    return app


@asynccontextmanager
async def workers(
    *names: str, store: MemoryStore | None = None
) -> AsyncIterator[tuple[list[str], list[Deployment]]]:
    """Workers of one in-process deployment over HTTP: their URLs and deployments."""
    store = store if store is not None else MemoryStore()
    bus = MemoryChangeBus()
    urls, deployments = [], []
    async with AsyncExitStack() as stack:
        for name in names:
            deployment = Deployment(worker=name, secret=SECRET, store=store, bus=bus)
            urls.append(stack.enter_context(serve(_app(deployment).asgi())))
            deployments.append(deployment)
        yield urls, deployments


def records_of(deployment: Deployment) -> SessionRecords:
    """The session records as the deployment's workers keep them."""
    return deployment.session_records(3600)


async def ping(session: RawSession, url: str, request_id: int) -> dict[str, Any]:
    """Call ``ping`` in ``session`` at ``url``; the JSON-RPC answer."""
    session.url = url
    events = await session.request(
        "tools/call", {"name": "ping", "arguments": {}}, request_id=request_id
    )
    message = events[-1].message
    assert message is not None
    return message


def text_of(answer: dict[str, Any]) -> str:
    """The text a tool answered."""
    return str(answer["result"]["content"][0]["text"])


class TestResume:
    """Any worker serves a session's next request; a restarted worker its own sessions."""

    async def test_another_worker_serves_the_next_request(self) -> None:
        """Opened at w1, called at w2 then w1 again: each answers, in the same session."""
        async with workers("w1", "w2") as (urls, _), httpx2.AsyncClient(timeout=30) as http:
            session = RawSession(urls[0], http)
            await session.open()
            opened = session.session_id
            assert opened is not None
            assert opened.startswith("w1.")
            assert text_of(await ping(session, urls[0], 1)) == "pong from w1"
            assert text_of(await ping(session, urls[1], 2)) == "pong from w2"
            assert text_of(await ping(session, urls[0], 3)) == "pong from w1"
            assert session.session_id == opened

    async def test_a_restarted_worker_resumes_its_own_sessions(self) -> None:
        """w1 stops (its memory gone) and starts again: its session goes on there."""
        store = MemoryStore()
        async with httpx2.AsyncClient(timeout=30) as http:
            async with workers("w1", store=store) as (urls, _):
                session = RawSession(urls[0], http)
                await session.open()
            async with workers("w1", store=store) as (urls, _):
                assert text_of(await ping(session, urls[0], 1)) == "pong from w1"

    async def test_the_record_carries_the_state(self) -> None:
        """Log level and subscriptions are in the record, and a resumed session gets them back."""
        async with workers("w1") as (urls, deployments), httpx2.AsyncClient(timeout=30) as http:
            session = RawSession(urls[0], http)
            await session.open()
            await session.request("logging/setLevel", {"level": "error"}, request_id=1)
            assert session.session_id is not None
            record = await records_of(deployments[0]).load(session.session_id)
        assert record is not None
        assert (record.version, record.log_level) == ("2025-11-25", "error")
        assert record.client.client_info.name == INITIALIZE["params"]["clientInfo"]["name"]

        class Connection:
            state: dict[str, object] = {RESTORED_KEY: record}  # noqa: RUF012 -- a stand-in

        state = SessionState(connection=Connection())  # type: ignore[arg-type]
        SessionSharing.restore(state)
        assert state.log_level == "error"

    async def test_delete_ends_it_for_every_worker(self) -> None:
        """A DELETE at any worker removes the record: no worker resumes the session afterwards."""
        async with (
            workers("w1", "w2", "w3") as (urls, deployments),
            httpx2.AsyncClient(timeout=30) as http,
        ):
            session = RawSession(urls[0], http)
            await session.open()
            assert session.session_id is not None
            session.url = urls[1]
            assert await session.delete() == 200
            assert await records_of(deployments[0]).load(session.session_id) is None
            session.url = urls[2]
            response = await http.post(
                urls[2],
                json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
                headers=session.headers(),
            )
        assert response.status_code == 421  # w1 is alive and holds it; nobody else may


class TestTakeover:
    """The session id is the bearer; a record in the store gives no one else the session."""

    async def _misrouted(self, http: httpx2.AsyncClient, url: str, session_id: str) -> int:
        response = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
            headers={
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2025-11-25",
                "mcp-session-id": session_id,
            },
        )
        assert "tools" not in response.text
        return response.status_code

    async def test_a_record_written_without_the_secret_is_not_resumed(self) -> None:
        """Attacker with write access to the store forges a session record: no worker serves it."""
        store = MemoryStore()
        forged_id = f"w1.{secrets.token_hex(16)}"
        fields = {
            "version": "2025-11-25",
            "client": INITIALIZE["params"],
            "owner": None,
            "level": None,
            "subscriptions": [],
        }
        await store.set(f"session:{forged_id}", sign(b"x" * 32, f"session:{forged_id}", fields))
        async with (
            workers("w1", "w2", store=store) as (urls, _),
            httpx2.AsyncClient(timeout=30) as http,
        ):
            assert await self._misrouted(http, urls[1], forged_id) == 421
            assert await self._misrouted(http, urls[0], forged_id) == 404

    async def test_a_record_moved_to_another_session_id_is_not_resumed(self) -> None:
        """A genuine record copied under another id (one the attacker chose): not resumed."""
        store = MemoryStore()
        async with (
            workers("w1", "w2", store=store) as (urls, _),
            httpx2.AsyncClient(timeout=30) as http,
        ):
            victim = RawSession(urls[0], http)
            await victim.open()
            genuine = await store.get(f"session:{victim.session_id}")
            assert genuine is not None
            chosen = f"w1.{secrets.token_hex(16)}"
            await store.set(f"session:{chosen}", genuine)
            assert await self._misrouted(http, urls[1], chosen) == 421

    @pytest.mark.parametrize(
        "junk",
        [b"", b"{", b'{"record": {}, "mac": 1}', b"x" * (MAX_SESSION_RECORD_BYTES + 1)],
        ids=["empty", "cut", "wrong-shape", "oversized"],
    )
    async def test_junk_in_the_record_is_not_resumed(self, junk: bytes) -> None:
        """Whatever else the record's key holds, the session is not resumed from it."""
        store = MemoryStore()
        session_id = f"w1.{secrets.token_hex(16)}"
        await store.set(f"session:{session_id}", junk)
        deployment = Deployment(worker="w2", secret=SECRET, store=store, bus=MemoryChangeBus())
        assert await records_of(deployment).load(session_id) is None

    async def test_a_record_too_large_to_share_is_not_written(self) -> None:
        """A session with more state than a record may hold stays on its worker (logged)."""
        store = MemoryStore()
        deployment = Deployment(worker="w1", secret=SECRET, store=store, bus=MemoryChangeBus())
        session_id = f"w1.{secrets.token_hex(16)}"
        record = SessionRecord(
            session_id=session_id,
            version="2025-11-25",
            client=client_params(),
            subscriptions=tuple(f"file:///{n:05}" for n in range(MAX_SESSION_RECORD_BYTES // 10)),
        )
        assert await records_of(deployment).save(record) is False
        assert await store.get(f"session:{session_id}") is None

    async def test_guessed_session_ids_are_served_by_no_worker(self) -> None:
        """100 random ids of a live worker's form, at the other worker: never answered."""
        async with (
            workers("w1", "w2") as (urls, _),
            httpx2.AsyncClient(timeout=30) as http,
        ):
            statuses = {
                await self._misrouted(http, urls[1], f"w1.{secrets.token_hex(16)}")
                for _ in range(100)
            }
        assert statuses == {421}

    async def test_another_credential_cannot_use_the_session_anywhere(self) -> None:
        """Bob's session id with Alice's token: 404 at his worker and at the other; Bob goes on."""
        store, bus = MemoryStore(), MemoryChangeBus()
        async with AsyncExitStack() as stack:
            urls = []
            for name in ("w1", "w2"):
                deployment = Deployment(worker=name, secret=SECRET, store=store, bus=bus)
                port = free_port()
                base = f"http://127.0.0.1:{port}"
                auth = AuthSettings(
                    issuer_url=AnyHttpUrl(base),
                    resource_server_url=AnyHttpUrl(f"{base}/mcp"),
                    validate_token_resource=False,
                )
                app = _app(deployment).asgi(token_verifier=Tokens(), auth=auth)
                urls.append(stack.enter_context(serve(app, port)))
            bob_http = await stack.enter_async_context(
                httpx2.AsyncClient(headers={"authorization": "Bearer bob-token"}, timeout=30)
            )
            alice_http = await stack.enter_async_context(
                httpx2.AsyncClient(headers={"authorization": "Bearer alice-token"}, timeout=30)
            )
            bob = RawSession(urls[0], bob_http)
            await bob.open()
            assert bob.session_id is not None
            for url in urls[::-1]:
                response = await alice_http.post(
                    url,
                    json={"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
                    headers=bob.headers(),
                )
                assert response.status_code == 404, response.text
            assert text_of(await ping(bob, urls[1], 6)) == "pong from w2"


def client_params() -> InitializeRequestParams:
    """The initialize parameters of the test client."""
    return InitializeRequestParams.model_validate(INITIALIZE["params"], by_name=False)


class Tokens:
    """Two bearer tokens."""

    async def verify_token(self, token: str) -> AccessToken | None:
        """alice-token and bob-token; nothing else."""
        if token not in {"alice-token", "bob-token"}:
            return None
        return AccessToken(token=token, client_id=token, scopes=[], subject=token)


# -- the Redis event store ---------------------------------------------------------------------

needs_redis = pytest.mark.skipif(REDIS_URL is None, reason="needs MCP_CORE_REDIS_URL")


def log_line(text: str) -> JSONRPCMessage:
    """A log notification carrying ``text``."""
    return JSONRPCNotification(
        jsonrpc="2.0", method="notifications/message", params={"level": "info", "data": text}
    )


def response(request_id: int, text: str = "") -> JSONRPCMessage:
    """A JSON-RPC response carrying ``text``."""
    return JSONRPCResponse(jsonrpc="2.0", id=request_id, result={"text": text})


@asynccontextmanager
async def redis_events(**bounds: Any) -> AsyncIterator[tuple[RedisEventStore, RedisStore]]:
    """A Redis event store in a namespace of its own (removed afterwards)."""
    assert REDIS_URL is not None
    async with RedisStore(REDIS_URL, namespace=f"events-{secrets.token_hex(4)}") as store:
        events = RedisEventStore(store, key=b"k" * 32, **bounds)
        try:
            yield events, store
        finally:
            await events.settle()  # end_session's deletions, before the store closes
            await store.delete_prefix("")


async def replayed(
    store: RedisEventStore, session: str, event_id: str
) -> tuple[str | None, list[EventMessage]]:
    """What a replay of ``event_id`` for ``session`` returns and sends."""
    sent: list[EventMessage] = []

    async def send(message: EventMessage) -> None:
        sent.append(message)

    stream = await store.replay_events_after(session, event_id, send)
    return stream, sent


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from("ab"),
        st.sampled_from(["1", "2", "_GET_stream"]),
        st.none() | st.integers(0, 9),
    ),
    max_size=20,
)


@needs_redis
class TestRedisEvents:
    """The SessionEventStore laws for the events every worker shares."""

    @settings(max_examples=25, deadline=None)
    @given(OPERATIONS)
    async def test_owned_and_after(self, operations: list[tuple[str, str, int | None]]) -> None:
        """events.owned and events.after, as for the in-memory store."""
        async with redis_events(follow=0) as (events, _):
            streams: dict[tuple[str, str], list[tuple[str, JSONRPCMessage | None]]] = {}
            for session, stream, request_id in operations:
                message = None if request_id is None else response(request_id, session + stream)
                event_id = await events.store_event(session, stream, message)
                streams.setdefault((session, stream), []).append((event_id, message))
            for (session, stream), stored in streams.items():
                for index, (event_id, _) in enumerate(stored):
                    got, sent = await replayed(events, session, event_id)
                    assert got == stream
                    later = [(i, m) for i, m in stored[index + 1 :] if m is not None]
                    assert [(m.event_id, m.message) for m in sent] == later
                    other = "b" if session == "a" else "a"
                    assert await replayed(events, other, event_id) == (None, [])

    async def test_ended_and_bounded(self) -> None:
        """events.ended and events.bounded: a session keeps its newest max_events events."""
        async with redis_events(max_events=3, max_event_bytes=600) as (events, store):
            ids = [await events.store_event("a", "1", response(n)) for n in range(5)]
            big = await events.store_event("a", "1", response(9, "x" * 1000))
            assert (await replayed(events, "a", ids[0]))[0] is None  # trimmed
            stream, sent = await replayed(events, "a", ids[2])
            assert (stream, [m.event_id for m in sent]) == ("1", ids[3:])
            assert big not in [m.event_id for m in sent]  # larger than an event may be: not kept
            events.end_session("a")
            assert await replayed(events, "a", ids[3]) == (None, [])
            await events.settle()  # the list's deletion, started by end_session, is done
            assert await store.client.exists(store.key("events:a")) == 0

    async def test_a_request_stream_is_followed_to_its_answer(self) -> None:
        """A resume of a request still running (here or elsewhere) delivers what comes, to the answer."""
        async with redis_events() as (events, _):
            priming = await events.store_event("a", "1", None)
            sent: list[EventMessage] = []

            async def send(message: EventMessage) -> None:
                sent.append(message)

            async def later() -> None:
                await anyio.sleep(0.2)
                await events.store_event("a", "GET", response(8))  # another stream: not sent
                await events.store_event("a", "1", log_line("3..."))
                await anyio.sleep(0.3)
                await events.store_event("a", "1", response(1, "lift-off"))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(later)
                with anyio.fail_after(30):
                    stream = await events.replay_events_after("a", priming, send)
        assert stream == "1"
        assert [m.message for m in sent] == [log_line("3..."), response(1, "lift-off")]

    async def test_entries_written_without_the_secret_are_not_replayed(self) -> None:
        """Entries pushed into a session's list by hand, or copied from another's: skipped."""
        async with redis_events(follow=0) as (events, store):
            first = await events.store_event("a", "1", None)
            await events.store_event("b", "1", response(1, "b's secret"))
            client = store.client
            b_entries = await client.lrange(store.key("events:b"), 0, -1)
            forged = json.dumps(
                {
                    "id": "x",
                    "stream": "1",
                    "data": response(2, "forged").model_dump_json(),
                    "at": 2**50,
                }
            ).encode()
            await client.rpush(store.key("events:a"), b"0" * 64 + forged, *b_entries)
            assert await replayed(events, "a", first) == ("1", [])


async def test_a_redis_that_does_not_answer_costs_events_their_replay_only() -> None:
    """Redis down: an event is still given its id (sent live), and a replay finds nothing."""
    async with RedisStore("redis://127.0.0.1:1/0", timeout=0.3, connect_timeout=0.3) as store:
        events = RedisEventStore(store, key=b"k" * 32)
        first = await events.store_event("a", "1", None)
        await events.store_event("a", "1", response(1))
        assert await replayed(events, "a", first) == (None, [])
