"""Talking to a server target at the wire: the factory's server, in-memory official clients.

A server target's factory gets the kit's sources and visibility rule and returns its server (see
``SIGNATURES["server"]``); the kit connects the official ``mcp`` client to ``.lowlevel`` in
memory, in both protocol eras, and compares answers as the JSON a transport would carry.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, final

import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from mcp_conformance._contract import LawViolation
from mcp_conformance._kit import Kit
from mcp_conformance._universe import ContentItem, Slot, Vocabulary, collection
from mcp_conformance.faults import MutableSource
from mcp_core.elements import ElementCollection, ElementKind, ElementRef
from mcp_core.visibility import SessionInfo

__all__ = [
    "ERAS",
    "LISTS",
    "Answer",
    "Era",
    "HiddenRefs",
    "ListKind",
    "Served",
    "ask",
    "connect",
    "walk",
]

Era: TypeAlias = Literal["2025-11-25", "2026-07-28"]
ERAS: Final[tuple[Era, Era]] = ("2025-11-25", "2026-07-28")
"""The handshake era (``mode="legacy"``) and the per-request era (the client's default)."""

_RAW: Final = TypeAdapter(dict[str, Any])


@final
@dataclass(frozen=True, slots=True)
class ListKind:
    """One of the four lists: its method, request type, result key and item key."""

    kind: ElementKind
    method: str
    request: Callable[..., Any]
    items: str
    key: str


LISTS: Final[tuple[ListKind, ...]] = (
    ListKind(ElementKind.TOOL, "tools/list", types.ListToolsRequest, "tools", "name"),
    ListKind(
        ElementKind.RESOURCE, "resources/list", types.ListResourcesRequest, "resources", "uri"
    ),
    ListKind(
        ElementKind.RESOURCE_TEMPLATE,
        "resources/templates/list",
        types.ListResourceTemplatesRequest,
        "resourceTemplates",
        "uriTemplate",
    ),
    ListKind(ElementKind.PROMPT, "prompts/list", types.ListPromptsRequest, "prompts", "name"),
)


@final
class HiddenRefs:
    """The kit's visibility rule (a ``UriVisibility``), the same for every session.

    ``hidden`` refs exist for no session; ``narrowed`` (template ref, URI) pairs are templates
    that may not answer that one URI. Its URI decision is independent of its list decision (it
    "admits" URIs of hidden templates too): a server must ask ``is_visible`` first.
    """

    def __init__(
        self,
        hidden: frozenset[ElementRef],
        narrowed: frozenset[tuple[ElementRef, str]] = frozenset(),
    ) -> None:
        self.hidden = hidden
        self.narrowed = narrowed

    def __repr__(self) -> str:
        narrowed = sorted(f"{ref} at {uri!r}" for ref, uri in self.narrowed)
        return f"HiddenRefs({sorted(str(ref) for ref in self.hidden)}, narrowed={narrowed})"

    async def is_visible(self, ref: ElementRef, session: SessionInfo) -> bool:  # noqa: ARG002 -- the protocol's signature
        """Every ref but the hidden ones."""
        return ref not in self.hidden

    async def is_uri_visible(
        self,
        ref: ElementRef,
        uri: str,
        variables: Mapping[str, str],  # noqa: ARG002 -- the protocol's signature
        session: SessionInfo,  # noqa: ARG002 -- the protocol's signature
    ) -> bool:
        """Every template at every URI but the narrowed pairs."""
        return (ref, uri) not in self.narrowed


@final
class Served:
    """A server from the target's factory over one kit source, hiding ``hidden``.

    Templates are also refused at the URIs ``narrowed`` pairs them with.
    """

    def __init__(
        self,
        kit: Kit,
        words: Vocabulary,
        content: Sequence[ContentItem],
        *,
        declared: ElementKind,
        hidden: frozenset[Slot] = frozenset(),
        narrowed: frozenset[tuple[Slot, str]] = frozenset(),
        page_size: int,
    ) -> None:
        self.words = words
        self.collection = collection(words, content, "source 0 v0")
        self.source = MutableSource(self.collection, kinds=declared)
        self.hidden = frozenset(words.ref(slot) for slot in hidden)
        rule = HiddenRefs(self.hidden, frozenset((words.ref(slot), uri) for slot, uri in narrowed))
        self.obj = kit.target.factory([(self.source, 0)], visibility=rule, page_size=page_size)
        self.lowlevel = self.obj.lowlevel  # type: ignore[attr-defined]  # checked when the run started

    def visible(self, content: ElementCollection | None = None) -> dict[ElementKind, set[str]]:
        """The keys each list must show: the content's, of declared kinds, minus the hidden."""
        declared = self.source.declared
        keys: dict[ElementKind, set[str]] = {entry.kind: set() for entry in LISTS}
        for element in self.collection if content is None else content:
            if element.kind & declared and element.ref not in self.hidden:
                keys[element.kind].add(element.ref.key)
        return keys


@asynccontextmanager
async def connect(served: Served, era: Era, **options: Any) -> AsyncIterator[Client]:
    """An official client connected in memory to the served server, in ``era``."""
    mode = "legacy" if era == "2025-11-25" else "auto"
    async with Client(served.lowlevel, mode=mode, cache=None, **options) as client:
        if client.protocol_version != era:
            raise LawViolation(
                f"the server negotiated protocol {client.protocol_version} with a client asking "
                f"for {era}"
            )
        yield client


Answer: TypeAlias = str
"""An answer as the JSON a transport carries: ``{"result": ...}`` or ``{"error": ...}``."""


async def ask(client: Client, request: Any, what: str) -> Answer:
    """Send ``request``; its result or JSON-RPC error, as JSON text (keys in the server's order)."""
    try:
        # A TypeAdapter of a plain dict: the SDK validates the result against the negotiated
        # version, then hands it over as sent (its annotation only names models).
        raw = await client.session.send_request(request, _RAW)  # type: ignore[type-var]  # see above
    except MCPError as exc:
        error = exc.error.model_dump(mode="json", by_alias=True, exclude_none=True)
        return json.dumps({"error": error}, ensure_ascii=False)
    except ValidationError as exc:
        raise LawViolation(
            f"the answer to {what} is not valid MCP {client.protocol_version}: "
            f"{exc.errors()[0].get('msg')} at {exc.errors()[0].get('loc')}"
        ) from None
    return json.dumps({"result": raw}, ensure_ascii=False)


@final
@dataclass(frozen=True, slots=True)
class Walk:
    """A walk of one list: every page's answer, the cursor that fetched it, the keys in order."""

    pages: tuple[Answer, ...]
    cursors: tuple[str | None, ...]
    keys: tuple[str, ...]


async def walk(client: Client, entry: ListKind, *, limit: int) -> Walk:
    """Follow ``nextCursor`` from the first page to the last (at most ``limit`` pages)."""
    pages: list[Answer] = []
    cursors: list[str | None] = []
    keys: list[str] = []
    cursor: str | None = None
    while True:
        if len(pages) >= limit:
            raise LawViolation(
                f"{entry.method} still had a nextCursor after {limit} pages for "
                f"{len(keys)} elements: the walk does not end"
            )
        answer = await ask(
            client,
            entry.request(params=types.PaginatedRequestParams(cursor=cursor)),
            f"{entry.method} (cursor {cursor!r})",
        )
        pages.append(answer)
        cursors.append(cursor)
        decoded: Mapping[str, Any] = json.loads(answer)
        if "error" in decoded:
            raise LawViolation(
                f"{entry.method} page {len(pages)} (cursor {cursor!r}) answered an error: "
                f"{decoded['error']}"
            )
        result = decoded["result"]
        keys.extend(str(item.get(entry.key)) for item in result.get(entry.items, ()))
        cursor = result.get("nextCursor")
        if cursor is None:
            return Walk(tuple(pages), tuple(cursors), tuple(keys))
        if cursor in cursors:
            raise LawViolation(f"{entry.method} handed out cursor {cursor!r} twice: the walk loops")
