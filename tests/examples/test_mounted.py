"""examples/mounted end to end: MCP inside a FastAPI app, signed in with the app's own sessions."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.clients import call
from tests.e2e._http import ACCEPT, INITIALIZE, LEGACY
from tests.examples.conftest import EXAMPLES, running_script

APP = EXAMPLES / "mounted" / "notes_webapp.py"
PASSWORDS = {"alice": "wonderland", "bob": "builder"}

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """The Notes application, as its docs page starts it."""
    with running_script(APP) as url:
        yield url


@asynccontextmanager
async def signed_in(base: str, user: str) -> AsyncIterator[httpx2.AsyncClient]:
    """An HTTP client holding ``user``'s session cookie, as a browser would after the login form."""
    async with httpx2.AsyncClient(base_url=base) as http:
        response = await http.post("/login", json={"username": user, "password": PASSWORDS[user]})
        assert response.status_code == 200, response.text
        yield http


@asynccontextmanager
async def mcp_client(base: str, user: str, mode: str) -> AsyncIterator[Client]:
    """The official client at ``/mcp`` with ``user``'s session cookie."""
    async with (
        signed_in(base, user) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


async def test_visibility_and_data_follow_the_signed_in_user(base: str, mode: str) -> None:
    """Alice (admin) sees all_notes; Bob neither sees nor calls it; each adds to their own notes."""
    async with mcp_client(base, "alice", mode) as alice, mcp_client(base, "bob", mode) as bob:
        alice_tools = {tool.name for tool in (await alice.list_tools()).tools}
        bob_tools = {tool.name for tool in (await bob.list_tools()).tools}
        added = await call(alice, "add_note", {"text": f"call mum ({mode})"})
        bobs = await call(bob, "my_notes")
        with pytest.raises(MCPError) as hidden:
            await call(bob, "all_notes")
        everyone = await call(alice, "all_notes")
    assert alice_tools == {"my_notes", "add_note", "all_notes"}
    assert bob_tools == {"my_notes", "add_note"}
    assert added[-1] == f"call mum ({mode})"
    assert bobs == ["fix the fence"]
    assert (hidden.value.code, hidden.value.message) == (-32602, "Unknown tool: all_notes")
    assert f"call mum ({mode})" in everyone["alice"]


async def test_visitors_and_signed_out_users_are_refused(base: str) -> None:
    """No session cookie, or one that was signed out: 401 before any MCP request is read."""
    headers = {"accept": ACCEPT, "mcp-protocol-version": LEGACY}
    async with httpx2.AsyncClient(base_url=base) as visitor:
        anonymous = await visitor.post("/mcp", json=INITIALIZE, headers=headers)
    async with signed_in(base, "bob") as bob:
        await bob.post("/logout")
        signed_out = await bob.post("/mcp", json=INITIALIZE, headers=headers)
    assert (anonymous.status_code, signed_out.status_code) == (401, 401)


async def test_a_cookie_captured_before_logout_opens_nothing(base: str) -> None:
    """Attacker: an anonymous client replaying a cookie it captured before the user signed out.

    Before: the cookie held the user name itself, so a copy stayed valid after logout. Now the
    sign-in is forgotten at logout: the copy gets 401 from the app and from /mcp.
    """
    headers = {"accept": ACCEPT, "mcp-protocol-version": LEGACY}
    async with signed_in(base, "bob") as bob:
        captured = dict(bob.cookies.items())
        assert (await bob.get("/notes")).status_code == 200
        await bob.post("/logout")
    async with httpx2.AsyncClient(base_url=base, cookies=captured) as attacker:
        notes = await attacker.get("/notes")
        opened = await attacker.post("/mcp", json=INITIALIZE, headers=headers)
    assert (notes.status_code, opened.status_code) == (401, 401)


async def test_a_signed_in_browser_lends_nothing(base: str) -> None:
    """Another user's session id, a foreign Origin or Host: refused even with a valid cookie."""
    headers = {"accept": ACCEPT, "mcp-protocol-version": LEGACY}
    async with signed_in(base, "alice") as alice, signed_in(base, "bob") as bob:
        opened = await alice.post("/mcp", json=INITIALIZE, headers=headers)
        alices_session = opened.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        hijack = await bob.post(
            "/mcp", json=ping, headers={**headers, "mcp-session-id": alices_session}
        )
        cross_site = await alice.post(
            "/mcp", json=INITIALIZE, headers={**headers, "origin": "http://evil.example"}
        )
        rebound = await alice.post(
            "/mcp", json=INITIALIZE, headers={**headers, "host": "evil.example"}
        )
        own = await alice.post(
            "/mcp", json=ping, headers={**headers, "mcp-session-id": alices_session}
        )
    assert opened.status_code == 200
    assert hijack.status_code == 404  # as if that session did not exist
    assert cross_site.status_code == 403
    assert rebound.status_code == 421
    assert own.status_code == 200


def test_says_where_it_serves() -> None:
    """Started as its docs page says (here on a free port), it names its URL, which answers."""
    process = subprocess.Popen(  # noqa: S603 -- this interpreter, running the example
        [sys.executable, str(APP), "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        said = re.fullmatch(
            r"notes: serving at (http://127\.0\.0\.1:\d+/) \(MCP endpoint: \1mcp; sign in with "
            r"POST /login first\); Ctrl-C stops it\n",
            line,
        )
        assert said is not None, line
        assert httpx2.get(f"{said[1]}notes").status_code == 401  # listening, and guarded
    finally:
        process.terminate()
        process.communicate(timeout=30)
