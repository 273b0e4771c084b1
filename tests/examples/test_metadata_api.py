"""examples/metadata_api end to end: 10,000 operations, one container service, per-name calls."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_core.elements import ElementKind, ElementRef
from tests.clients import ROOT, call, send_call, text

EXAMPLE = ROOT / "examples" / "metadata_api"

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


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
