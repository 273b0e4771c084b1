"""examples/build_time end to end: a catalogue dumped at build time, two servers over it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from unittest import mock

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_core.handlers import _derive
from mcp_core.handlers._functions import shape_of
from tests.clients import MCP_CORE, call, text
from tests.examples.conftest import EXAMPLES

EXAMPLE = EXAMPLES / "build_time"
CATALOG = EXAMPLE / "catalog.json"

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

ServeHttp = Callable[..., AbstractContextManager[str]]


def dump(output: Path) -> None:
    """The build step, as its docs page runs it."""
    subprocess.run(  # noqa: S603 -- our own console script
        [str(MCP_CORE), "dump", str(EXAMPLE / "shop_elements.py"), "-o", str(output)],
        check=True,
        capture_output=True,
    )


def test_the_committed_catalogue_is_what_the_build_writes(tmp_path: Path) -> None:
    """catalog.json is the build artefact of shop_elements.py, not a hand-edited file."""
    dump(tmp_path / "catalog.json")
    built = json.loads((tmp_path / "catalog.json").read_text())
    assert built == json.loads(CATALOG.read_text())
    assert {record["handler"] for record in built["elements"]} >= {"shop_elements:quote"}


@pytest.fixture
def storefront(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The storefront module, imported fresh, with the handlers' module not imported yet."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    for name in ("storefront", "shop_elements"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import storefront

    yield storefront
    sys.modules.pop("shop_elements", None)


async def test_start_up_discovers_and_derives_nothing(storefront: Any, mode: str) -> None:
    """Capabilities and every list come from the file: no handler module, no schema derivation."""
    derived = mock.Mock(wraps=shape_of)
    with mock.patch.object(_derive, "shape_of", derived):
        async with Client(storefront.app.server.lowlevel, mode=mode) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            resources = [str(r.uri) for r in (await client.list_resources()).resources]
            templates = await client.list_resource_templates()
            listed_without_import = "shop_elements" not in sys.modules
            quoted = await call(client, "quote", {"sku": "mug-02", "quantity": 2})
    assert tools == {"search_products", "quote"}
    assert resources == ["shop://policies"]
    assert [t.uri_template for t in templates.resource_templates] == ["shop://products/{sku}"]
    assert listed_without_import
    assert quoted == 24.0
    assert "shop_elements" in sys.modules  # imported by the call, to run the handler
    assert derived.call_count == 0


async def test_two_servers_share_one_catalogue(serve_http: ServeHttp, mode: str) -> None:
    """The storefront serves the public view as is; the back office everything, prefixed."""
    with (
        serve_http(EXAMPLE / "storefront.py") as store_url,
        serve_http(EXAMPLE / "backoffice.py") as office_url,
    ):
        async with Client(store_url, mode=mode) as store, Client(office_url, mode=mode) as office:
            store_tools = {tool.name for tool in (await store.list_tools()).tools}
            office_tools = {tool.name for tool in (await office.list_tools()).tools}
            found = await store.call_tool("search_products", {"query": "tea"})
            page = await store.read_resource("shop://products/tea-01")
            with pytest.raises(MCPError) as internal:
                await store.call_tool("refund", {"order_id": 7, "reason": "broken"})
            refunded = await office.call_tool("shop_refund", {"order_id": 7, "reason": "broken"})
            reply = await office.get_prompt("shop_support_reply", {"complaint": "late"})
            policies = await office.read_resource("shop+shop://policies")
    assert store_tools == {"search_products", "quote"}
    assert office_tools == {"shop_search_products", "shop_quote", "shop_refund"}
    assert found.structured_content == {"result": ["pot-03", "tea-01"]}
    assert json.loads(text(page))["name"] == "Green tea"
    assert (internal.value.code, internal.value.message) == (-32602, "Unknown tool: refund")
    assert text(refunded) == "order 7 refunded: broken"
    assert "late" in text(reply)
    assert text(policies).startswith("Delivery in 3 days.")


def stale_catalogue(folder: Path) -> Path:
    """The catalogue as an old build wrote it: ``quote`` named a function since renamed."""
    document = json.loads(CATALOG.read_text())
    (stale,) = [e for e in document["elements"] if e["definition"].get("name") == "quote"]
    stale["handler"] = "shop_elements:quote_v1"
    catalog = folder / "catalog.json"
    catalog.write_text(json.dumps(document))
    return catalog


def test_a_stale_catalogue_fails_the_deploy_check(tmp_path: Path) -> None:
    """``mcp-core inspect --strict`` (a deploy step) fails, naming the handler that is gone."""
    env = {**os.environ, "SHOP_CATALOG": str(stale_catalogue(tmp_path))}
    check = subprocess.run(  # noqa: S603 -- our own console script
        [str(MCP_CORE), "inspect", str(EXAMPLE / "storefront.py"), "--strict"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode != 0
    assert "shop_elements:quote_v1" in check.stdout + check.stderr


async def test_a_stale_catalogue_costs_only_its_element(
    serve_http: ServeHttp, mode: str, tmp_path: Path
) -> None:
    """Served anyway, only the stale tool fails (the log names its handler); the rest works."""
    env = {**os.environ, "SHOP_CATALOG": str(stale_catalogue(tmp_path))}
    with serve_http(EXAMPLE / "storefront.py", env=env) as url:
        async with Client(url, mode=mode) as client:
            with pytest.raises(MCPError) as failed:
                await client.call_tool("quote", {"sku": "mug-02"})
            found = await client.call_tool("search_products", {"query": "mug"})
    assert (failed.value.code, failed.value.message) == (-32603, "Internal error")
    assert found.structured_content == {"result": ["mug-02"]}


def test_catalogue_text_is_json() -> None:
    """The artefact is plain JSON a reviewer can diff: one element per record, schemas listed once."""
    document = json.loads(CATALOG.read_text())
    records = document["elements"]
    assert [r["definition"].get("name") or r["definition"].get("uri") for r in records][:2] == [
        "search_products",
        "quote",
    ]
    definition = dict(records[0]["definition"])
    for field in ("inputSchema", "outputSchema"):
        definition[field] = document["schemas"][definition[field]]
    assert isinstance(types.Tool.model_validate(definition), types.Tool)
