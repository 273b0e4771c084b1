"""examples/metadata_api end to end: 10,000 operations, one container service, per-name calls."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_core.elements import ElementKind, ElementRef
from tests.clients import ROOT, call, send_call, stdio, text, tool_names

EXAMPLE = ROOT / "examples" / "metadata_api"

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

KINDS = ("list", "get", "create", "update", "delete")
ServeHttp = Callable[..., AbstractContextManager[str]]


async def test_one_call_builds_one_operation_and_one_service_serves_all(
    mode: str, serve_http: Callable[..., AbstractContextManager[str]]
) -> None:
    """A call builds its operation alone; a miss builds nothing; listing builds the 10,000."""
    with serve_http(EXAMPLE / "bookstore_api.py") as url:
        async with Client(url, mode=mode) as client:
            created = await call(
                client, "book_create", {"title": "Dune", "author_id": 1, "year": 1965}
            )
            after_call = await call(client, "api_stats")
            with pytest.raises(MCPError) as unknown:
                await call(client, "book_frobnicate", {"id": 1})
            after_miss = await call(client, "api_stats")
            invalid = await send_call(client, "book_get", {"id": "one"})
            # The official client's own call: it lists every tool afterwards (output schemas).
            got = await client.call_tool("book_get", {"id": created["id"]})
            missing = await client.call_tool("ledger_01997_get", {"id": 5})
            # The client's check lists only the first page; this tool is not on it.
            changed = await client.call_tool(
                "ledger_01997_create", {"code": "A-1", "quantity": 3, "price": 9.5}
            )
            after_list = await call(client, "api_stats")
    assert created == {"id": 1, "title": "Dune", "author_id": 1, "year": 1965}
    assert after_call == {"operations_declared": 10_000, "operations_built": 1}
    assert (unknown.value.code, unknown.value.message) == (-32602, "Unknown tool: book_frobnicate")
    assert invalid.is_error  # SEP-1303: a tool execution error the model can correct
    assert (
        text(invalid) == "tool 'book_get': invalid arguments: /id: 'one' is not of type 'integer'"
    )
    assert after_miss == after_call  # an unknown name builds nothing
    assert json.loads(text(got)) == created
    assert missing.is_error
    assert text(missing) == "there is no ledger 1997 entry with id 5"
    assert json.loads(text(changed))["code"] == "A-1"
    assert after_list == {"operations_declared": 10_000, "operations_built": 10_000}


def test_lookup_agrees_with_the_full_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    """The builder's one operation equals the catalogue's (law source.lookup-agrees), misses too."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    from bookstore_metadata import bookstore_metadata
    from bookstore_services import OperationBuilder

    index = bookstore_metadata(resources=4)
    everything = OperationBuilder(index).everything()
    builder = OperationBuilder(index)
    names = [tool.name for tool in everything.tools] + ["book_frobnicate", "nobody_get", "get"]
    for name in names:
        ref = ElementRef(ElementKind.TOOL, name)
        assert builder.one(ref) == everything.get(ref), name
    assert builder.one(ElementRef(ElementKind.PROMPT, "book_get")) is None
    assert len(everything) == 20


@asynccontextmanager
async def bookstore(
    transport: str, env: Mapping[str, str], mode: str, serve_http: ServeHttp
) -> AsyncIterator[Client]:
    """A fresh ``mcp-core run bookstore_api.py`` process over ``transport``, configured by ``env``."""
    if transport == "stdio":
        async with Client(stdio(EXAMPLE / "bookstore_api.py", env=env), mode=mode) as client:
            yield client
        return
    with serve_http(EXAMPLE / "bookstore_api.py", env={**os.environ, **env}) as url:
        async with Client(url, mode=mode) as client:
            yield client


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_catalogue_is_cached_across_restarts_until_the_metadata_changes(
    transport: str, mode: str, tmp_path: Path, serve_http: ServeHttp
) -> None:
    """Cold: a list builds every operation. Warm: nothing is built. Metadata changed: built afresh."""
    env = {"API_CACHE_DIR": str(tmp_path), "API_CACHE_SECRET": "", "API_RESOURCES": "20"}
    book = {"title": "Dune", "author_id": 1, "year": 1965}
    async with bookstore(transport, env, mode, serve_http) as cold:
        cold_tools = await tool_names(cold)
        cold_stats = await call(cold, "api_stats")
    async with bookstore(transport, env, mode, serve_http) as warm:
        warm_tools = await tool_names(warm)
        created = await call(warm, "book_create", book)  # the container-id handler, from the cache
        warm_stats = await call(warm, "api_stats")
    grown = {**env, "API_RESOURCES": "21"}  # the metadata changed: one more resource
    async with bookstore(transport, grown, mode, serve_http) as changed:
        changed_tools = await tool_names(changed)
        changed_stats = await call(changed, "api_stats")
    async with bookstore(transport, grown, mode, serve_http) as again:
        again_tools = await tool_names(again)
        again_stats = await call(again, "api_stats")
    assert len(cold_tools) == 101  # 20 resources, five operations each, and api_stats
    assert cold_stats == {"operations_declared": 100, "operations_built": 100}
    assert warm_tools == cold_tools
    assert created == {"id": 1, **book}
    assert warm_stats == {"operations_declared": 100, "operations_built": 0}
    assert changed_tools - cold_tools == {f"ledger_00018_{kind}" for kind in KINDS}
    assert changed_stats == {"operations_declared": 105, "operations_built": 105}
    assert again_tools == changed_tools
    assert again_stats == {"operations_declared": 105, "operations_built": 0}


def test_a_fingerprint_follows_the_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache key's input: equal metadata, equal fingerprint; any change, another."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    from bookstore_metadata import bookstore_metadata

    assert bookstore_metadata(resources=20).fingerprint() == bookstore_metadata(20).fingerprint()
    assert bookstore_metadata(resources=20).fingerprint() != bookstore_metadata(21).fingerprint()
