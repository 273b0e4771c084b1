"""examples/drupal end to end: one plugin factory, per-URI access, the rounds, stdio and HTTP.

Each need is shown over streamable HTTP (bearer tokens) and over stdio (``SITE_USER``, as drush
runs it), with the official client in both eras.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.clients import Inbox, bearer, stdio, text
from tests.examples.conftest import EXAMPLES, running_script

SERVER = EXAMPLES / "drupal" / "drupal_site.py"
ANN, BOB = secrets.token_urlsafe(16), secrets.token_urlsafe(16)

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The site over streamable HTTP, with a token for ann (editor) and one for bob."""
    with running_script(SERVER, env={"SITE_TOKENS": f"{ANN}=ann,{BOB}=bob"}) as base:
        yield f"{base}/mcp"


def confirming() -> Inbox:
    """A user who confirms every question."""
    return Inbox(form={"confirm": True})


@asynccontextmanager
async def over_stdio(user: str, mode: str, inbox: Inbox, **options: Any) -> AsyncIterator[Client]:
    """``mcp-core run examples/drupal/drupal_site.py`` as ``SITE_USER=user`` (drush's account)."""
    target = stdio(SERVER, env={"SITE_USER": user})
    async with inbox.client(target, mode=mode, **options) as client:
        yield client


Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture(params=["http", "stdio"])
def site(request: pytest.FixtureRequest, mode: str) -> Connect:
    """``site(user, inbox, **options)``: a client acting as ``user``, over HTTP or stdio.

    Over HTTP the account is the bearer token's subject (the module's one server); over stdio
    it is ``SITE_USER`` of a server process of its own, as drush runs it.
    """
    if request.param == "stdio":
        return lambda user, inbox, **options: over_stdio(user, mode, inbox, **options)
    url: str = request.getfixturevalue("url")
    tokens = {"ann": ANN, "bob": BOB}
    return lambda user, inbox, **options: bearer(url, tokens[user], inbox, mode=mode, **options)


async def test_one_factory_per_plugin_access_and_a_broken_plugin(site: Connect) -> None:
    """Ann (editor) and bob see what each plugin allows; the misconfigured plugin cost only itself."""
    async with site("ann", confirming()) as ann, site("bob", confirming()) as bob:
        ann_tools = {tool.name for tool in (await ann.list_tools()).tools}
        bob_tools = {tool.name for tool in (await bob.list_tools()).tools}
        with pytest.raises(MCPError) as hidden:
            await bob.call_tool("content_export", {})
        status = "\n".join(json.loads(text(await ann.call_tool("plugin_status", {}))))
        echoed = await bob.call_tool("echo", {"message": "hi", "_trace": "t-1"})
    assert ann_tools == {"echo", "describe", "content_export", "plugin_status"}
    assert bob_tools == {"echo", "describe", "plugin_status"}
    assert (hidden.value.code, hidden.value.message) == (-32602, "Unknown tool: content_export")
    assert "'content search' may only use letters" in status  # skipped alone, said why
    assert text(echoed) == "echo: hi"  # the plugin's own filter dropped _trace


async def test_access_is_checked_on_the_concrete_uri(site: Connect, mode: str) -> None:
    """node://2 (ann's draft): ann reads, subscribes and completes it; for bob it is missing."""
    ref = types.ResourceTemplateReference(uri="node://2")
    async with site("ann", confirming()) as ann, site("bob", confirming()) as bob:
        mine = text(await ann.read_resource("node://2"))
        published = text(await bob.read_resource("node://1"))
        with pytest.raises(MCPError) as draft:
            await bob.read_resource("node://2")
        completed = await ann.complete(ref, {"name": "nid", "value": ""})
        with pytest.raises(MCPError) as completion:
            await bob.complete(ref, {"name": "nid", "value": ""})
        if mode == "legacy":
            await ann.subscribe_resource("node://2")
            with pytest.raises(MCPError) as subscription:
                await bob.subscribe_resource("node://2")
            assert subscription.value.error.message == "Resource not found"
    assert (mine, published) == ("Ann's draft", "Welcome")
    assert draft.value.error.message == "Resource not found"
    assert completed.completion.values == ["1", "2", "3"]
    assert completion.value.error.code == -32602


async def test_a_plugin_returns_its_definition_and_talks_once_per_step(site: Connect) -> None:
    """Describe returns its own schema and meta; content_export's logs and progress arrive once."""
    inbox = confirming()
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async with site("ann", inbox, log_level="debug") as ann:
        described = await ann.call_tool("describe", {})
        exported = await ann.call_tool("content_export", {}, progress_callback=on_progress)
    assert not described.is_error
    assert described.structured_content == {
        "input_schema": {"type": "object"},
        "meta": {"drupal": {"plugin": "DescribeTool", "config": "describe"}},
    }
    assert text(exported) == "exported 3 nodes"
    assert inbox.asked == ["Export 3 nodes?"]
    assert inbox.logs == ["preparing the export", "export written"]
    assert reports == [1, 2]


async def test_a_stdio_run_as_the_drush_account(mode: str) -> None:
    """Over stdio the account is SITE_USER: bob's view, and a call instantiates one plugin."""
    async with over_stdio("bob", mode, confirming()) as bob:
        echoed = await bob.session.send_request(
            types.CallToolRequest(
                params=types.CallToolRequestParams(name="echo", arguments={"message": "x"})
            ),
            types.CallToolResult,
        )
        before_list = json.loads(text(await bob.call_tool("plugin_status", {})))
        tools = {tool.name for tool in (await bob.list_tools()).tools}
        with pytest.raises(MCPError):
            await bob.read_resource("node://2")
    assert text(echoed) == "echo: x"
    assert before_list[-1] == "created: ['echo']"  # per-name: the call built only its plugin
    assert tools == {"echo", "describe", "plugin_status"}
