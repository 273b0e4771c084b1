"""One session cannot resume another's SSE streams: examples/everything.py attacked over HTTP.

The official client only ever resumes with the ids it was given, so these tests speak raw HTTP:
session A tries every way into session B's stream (guessed ids, the request id both use, B's own
event ids, B's ids after B is gone) while B's results carry a secret A must never see.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import httpx2
import pytest
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from mcp_core.app import App
from tests.e2e._http import Event, RawSession, answer_to, serve
from tests.e2e.conftest import EVERYTHING, free_port, serving_http

MARKER = "b-private-4417"  # what only session B may ever read


def carries(events: list[Event], needle: str) -> bool:
    """Whether any event's data contains ``needle``."""
    return any(needle in event.data for event in events)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """examples/everything.py answering every request with an SSE stream (``--responses sse``).

    Every answer then has a priming event and event ids: the most there is to attack. (By
    default a request that sends nothing before its answer is answered with JSON, no ids.)
    """
    with serving_http(EVERYTHING, "--responses", "sse") as url:
        yield url


@pytest.fixture
async def http(http_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    """One HTTP client (both sessions share the connection pool, as one attacker host would)."""
    async with httpx2.AsyncClient(timeout=10) as client:
        yield client


async def victim(http_url: str, http: httpx2.AsyncClient, request_id: int = 7) -> RawSession:
    """Session B, which gets a prompt carrying the secret as request ``request_id``."""
    b = RawSession(http_url, http)
    await b.open()
    events = await b.request(
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": MARKER, "arg2": "x"}},
        request_id=request_id,
    )
    assert carries(events, MARKER)
    return b


async def attacker(http_url: str, http: httpx2.AsyncClient) -> RawSession:
    """Session A, with one request of its own behind it."""
    a = RawSession(http_url, http)
    await a.open()
    await a.request("tools/call", {"name": "test_simple_text", "arguments": {}}, request_id=7)
    return a


class TestReplayStaysInItsSession:
    """GET with Last-Event-ID replays the asking session's own stream, never another's."""

    async def test_own_stream_resumes(self, http_url: str, http: httpx2.AsyncClient) -> None:
        """The control: a session resuming from its own priming event gets its own response."""
        a = RawSession(http_url, http)
        await a.open()
        events = await a.request(
            "prompts/get",
            {"name": "test_prompt_with_arguments", "arguments": {"arg1": "mine", "arg2": "x"}},
            request_id=3,
        )
        priming = events[0]
        assert priming.message is None
        status, replayed = await a.resume(priming.id, until=answer_to(3))
        assert status == 200
        assert carries(replayed, "mine")

    async def test_reused_request_id(self, http_url: str, http: httpx2.AsyncClient) -> None:
        """A and B both send request id 7: A resuming its stream 7 gets its own answer, not B's."""
        a = await attacker(http_url, http)
        await victim(http_url, http, request_id=7)
        priming_of_7 = a.event_ids[-2]  # A's last request: its priming event, then its response
        _, replayed = await a.resume(priming_of_7, until=lambda events: carries(events, MARKER))
        assert [event.message["id"] for event in replayed if event.message] == [7]
        assert carries(replayed, "This is a simple text response")
        assert not carries(replayed, MARKER)

    async def test_ids_from_another_session(self, http_url: str, http: httpx2.AsyncClient) -> None:
        """Every event id B received, replayed by A, replays nothing at all."""
        a = await attacker(http_url, http)
        b = await victim(http_url, http)
        for event_id in b.event_ids:
            status, replayed = await a.resume(event_id)
            assert status == 200
            assert replayed == [], event_id

    async def test_guessed_ids(self, http_url: str, http: httpx2.AsyncClient) -> None:
        """Counters, B's ids altered by one character, and junk: nothing of B's comes back."""
        a = await attacker(http_url, http)
        b = await victim(http_url, http)
        guesses = [str(n) for n in range(64)]
        for event_id in b.event_ids:
            guesses.append(event_id[:-1] + ("A" if event_id[-1] != "A" else "B"))
            guesses.append(event_id.upper())
        guesses += ["-1", "0x1", "1.0", "null", json.dumps(b.event_ids), "%" * 200]
        for guess in guesses:
            _, replayed = await a.resume(guess, until=lambda events: carries(events, MARKER))
            assert not carries(replayed, MARKER), guess

    async def test_after_the_owner_deletes(self, http_url: str, http: httpx2.AsyncClient) -> None:
        """Once B is deleted its ids replay nothing for A, and B's session id answers 404."""
        a = await attacker(http_url, http)
        b = await victim(http_url, http)
        gone = b.session_id
        assert await b.delete() == 200
        for event_id in b.event_ids:
            _, replayed = await a.resume(event_id)
            assert replayed == []
            status, replayed = await a.resume(event_id, session_id=gone)
            assert status == 404
            assert not carries(replayed, MARKER)


class Tokens:
    """Two bearer tokens."""

    async def verify_token(self, token: str) -> AccessToken | None:
        """alice-token and bob-token; nothing else."""
        if token not in {"alice-token", "bob-token"}:
            return None
        return AccessToken(token=token, client_id=token, scopes=[], subject=token)


async def test_a_stolen_session_id_is_useless_with_another_token() -> None:
    """With bearer auth, B's session id and event ids replay nothing for A's token: 404."""
    app = App("authed")

    @app.prompt
    def private(arg1: str) -> str:
        """Echo the argument."""
        return arg1

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(base),
        resource_server_url=AnyHttpUrl(f"{base}/mcp"),
        validate_token_resource=False,
    )
    with serve(app.asgi(token_verifier=Tokens(), auth=auth), port) as url:
        async with (
            httpx2.AsyncClient(headers={"authorization": "Bearer bob-token"}) as bob_http,
            httpx2.AsyncClient(headers={"authorization": "Bearer alice-token"}) as alice_http,
        ):
            bob = RawSession(url, bob_http)
            await bob.open()
            events = await bob.request(
                "prompts/get", {"name": "private", "arguments": {"arg1": MARKER}}
            )
            assert carries(events, MARKER)
            alice = RawSession(url, alice_http)
            for event_id in bob.event_ids:
                status, replayed = await alice.resume(event_id, session_id=bob.session_id)
                assert status == 404
                assert not carries(replayed, MARKER)
