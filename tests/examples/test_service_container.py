"""examples/service_container end to end: container-id handlers and a registry of the bundle's own.

Over stdio (``mcp-core run``) and streamable HTTP, with the official client in both eras: the
bundle's ``TraceableRegistry`` is served on the lazy path (a call resolves its one element by
name; only a list loads the catalogue), and each handler is a container id whose service is
built, with its dependencies, by dependency-injector when first called.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager

import pytest
from mcp import Client

from tests.clients import MCP_CORE, ROOT, WAIT, call, ok_text, send_call, stdio, text, tool_names
from tests.examples.conftest import EXAMPLES

SERVER = EXAMPLES / "service_container" / "bundle_server.py"
ENV = {"SHOP_TIMEZONE": "Asia/Tokyo"}

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

ServeHttp = Callable[..., AbstractContextManager[str]]


@asynccontextmanager
async def bundle(transport: str, mode: str, serve_http: ServeHttp) -> AsyncIterator[Client]:
    """A fresh server process over ``transport`` (what it built is the point)."""
    if transport == "stdio":
        async with Client(stdio(SERVER, env=ENV), mode=mode) as client:
            yield client
        return
    with serve_http(SERVER, env={**os.environ, **ENV}) as url:
        async with Client(url, mode=mode) as client:
            yield client


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_registry_stays_lazy_and_services_are_built_when_called(
    transport: str, mode: str, serve_http: ServeHttp
) -> None:
    """A call resolves one element and builds its service; a list loads; nothing else is built."""
    async with bundle(transport, mode, serve_http) as client:
        capabilities = client.server_capabilities
        stock = ok_text(await send_call(client, "stock_level", {"sku": "A-1"}))
        first = await call(client, "mcp_profile")
        hours = text(await client.read_resource("shop://opening-hours"))
        note = text(await client.get_prompt("restock_note", {"supplier": "ACME"}))
        unknown = await send_call(client, "stock_level", {"sku": "Z-9"})
        before_list = await call(client, "mcp_profile")
        tools = await tool_names(client)
        after_list = await call(client, "mcp_profile")
    # Capabilities come from kinds(), answered without loading anything.
    assert capabilities.tools is not None
    assert capabilities.prompts is not None
    assert capabilities.resources is not None
    assert stock == "A-1: 12 in stock"
    assert first == {
        "calls": ["get_tool stock_level", "get_tool mcp_profile"],
        "loaded": False,
        "built": ["inventory", "stock"],  # stock_level's service and its dependency, no other
    }
    assert hours == "9:00-18:00 (Asia/Tokyo)"  # the service got the container's configuration
    assert note == "Write a restocking note to ACME for ['B-2']."
    assert unknown.is_error
    assert text(unknown) == "there is no article Z-9"
    assert before_list["loaded"] is False
    assert before_list["built"] == ["inventory", "stock", "hours", "restock"]
    assert "load" not in before_list["calls"]
    assert "tools" not in before_list["calls"]
    assert tools == {"stock_level", "mcp_profile"}
    assert after_list["loaded"] is True
    assert "tools" in after_list["calls"]


def test_the_console_lists_the_bundle_without_serving() -> None:
    """``mcp-core inspect --strict`` (the bundle's ``debug:mcp``): every element, every id resolves."""
    shown = subprocess.run(  # noqa: S603 -- our own console script
        [str(MCP_CORE), "inspect", str(SERVER), "--strict"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=WAIT,
    ).stdout
    assert "server 'shop-bundle' 1.0.0" in shown
    for name in ("stock_level", "mcp_profile", "shop://opening-hours", "restock_note"):
        assert name in shown
    assert "diagnostics (0)" in shown
    assert "problems found ahead of time (0)" in shown


def test_the_bundle_registry_is_certified_by_the_conformance_kit() -> None:
    """The kit, run as its README says on the example's factory: every registry law passes."""
    run = subprocess.run(  # noqa: S603 -- this interpreter's pytest, our own kit
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"),
            *("--mcp-conformance", "--mcp-registry=bundle_registry:make_registry"),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=SERVER.parent,
        timeout=10 * WAIT,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 FAIL, 0 N/A, 0 NOT RUN - certified" in run.stdout
