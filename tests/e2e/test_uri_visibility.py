"""Per-URI visibility over HTTP: user 2 may read ``node://2`` but not ``node://1``; and updates.

The rule decides on the concrete URI and the variables a template read extracted
(:func:`~mcp_core.visibility.per_uri`); lists are unchanged. A URI the rule hides for a
session is, for that session, missing: the next visible template answers it, or nobody does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from mcp_core.app import App
from mcp_core.elements import ElementRef
from mcp_core.visibility import ElementVisibility, SessionInfo, all_of, per_uri, predicate
from tests.clients import Inbox
from tests.e2e._http import serve

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def owned(template: str) -> ElementVisibility:
    """Through ``template``, an id is readable only by the client whose name it is."""

    def own(ref: ElementRef, uri: str, variables: Mapping[str, str], session: SessionInfo) -> bool:
        return ref.key != template or variables.get("id") == session.attributes.get("client_name")

    return per_uri(own)


def node_app() -> App:
    """Nodes by id, a generic fallback for ``node://{id}/public``, and the per-URI rule."""
    app = App("nodes")

    @app.resource_template("node://{id}", mime_type="text/plain")
    def node(id: str) -> str:  # noqa: A002 -- the template variable
        """A user's node."""
        return f"node {id}"

    @app.resource_template("mirror://{+path}", mime_type="text/plain")
    def mirror(path: str) -> str:
        """A public mirror of anything."""
        return f"mirror {path}"

    @app.resource_template("mirror://{id}/private", mime_type="text/plain")
    def private(id: str) -> str:  # noqa: A002 -- the template variable
        """A user's private mirror entry; others fall through to the public mirror."""
        return f"private {id}"

    @app.completion(node, "id")
    def ids(value: str) -> list[str]:
        """Every id."""
        return ["1", "2"]

    app.visibility = all_of(owned("node://{id}"), owned("mirror://{id}/private"))
    return app


def text(result: types.ReadResourceResult) -> str:
    """The text of a one-content read."""
    (content,) = result.contents
    assert isinstance(content, types.TextResourceContents)
    return content.text


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_user_2_reads_node_2_only(mode: str) -> None:
    """node://2 reads, node://1 is not found; the template stays listed; mirrors fall through."""
    options: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
    info = types.Implementation(name="2", version="1")
    with serve(node_app().asgi()) as url:
        async with Client(url, client_info=info, **options) as client:
            templates = {
                t.uri_template for t in (await client.list_resource_templates()).resource_templates
            }
            mine = text(await client.read_resource("node://2"))
            with pytest.raises(MCPError) as theirs:
                await client.read_resource("node://1")
            own_private = text(await client.read_resource("mirror://2/private"))
            other_private = text(await client.read_resource("mirror://1/private"))
            ref = types.ResourceTemplateReference(uri="node://1")
            with pytest.raises(MCPError) as completion:
                await client.complete(ref, {"name": "id", "value": ""})
            if mode == "legacy":
                await client.subscribe_resource("node://2")
                with pytest.raises(MCPError) as subscribe:
                    await client.subscribe_resource("node://1")
                assert subscribe.value.error.code == -32002
    assert "node://{id}" in templates
    assert mine == "node 2"
    # SEP-2164: 2026-07-28 retired -32002; a missing resource is invalid params there.
    not_found = -32002 if mode == "legacy" else -32602
    assert (theirs.value.error.code, theirs.value.error.message) == (
        not_found,
        "Resource not found",
    )
    assert theirs.value.error.data == {"uri": "node://1"}
    assert own_private == "private 2"
    assert other_private == "mirror 1/private"  # the hidden template made way for the generic one
    assert completion.value.error.code == -32602


def watched_app(hidden: set[str]) -> App:
    """Two watched resources, hidden from client "bob" while their URI is in ``hidden``."""
    app = App("watched")

    @app.resource("test://open", mime_type="text/plain")
    def open_() -> str:
        """Visible to everyone."""
        return "open"

    @app.resource("test://closed", mime_type="text/plain")
    def closed() -> str:
        """Hidden from bob while hidden says so."""
        return "closed"

    @app.tool
    async def touch(uri: str) -> str:
        """Announce that ``uri`` changed; ``hide`` hides it from bob first."""
        await app.server.notify_resource_updated(uri)
        return uri

    @app.tool
    def hide(uri: str) -> str:
        """Hide ``uri`` from bob from now on."""
        hidden.add(uri)
        return uri

    app.visibility = predicate(
        lambda ref, session: session.attributes.get("client_name") != "bob" or ref.key not in hidden
    )
    return app


class TestUpdatesRespectVisibility:
    """A session hears that a resource changed only while it may read that resource."""

    async def test_listen_stream_hears_only_what_it_may_read(self) -> None:
        """2026-07-28: bob listens to both URIs; only the one he can read is announced to him."""
        bob = types.Implementation(name="bob", version="1")
        with serve(watched_app({"test://closed"}).asgi()) as url:
            async with (
                Client(url, client_info=bob) as client,
                client.listen(resource_subscriptions=["test://closed", "test://open"]) as events,
            ):
                await client.call_tool("touch", {"uri": "test://closed"})
                await client.call_tool("touch", {"uri": "test://open"})
                with anyio.fail_after(10):
                    event = await anext(aiter(events))
        assert isinstance(event, ResourceUpdated)
        assert event.uri == "test://open"

    async def test_subscription_goes_quiet_once_hidden(self) -> None:
        """Handshake era: bob subscribed while he could read it; once hidden, he hears nothing."""
        bob = types.Implementation(name="bob", version="1")
        inbox = Inbox()
        with serve(watched_app(set()).asgi()) as url:
            async with inbox.client(url, client_info=bob, mode="legacy") as client:
                await client.subscribe_resource("test://closed")
                await client.subscribe_resource("test://open")
                await client.call_tool("hide", {"uri": "test://closed"})
                await client.call_tool("touch", {"uri": "test://closed"})
                await client.call_tool("touch", {"uri": "test://open"})
                updated = await inbox.wait_for("notifications/resources/updated")
        assert str(updated.params.uri) == "test://open"
        assert "notifications/resources/updated" not in inbox.methods  # none for test://closed
