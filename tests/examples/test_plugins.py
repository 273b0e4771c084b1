"""examples/plugins end to end: entry-point plugins, the gateway, per-user access, bearer tokens."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx2
import jwt
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.clients import Inbox, bearer, text
from tests.examples.conftest import EXAMPLES, running_script

SERVER = EXAMPLES / "plugins" / "plugin_server.py"
SECRET = secrets.token_urlsafe(32)  # the deployment's signing secret, made per test run

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def token(user: str, *scopes: str, secret: str = SECRET, lifetime: int = 600, **claims: Any) -> str:
    """A token as the toolbox issues them (``plugin_server.py token``), or a forged variant.

    A negative ``lifetime`` makes a token that expired that many seconds ago.
    """
    now = int(time.time())
    body = {
        "iss": "toolbox",
        "aud": "toolbox-mcp",
        "sub": user,
        "scope": " ".join(scopes),
        "iat": now - max(-lifetime, 0) * 2,
        "exp": now + lifetime,
        **claims,
    }
    return jwt.encode(body, secret, algorithm="HS256")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The toolbox server, with the toolbox plugins installed (scripts/install does it)."""
    with running_script(SERVER, env={"TOOLBOX_JWT_SECRET": SECRET}) as base:
        yield f"{base}/mcp"


def user() -> Inbox:
    """A user whose model summarizes any text as 'A cat sat.' and who confirms every question."""
    return Inbox(reply=lambda prompt: "A cat sat.", form={"confirm": True})


def connect(
    url: str, bearer_token: str, mode: str, inbox: Inbox
) -> AbstractAsyncContextManager[Client]:
    """The official client with ``bearer_token`` as its token."""
    return bearer(url, bearer_token, inbox, mode=mode, log_level="debug")


async def test_each_user_sees_and_calls_what_the_plugins_allow(url: str, mode: str) -> None:
    """Alice (admin) sees the admin plugin and the status; Bob cannot see or call them."""
    async with (
        connect(url, token("alice", "admin"), mode, user()) as alice,
        connect(url, token("bob"), mode, user()) as bob,
    ):
        alice_tools = {tool.name for tool in (await alice.list_tools()).tools}
        bob_tools = {tool.name for tool in (await bob.list_tools()).tools}
        with pytest.raises(MCPError) as hidden:
            await bob.call_tool("purge_cache", {})
        status = text(await alice.call_tool("plugin_status", {}))
    assert alice_tools == {"summarize", "export_report", "purge_cache", "plugin_status"}
    assert bob_tools == {"summarize", "export_report"}
    assert (hidden.value.code, hidden.value.message) == (-32602, "Unknown tool: purge_cache")
    # The broken plugin cost only itself, and says why.
    assert "entry point 'translate'" in status
    assert "ModuleNotFoundError: No module named 'deepl'" in status


async def test_plugins_talk_to_the_client_through_the_gateway(url: str, mode: str) -> None:
    """Sampling, progress, logging and elicitation, with internal arguments filtered out."""
    alice = user()
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async with connect(url, token("alice", "admin"), mode, alice) as client:
        # `_trace` is not in the schema (additionalProperties: false); the plugin's filter drops it.
        summary = await client.call_tool("summarize", {"text": "The cat sat.", "_trace": "t-1"})
        exported = await client.call_tool(
            "export_report", {"rows": 120}, progress_callback=on_progress
        )
        purged = await client.call_tool("purge_cache", {})
    assert text(summary) == "summary: A cat sat."
    assert alice.sampled == ["Summarize: The cat sat."]
    assert text(exported) == "exported 120 rows in 3 batches"
    assert reports == [1, 2, 3]
    assert text(purged) == "purged"
    assert alice.asked == ["Purge every cached report?"]
    assert {"summarizing 12 characters", "exported batch 3 of 3"} <= set(alice.logs)


@pytest.mark.parametrize(
    "bearer",
    [
        token("mallory", "admin", secret=secrets.token_urlsafe(32)),
        token("alice", "admin", lifetime=-600),
        token("alice", "admin", aud="another-service"),
        "not-a-jwt",
    ],
    ids=["forged", "expired", "other-audience", "garbage"],
)
async def test_a_token_the_toolbox_did_not_issue_is_refused(url: str, bearer: str) -> None:
    """A forged, expired or foreign token gets 401 before any MCP request is read."""
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Authorization": f"Bearer {bearer}"},
        )
    assert response.status_code == 401
