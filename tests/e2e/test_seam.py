"""The seam end to end: asking the client, per-name dispatch and resolution, on real transports.

Every test runs over stdio (``mcp-core run`` as a subprocess) and streamable HTTP (``mcp-core run
--transport http`` on a free loopback port), with the official client in its default mode, which
negotiates 2026-07-28 (questions travel in ``InputRequiredResult`` rounds), and in legacy mode
(2025-11-25: standalone server-to-client requests).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from mcp_core.sources import CachedSource, DiscoverySource
from mcp_core.stores import SqliteStore
from tests.clients import Inbox, call, ok_text, stdio, text

SERVERS = Path(__file__).resolve().parent / "servers"
GATEWAY = SERVERS / "gateway_server.py"
RESOLUTION = SERVERS / "resolution_server.py"
MODERN, LEGACY = "2026-07-28", "2025-11-25"
ROOT_URI = "file:///srv/project"  # the one root the client lists

pytestmark = [
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
    pytest.mark.parametrize("transport", ["stdio", "http"]),
    pytest.mark.parametrize("mode", ["auto", "legacy"]),
]


# -- the client's side ---------------------------------------------------------------------------


def user() -> Inbox:
    """The client's side: a model answering upper-cased, a user named ann, one root."""
    return Inbox(reply=str.upper, form={"name": "ann"}, roots=[ROOT_URI])


# -- the server's side ---------------------------------------------------------------------------


ServeHttp = Callable[..., AbstractContextManager[str]]


@asynccontextmanager
async def connect(
    server: Path,
    transport: str,
    mode: str,
    serve_http: ServeHttp,
    env: dict[str, str] | None = None,
    *,
    inbox: Inbox | None = None,
) -> AsyncIterator[Client]:
    """A connected official client of a fresh ``server`` over ``transport`` in ``mode``."""
    inbox = inbox or user()
    if transport == "stdio":
        async with inbox.client(stdio(server, env=env), mode=mode) as client:
            yield client
        return
    with serve_http(server, env=env) as url:
        async with inbox.client(url, mode=mode) as client:
            yield client


def era(mode: str) -> str:
    """The protocol version each client mode negotiates with mcp-core."""
    return MODERN if mode == "auto" else LEGACY


# -- asking the client ---------------------------------------------------------------------------


class TestAskingTheClient:
    """One handler code path gets the client's answers in both eras."""

    async def test_a_handler_object_samples_elicits_and_lists_roots(
        self, transport: str, mode: str, serve_http: ServeHttp
    ) -> None:
        """Sampling, form and URL elicitation and roots all come back to the ToolHandler."""
        inbox = user()
        async with connect(GATEWAY, transport, mode, serve_http, inbox=inbox) as client:
            before = await call(client, "runs")
            result = await client.call_tool("assistant", {"question": "what?"})
            after = await call(client, "runs")
        answers = json.loads(ok_text(result))
        assert answers == {
            "sampled": "WHAT?",
            "form": {"action": "accept", "content": {"name": "ann"}},
            "url": "accept",
            "roots": [ROOT_URI],
            "protocol": era(mode),
            "tool": "assistant",
        }
        assert inbox.opened == ["https://example.com/login"]
        # 2026-07-28 runs the handler again for each question (four), then once to finish.
        assert after["assistant"] - before["assistant"] == (5 if mode == "auto" else 1)

    async def test_prompts_and_resources_ask_too(
        self, transport: str, mode: str, serve_http: ServeHttp
    ) -> None:
        """prompts/get elicits and resources/read samples, in both eras."""
        async with connect(GATEWAY, transport, mode, serve_http) as client:
            prompt = await client.get_prompt("interview", {"topic": "tea"})
            read = await client.read_resource("seam://summary/tea")
        assert text(prompt) == "Interview ann about tea."
        assert read.contents[0].text == "seam://summary/tea: TEA"  # type: ignore[union-attr]  # text


# -- per-name dispatch ---------------------------------------------------------------------------


class TestPerNameDispatch:
    """One container service behind several tools learns which one was called."""

    async def test_one_service_serves_every_operation(
        self, transport: str, mode: str, serve_http: ServeHttp
    ) -> None:
        """list_books and get_book reach the same service, each with its own ref and definition."""
        async with connect(GATEWAY, transport, mode, serve_http) as client:
            listed = json.loads(ok_text(await client.call_tool("list_books", {})))
            got = json.loads(ok_text(await client.call_tool("get_book", {"id": 7})))
            counts = await call(client, "runs")
        assert (listed["operation"], listed["description"]) == ("list_books", "List the books.")
        assert (got["operation"], got["description"], got["arguments"]) == (
            "get_book",
            "Get one book.",
            {"id": 7},
        )
        assert listed["service"] == got["service"]
        assert counts["container_gets"] == 1  # resolved once, shared by every element


# -- per-name resolution -------------------------------------------------------------------------


class TestPerNameResolution:
    """Calls, gets and reads before any full load touch only the sources they need."""

    async def test_one_call_builds_one_prefixed_lazy_plugin(
        self, transport: str, mode: str, serve_http: ServeHttp, tmp_path: Path
    ) -> None:
        """alpha_hello builds alpha alone; beta is built only when everything is listed."""
        env = {"SEAM_CACHE": str(tmp_path / "cache.db")}
        async with connect(RESOLUTION, transport, mode, serve_http, env) as client:
            hello = await client.session.send_request(
                types.CallToolRequest(params=types.CallToolRequestParams(name="alpha_hello")),
                types.CallToolResult,
            )
            after_call = await call(client, "built")
            greeting = await client.get_prompt("alpha_greet", {"who": "bo"})
            after_get = await call(client, "built")
            await client.list_tools()
            after_list = await call(client, "built")
        assert ok_text(hello) == "hello from alpha"
        assert text(greeting) == "alpha greets bo"
        assert after_call == after_get == {"alpha": 1, "beta": 0}
        assert after_list == {"alpha": 1, "beta": 1}  # the full load builds the rest, once each

    async def test_a_full_discovery_cache_imports_only_what_is_called(
        self,
        transport: str,
        mode: str,
        serve_http: ServeHttp,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Capabilities, the list and a call import nothing but the called tool's module."""
        cache = tmp_path / "cache.db"
        monkeypatch.syspath_prepend(str(SERVERS))
        store = SqliteStore(cache)
        # A build step fills the cache with the deployment's secret, as the server reads it.
        secret = b"seam-deployment-cache-secret"  # resolution_server.CACHE_SECRET
        filler = CachedSource(DiscoverySource(["seam_plugins"]), store, key="seam", secret=secret)
        await filler.provide()
        await store.aclose()
        env = {"SEAM_CACHE": str(cache)}
        async with connect(RESOLUTION, transport, mode, serve_http, env) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            listed = await call(client, "imported")
            result = await client.call_tool("first_plugin_tool", {"x": 1})
            called = await call(client, "imported")
        assert {"first_plugin_tool", "second_plugin_tool"} <= tools
        assert listed == []
        assert result.structured_content == {"result": 2}
        assert called == ["seam_plugins", "seam_plugins.one"]

    async def test_equally_specific_templates_resolve_by_priority(
        self, transport: str, mode: str, serve_http: ServeHttp, tmp_path: Path
    ) -> None:
        """seam://doc/{zz} (priority 10) answers, not seam://doc/{aa} (priority -10, first by text)."""
        env = {"SEAM_CACHE": str(tmp_path / "cache.db")}
        async with connect(RESOLUTION, transport, mode, serve_http, env) as client:
            read = await client.read_resource("seam://doc/x")
        assert read.contents[0].text == "high: ['x']"  # type: ignore[union-attr]  # text contents
